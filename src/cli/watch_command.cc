// `edgemem watch SOURCE`: follow a live capture with a status line and
// alerts, then print the analyze summary of everything seen.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/report_file.h"
#include "cli/status_display.h"
#include "report/watch_status.h"
#include "watch/alert_hook.h"
#include "watch/atomic_file.h"
#include "watch/metrics_outputs.h"
#include "watch/watcher.h"

namespace edgemem::cli {
namespace {

// How long hooks still running (a page on its way) may take once the watch has ended.
constexpr std::chrono::seconds kHookGrace{10};

struct WatchArgs {
  AnalyzeArgs trace;
  unsigned baud = 0;
  std::string interval = "1s", for_duration, on_alert, device;
  std::string metrics_listen, metrics_file, otlp;
  std::optional<uint64_t> until;
  uint64_t warm_up = 0;
};

std::vector<TrendView> trend_views(const watch::AlertEngine& engine) {
  std::vector<TrendView> out;
  for (const watch::PoolTrend& t : engine.trends())
    out.push_back({t.pool, t.estimate.bytes_per_inference, t.estimate.p_value, t.estimate.confirmed, t.estimated});
  return out;
}

// The alerts scrolled by as they fired: listed again beside the summary,
// which judges the whole run (a leak alert whose floor stopped rising
// later, for one, has no [LEAK] there). In the order of their counts: a
// fragmentation alert counts the inference end that confirmed it, raised
// at a later tick than others when the input came at once.
void list_alerts(std::vector<watch::Alert> alerts) {
  if (alerts.empty()) return;
  std::stable_sort(alerts.begin(), alerts.end(),
                   [](const watch::Alert& a, const watch::Alert& b) { return a.inference < b.inference; });
  fmt::print(stderr, "edgemem: {} alert{} raised during the watch:\n", alerts.size(), alerts.size() == 1 ? " was" : "s were");
  for (const watch::Alert& alert : alerts)
    fmt::print(stderr, "edgemem:   after {} inference{}: {}\n", alert.inference, alert.inference == 1 ? "" : "s",
               watch::alert_line(alert));
}

int run_watch(const WatchArgs& args) {
  const AnalyzeArgs& a = args.trace;
  FailOn rules;
  try {
    if (a.fail_on) rules = parse_fail_on(*a.fail_on);
  } catch (const std::invalid_argument& e) {
    return fail("watch", e.what());
  }
  auto interval = watch::parse_duration(args.interval);
  if (!interval) return fail("--interval " + args.interval, "expected a duration such as 1s, 500ms, 5m");
  watch::WatchLimits limits{*interval, args.until, std::nullopt};
  if (!args.for_duration.empty()) {
    limits.duration = watch::parse_duration(args.for_duration);
    if (!limits.duration) return fail("--for " + args.for_duration, "expected a duration such as 30s, 10m, 12h, 2d (up to 3650d)");
  }
  if (std::string clash = clashing_outputs({a.path, a.elf}, {{"--html", a.html}, {"--metrics-file", args.metrics_file}});
      !clash.empty())
    return fail(clash);
  // A soak run must not find out after 12 hours that its report cannot be written.
  for (const auto& [option, path] : {std::pair{"--html", a.html}, std::pair{"--metrics-file", args.metrics_file}})
    if (!path.empty())
      if (std::string why = cannot_write_later(path); !why.empty())
        return fail(fmt::format("{} {}", option, path), fmt::format("cannot be written: {}", why));
  if (!args.metrics_file.empty())
    if (std::string why = watch::target_problem(args.metrics_file); !why.empty()) return fail("--metrics-file " + why);
  auto options = trace_session_options(a);
  if (!options) return 2;
  options->analyzer.warm_up_inferences = args.warm_up;

  std::unique_ptr<watch::LiveSource> source;
  try {
    source = watch::open_live_source(a.path, args.baud);
  } catch (const std::exception& e) {
    fmt::print(stderr, "edgemem: {}\n", e.what());
    return 2;
  }
  std::unique_ptr<watch::MetricsOutputs> metrics;
  try {
    metrics = std::make_unique<watch::MetricsOutputs>(
        watch::MetricsTargets{args.metrics_listen, args.metrics_file, args.otlp, args.device});
  } catch (const std::exception& e) {
    fmt::print(stderr, "edgemem: {}\n", e.what());
    return 2;
  }
  if (std::string said = metrics->announcement(); !said.empty()) fmt::print(stderr, "edgemem: {}\n", said);
  catch_interrupts();
  TraceSession session(a.path, *options);
  watch::Watcher watcher(session);
  std::optional<watch::AlertHook> hook;
  if (!args.on_alert.empty()) hook.emplace(args.on_alert, args.device, a.path);

  TraceOutcome outcome;
  {
    StatusDisplay display;
    watch::WatchHandlers handlers;
    handlers.note = [&](const std::string& n) { display.message("edgemem: " + n); };
    handlers.alert = [&](const watch::Alert& alert) {
      display.message(watch::alert_line(alert));
      if (hook) {
        std::string error = hook->run(alert);
        if (!error.empty()) display.message("edgemem: " + error);
      }
    };
    handlers.tick = [&](const TraceRun& run, const watch::AlertEngine& engine) {
      std::vector<TrendView> trends = trend_views(engine);
      display.status(watch_status_line({&run.input, &run.result, trends, engine.raised(), args.warm_up}));
      metrics->publish(run, trends, [&](const std::string& problem) { display.message("edgemem: " + problem); });
    };
    outcome = watcher.run(*source, limits, handlers, [] { return interrupted() != 0; });
    display.clear();
  }
  // Any signal after this one (the one that ended the watch, if any) ends the wait for hooks.
  const int signals_at_end = interrupt_count();
  if (int signal = interrupted(); signal && outcome.run)
    fmt::print(stderr, "edgemem: stopped by signal {}; summary of everything seen\n", signal);
  // "empty input" would read as a file that exists and is empty.
  if (!outcome.run && watcher.received() == 0)
    for (std::string& note : outcome.notes)
      if (note == fmt::format("{}: empty input, expected a trace", a.path))
        note = fmt::format("{}: nothing arrived; no trace to summarise", a.path);
  for (const std::string& note : outcome.notes) fmt::print(stderr, "edgemem: {}\n", note);
  // The summary first: hooks still running (a page on its way) are waited
  // for after it, and not for ever.
  auto wait_for_hooks = [&] {
    if (!hook) return;
    if (size_t n = hook->running())
      fmt::print(stderr, "edgemem: waiting up to {} s for {} --on-alert command{} (Ctrl-C again stops {})\n",
                 kHookGrace.count(), n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
    for (const std::string& failed :
         hook->wait_all(kHookGrace, [signals_at_end] { return interrupt_count() > signals_at_end; }))
      fmt::print(stderr, "edgemem: {}\n", failed);
  };
  if (std::string failed = metrics->finish(); !failed.empty()) fmt::print(stderr, "edgemem: {}\n", failed);
  if (!outcome.run) {
    list_alerts(watcher.alerts().history());
    wait_for_hooks();
    return 2;
  }
  const TraceRun& run = *outcome.run;
  if (a.json)
    fmt::print("{}\n", json_report(run.input, run.result));
  else
    fmt::print("{}", text_report(run.input, run.result));
  std::fflush(stdout);
  list_alerts(watcher.alerts().history());
  bool written = a.html.empty() || write_report_file(a.html, html_report(run.input, run.result), "--html");
  auto broken = broken_rules(rules, run.result);
  for (const auto& b : broken) fmt::print(stderr, "edgemem: fail-on {}\n", b);
  const auto unjudged = unjudged_rules(rules, run.result);
  for (const auto& u : unjudged) fmt::print(stderr, "edgemem: fail-on {}\n", u);
  wait_for_hooks();
  if (!written) return 2;
  if (watcher.alerts().fired() || !broken.empty()) return 1;
  return a.fail_on && unjudged.size() == rule_count(rules) ? 2 : 0;
}

}  // namespace

void add_watch_command(CLI::App& app) {
  auto args = std::make_shared<WatchArgs>();
  AnalyzeArgs& a = args->trace;
  CLI::App* cmd = app.add_subcommand(
      "watch", "Follow a live capture (growing file, -, tcp://HOST:PORT, serial device): status line, alerts, metrics");
  file_name(cmd->add_option("source", a.path,
                            "A file still being written, - for stdin, tcp://HOST:PORT (probe or emulator), or a serial "
                            "device"))
      ->required();
  add_trace_options(*cmd, a);
  cmd->add_flag("--json", a.json, "At the end print the edgemem.analyze/1 JSON document instead of the summary");
  file_name(cmd->add_option("--html", a.html, "At the end also write the HTML report to this file"));
  cmd->add_option("--fail-on", a.fail_on,
                  "Also exit 1 when at the end any of these hold: leak,overflow,guard,lifo,alloc-failure,"
                  "fragmentation=warning|danger");
  cmd->add_option("--baud", args->baud, "Serial device speed (default 115200); the source is then a serial device")
      ->check(CLI::Range(1u, 4000000u));  // 0 was taken as the default in silence
  cmd->add_option("--interval", args->interval, "Time between status lines (500ms, 1s, 1m)")->capture_default_str();
  whole_number_from_one(cmd->add_option("--until", args->until, "Stop once this many inferences have been seen"));
  cmd->add_option("--for", args->for_duration, "Stop after this long (30s, 10m, 12h, 2d)");
  whole_number(cmd->add_option("--warm-up", args->warm_up,
                               "Leave the first N inferences out of the leak trend (a cache or pool that fills at start)"));
  cmd->add_option("--on-alert", args->on_alert,
                  "Shell command run for each alert: EDGEMEM_ALERT, EDGEMEM_POOL, EDGEMEM_VALUE, EDGEMEM_INFERENCE, "
                  "EDGEMEM_MESSAGE, EDGEMEM_DEVICE, EDGEMEM_SOURCE in its environment, the alert line on stdin");
  cmd->add_option("--device", args->device, "Name of the device, for alerts and metrics labels");
  cmd->add_option("--metrics-listen", args->metrics_listen,
                  "Serve /metrics (Prometheus text or OpenMetrics) at HOST:PORT, :PORT or PORT (:0 = any free port)");
  file_name(cmd->add_option("--metrics-file", args->metrics_file,
                            "Rewrite this .prom file (atomically) every interval, for node_exporter's textfile collector"));
  cmd->add_option("--otlp", args->otlp,
                  "Push the metrics as OTLP/HTTP JSON every interval to this collector URL (http://HOST:4318[/v1/metrics])");
  exit_code_help(*cmd,
                 "an alert was raised (leak trend, overflow, guard, failed allocation, fragmentation band, data "
                 "loss) or a --fail-on rule holds at the end; Ctrl-C and SIGTERM end the watch with its summary",
                 "edgemem watch --for 12h --on-alert 'notify-send \"$EDGEMEM_MESSAGE\"' tcp://127.0.0.1:3443");
  cmd->callback([args] { throw CLI::RuntimeError(run_watch(*args)); });
}

}  // namespace edgemem::cli
