// The summary a person reads in ten seconds: findings ordered by how soon
// they take a device down (corruption, failures, leaks, fragmentation), each
// with its numbers, its site and the next thing to try.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "edgemem/analyzer.h"
#include "edgemem/pool_table.h"
#include "edgemem/report.h"
#include "report/site_names.h"
#include "report/style.h"
#include "report/thread_sections.h"
#include "report/units.h"

namespace edgemem {
namespace {

using units::bytes;
using units::decimal;
using units::grouped;

// The bytes of the blocks made before an attach and freed since: the
// preload counts malloc's usable sizes, the eBPF recorder sees only addresses.
std::string freed_before_attach(const DecodeStats& s, bool how_counted) {
  if (s.frees_before_attach && !s.bytes_freed_before_attach)
    return "their sizes not known: the eBPF recorder sees only the address a free is given";
  return bytes(s.bytes_freed_before_attach) + (how_counted ? ", as malloc counts them" : "");
}

// A fragmentation rate, with the digits that keep it on its band's side of
// an edge: 25.25 % is danger, and "25%" beside "danger > 25%" read as an
// error in the band.
std::string pct(double rate) {
  for (int digits = 0; digits <= 9; ++digits) {
    std::string shown = fmt::format("{:.{}f}", rate * 100, digits);
    const double read = std::strtod(shown.c_str(), nullptr) / 100;
    if (fragmentation_band(read) == fragmentation_band(rate) && (read == 0) == (rate == 0)) return shown + "%";
  }
  // Closer than a billionth of a percent: the side is the band's word.
  if (rate * 100 < 1) return "just over 0%";
  return fmt::format("just {} {:.0f}%", fragmentation_band(rate) == Band::danger ? "over" : "under", rate * 100);
}

std::string duration(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.0f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1e3);
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f} min", seconds / 60);
  if (seconds < 172800) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} days", seconds / 86400);
}

// Tags are padded before they are coloured, so columns stay aligned.
void line(std::string& out, std::string_view tag, const std::string& text) {
  std::string pad(tag.size() < 14 ? 14 - tag.size() : 0, ' ');
  std::string coloured = !tag.starts_with('[')                           ? std::string(tag)
                         : tag == "[OK]"                                 ? style::good(tag)
                         : tag == "[NOT CHECKED]" || tag == "[DATA LOST]" ? style::warn(tag)
                                                                         : style::bad(tag);
  out += coloured + pad + text + "\n";
}
void more(std::string& out, const std::string& text) { out += fmt::format("{:<14}{}\n", "", text); }

// The pools other than `named` that a findings list names, each with when
// its first one fell: the lists keep every pool's first, and the line above
// names one pool only.
template <typename Finding>
std::string other_pools(const std::vector<Finding>& list, std::string_view named, bool restarted) {
  std::vector<std::string> shown;
  std::vector<std::string_view> seen{named};
  for (const Finding& x : list) {
    if (std::find(seen.begin(), seen.end(), x.pool) != seen.end()) continue;
    seen.push_back(x.pool);
    if (shown.size() == 3) {
      shown.push_back("...");
      break;
    }
    shown.push_back(fmt::format("'{}' (first at {})", x.pool,
                                x.inference ? units::inference_of_boot(*x.inference, x.boot, restarted)
                                            : fmt::format("time {}", grouped(x.time))));
  }
  return shown.empty() ? "" : fmt::format("also in pool{} {}", seen.size() > 2 ? "s" : "", fmt::join(shown, ", "));
}

std::string ordinal(uint64_t n) {
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return grouped(n) + suffix;
}

// Two significant digits under 1, else one decimal unless whole: 1.5 B per
// inference read "2 B", one failure in 30,000 inferences "0.0 per 1,000".
std::string rate(double per) {
  if (per <= 0) return "0";
  if (per < 1) {
    const int places = per >= 0.01 ? 2 : std::min(9, 1 - static_cast<int>(std::floor(std::log10(per))));
    return fmt::format("{:.{}f}", per, places);
  }
  std::string d = decimal(per, 1);
  if (d.ends_with(".0")) d.resize(d.size() - 2);
  return d;
}
std::string rate_bytes(double per) { return rate(per) + " B"; }

// The headline of one leak: how much, how often, since when, where.
// `boots`: the device's boots in the trace; a leak is judged in the last,
// whose inferences the device numbered anew.
// " from inference 21 on" for a pool whose rise began late in the boot, as a leak's is said.
std::string late_rise_from(const PoolWatermark& w, uint64_t boots) {
  if (!w.late_rise) return "";
  return fmt::format(" from inference {}{} on", grouped(w.late_rise->from_inference),
                     boots > 1 ? fmt::format(" of boot {}", grouped(boots)) : "");
}

std::string leak_headline(const SiteLeak& l, bool marked, const std::string& site, uint64_t boots) {
  if (l.off_inference_thread)
    return fmt::format("{} keeps growing on a thread that marks no inferences: its live blocks were made all through "
                       "that thread's run (no rate per inference)", site);
  // Without markers a structure built up and kept until exit rises as a
  // leak does: the trace shows the rise, not which of the two it is.
  if (!marked)
    return fmt::format("{} rose through the run and its blocks are still live at the end: a leak, or memory kept "
                       "until exit (no inference markers to tell them apart)", site);
  if (!l.growth || !l.bytes_per_inference)
    return fmt::format("{} keeps growing: its lowest live count rose through the trace (no completed "
                       "inferences to give a rate)", site);
  const LeakGrowth& g = *l.growth;
  const std::string of_boot = boots > 1 ? fmt::format(" of boot {}", grouped(boots)) : "";
  const std::string from = g.late_start ? fmt::format(" from inference {}{} on", grouped(g.first_inference), of_boot)
                           : boots > 1 ? fmt::format(" since boot {} began", grouped(boots))
                                       : "";
  std::string stopped;
  if (g.stopped_by_failures())
    stopped = fmt::format(", until inference {}{}: its {} request{} since failed", grouped(*g.stopped_after_inference),
                          of_boot, grouped(g.failed_requests), g.failed_requests == 1 ? "" : "s");
  else if (g.stopped_after_inference)
    stopped = fmt::format(", until inference {}{}: not grown in the {} inference{} since", grouped(*g.stopped_after_inference),
                          of_boot, grouped(g.inferences_since_stop), g.inferences_since_stop == 1 ? "" : "s");
  switch (g.pattern) {
    case LeakPattern::every_inference:
      return fmt::format("{} per inference{} at {}{}", rate_bytes(*l.bytes_per_inference), from, site, stopped);
    case LeakPattern::every_nth:
      return fmt::format("{} every {} inference{} at {}{}", bytes(g.bytes_per_growth), ordinal(g.period), from, site,
                         stopped);
    case LeakPattern::irregular:
      break;
  }
  return fmt::format("{} per inference on average at {} (grew in {} inferences at irregular intervals, first at "
                     "inference {}{}){}",
                     rate_bytes(*l.bytes_per_inference), site, grouped(g.growth_inferences),
                     grouped(g.first_inference), of_boot, stopped);
}

std::string rate_or_unknown(const std::optional<double>& rate) { return rate ? pct(*rate) : "not measured"; }

}  // namespace

std::string text_report(const InputSummary& in, const AnalysisResult& r) {
  std::string out;
  const DecodeStats& s = in.stats;
  // A recording names the first thread that allocated (the program's main
  // one, as a rule; a main thread that only waits does not allocate): a
  // build's dozen FILE.PID recordings are told apart by it.
  const std::string process = !r.threads.threads.empty() && r.threads.threads.front().tid != 0 &&
                                      !r.threads.threads.front().name.empty()
                                  ? fmt::format(", first allocating thread {} ({})", r.threads.threads.front().name,
                                                r.threads.threads.front().tid)
                                  : "";
  out += fmt::format("edgemem: {} ({}{}, {} event{}, {} inference{}{})\n\n", in.path, in.format,
                     s.compression.empty() ? "" : fmt::format(" in {}, {} compressed", s.compression, bytes(s.compressed_bytes)),
                     grouped(s.events), s.events == 1 ? "" : "s", grouped(r.inferences), r.inferences == 1 ? "" : "s",
                     process);

  // Recorded from an attach: what came before is not in the numbers.
  if (s.attached)
    line(out, "Attached",
         fmt::format("the recording began with an attach (record --pid): blocks the process made before it are not "
                     "seen, so peak, live and leaked bytes are of the blocks made since; {} frees ({}) were of "
                     "blocks made before it and are left out",
                     grouped(s.frees_before_attach), freed_before_attach(s, true)));

  // Lost data comes before any verdict: it can hide a leak or fake one.
  const Check loss = data_loss_check(s, r.counts);
  if (loss.status == CheckStatus::found) {
    line(out, "[DATA LOST]", loss.reason);
    more(out, "-> the findings below come from the data that arrived: counts may be low and frees unmatched");
    if (s.overflows) more(out, "-> lower the event rate or raise the SWO clock");
    if (s.dropped_records)
      more(out, "-> a device: drain its trace buffer more often or make it larger; a Linux recording: the process was "
                "killed while writing, or the file is cut short");
    if (s.recording_stopped)
      more(out, "-> record again with the output on a path the program can still open (no chroot, no setuid "
                "between), within its file size limit");
    if (s.first_problem && (s.corrupt_bytes || s.malformed_lines))
      more(out, fmt::format("first problem at {}{}: {}", s.first_problem->line ? "line " : "offset ",
                            s.first_problem->line ? s.first_problem->line : s.first_problem->offset, s.first_problem->what));
  }
  // Names from another build would point at the wrong functions and lines.
  if (!s.modules_changed.empty()) {
    const bool one = s.modules_changed.size() == 1;
    line(out, "Symbols", fmt::format("{} not the build{} that ran (build ID differs from the recording's): {}; {} frames "
                                     "are named by offset", one ? "this file is" : "these files are", one ? "" : "s",
                                     fmt::join(s.modules_changed, ", "), one ? "its" : "their"));
    more(out, "-> analyse before rebuilding or upgrading, or put the binaries that ran back at these paths");
  }
  int problems = 0;

  for (const auto& o : r.overflows) {
    if (problems >= 3 && &o != &r.overflows.front()) break;
    ++problems;
    if (o.site == kSummaryOverflowSite) {
      line(out, "[OVERFLOW]", fmt::format("'{}' used {} of its {} (summary records, time {}): {} past the end", o.pool,
                                          bytes(o.size), bytes(o.arena_size), grouped(o.time), bytes(o.over_by)));
    } else if (o.site == kUsageOverflowSite) {
      line(out, "[OVERFLOW]", fmt::format("'{}' held {} live in its {} (time {}): {} more than it has; its size is "
                                          "larger than stated, or frees were lost",
                                          o.pool, bytes(o.size), bytes(o.arena_size), grouped(o.time),
                                          bytes(o.over_by)));
    } else {
      line(out, "[OVERFLOW]",
           fmt::format("{} requested {} at offset {} of {} '{}' ({}): only {} left, {} past the end",
                       shown_site(o.site), bytes(o.size), grouped(o.offset), bytes(o.arena_size), o.pool,
                       "time " + grouped(o.time), bytes(o.available), bytes(o.over_by)));
    }
    if (&o == &r.overflows.front())
      more(out, o.site == kUsageOverflowSite
                    ? "-> give the pool its real size (POOL size=, or --arena-size), or look for the frees the trace lost"
                    : "-> writes past the arena corrupt what the linker placed after it; enlarge the arena or split the "
                      "buffer");
  }
  // A found check's limits go under its own finding.
  auto found_note = [&](const char* name, const Check& c) {
    if (c.status == CheckStatus::found && !c.reason.empty()) more(out, fmt::format("({}: {})", name, c.reason));
  };
  found_note("overflow", r.checks.overflow);
  if (r.overflow_count > r.overflows.size())
    more(out, fmt::format("({} overflows in all)", grouped(r.overflow_count)));
  if (r.guard_failure_count) {
    ++problems;
    const auto& g = r.guard_failures.front();
    std::string when = g.inference ? units::inference_of_boot(*g.inference, g.boot, r.restarts.total > 0)
                                   : fmt::format("time {}", grouped(g.time));
    line(out, "[GUARD]", fmt::format("sentinel corrupted in {} of {} checks, first at {} (pool '{}')",
                                     grouped(r.guard_failure_count), grouped(r.guard_checks), when, g.pool));
    if (std::string others = other_pools(r.guard_failures, g.pool, r.restarts.total > 0); !others.empty()) more(out, others);
    more(out, fmt::format("-> something wrote past its buffer; check the allocations just before that {}",
                          g.inference ? "inference" : "time"));
  }
  found_note("guard failure", r.checks.guards);

  const FragmentationResult& f = r.fragmentation;
  bool fragmentation_failure_shown = false;
  for (const auto& x : f.failures) {
    if (!x.fragmentation) continue;
    ++problems;
    fragmentation_failure_shown = true;
    line(out, "[ALLOC FAIL]",
         fmt::format("{} request to '{}' failed with {} free: largest free block {} (fragmentation {})", bytes(x.size),
                     x.pool, bytes(*x.total_free), bytes(*x.largest_free),
                     pct(fragmentation_rate(*x.total_free, *x.largest_free))));
    // A trace sees requests, not a heap's chunks: each live block's header
    // (8 B in newlib's malloc and FreeRTOS's heap_4) counts as free here.
    // When those would leave less than the request, it may be exhaustion.
    constexpr uint64_t kHeader = 8;
    const auto pool = std::find_if(r.pools.begin(), r.pools.end(), [&](const PoolSummary& p) { return p.name == x.pool; });
    if (pool != r.pools.end() && pool->kind == PoolKind::heap && x.live_blocks > 0 &&
        *x.total_free < x.size + kHeader * x.live_blocks)
      more(out, fmt::format("free as the trace counts it, between the requested sizes: with an allocator's header of "
                            "{} B a block (newlib, FreeRTOS heap_4) the {} live blocks leave {} free, less than the "
                            "request: the heap may simply be full",
                            kHeader, grouped(x.live_blocks),
                            bytes(*x.total_free > kHeader * x.live_blocks ? *x.total_free - kHeader * x.live_blocks : 0)));
    more(out, "-> reserve the largest shape once, or give variable-size buffers their own region");
    break;
  }
  if (f.alloc_failures) {
    const std::string per_1000 = f.failures_per_1000_inferences
                                     ? fmt::format(", {} per 1,000 inferences", rate(*f.failures_per_1000_inferences))
                                     : "";
    // The count, unless it would only repeat the one failure shown above.
    if (!fragmentation_failure_shown || f.alloc_failures > 1) {
      line(out, "[ALLOC FAIL]", fmt::format("{} failed allocation{}{}", grouped(f.alloc_failures),
                                            f.alloc_failures == 1 ? "" : "s", per_1000));
      if (fragmentation_failure_shown) {
        const auto shown = std::find_if(f.failures.begin(), f.failures.end(), [](const AllocFailure& x) { return x.fragmentation; });
        if (std::string others = other_pools(f.failures, shown->pool, r.restarts.total > 0); !others.empty())
          more(out, others);
      }
      // Which request: the count alone named no pool, size or site.
      if (!fragmentation_failure_shown && !f.failures.empty()) {
        const AllocFailure& x = f.failures.front();
        const auto pool = std::find_if(r.pools.begin(), r.pools.end(), [&](const PoolSummary& p) { return p.name == x.pool; });
        const bool too_big = pool != r.pools.end() && pool->size && x.size > pool->size;
        more(out, fmt::format("{}{} to '{}'{}{}{}", f.alloc_failures == 1 ? "" : "the first: ", bytes(x.size), x.pool,
                              x.site.empty() ? "" : " at " + x.site,
                              x.inference ? " in " + units::inference_of_boot(*x.inference, x.boot, r.restarts.total > 0) : "",
                              too_big ? fmt::format(", larger than the whole pool ({})", bytes(pool->size))
                              : x.total_free ? fmt::format(", with {} free", bytes(*x.total_free))
                                             : ""));
        if (std::string others = other_pools(f.failures, x.pool, r.restarts.total > 0); !others.empty()) more(out, others);
      }
    }
    // A refusal the trace's own free blocks could have served: the trace
    // does not tell the allocator's whole story, and says so.
    for (const auto& x : f.failures)
      if (x.largest_free && *x.largest_free >= x.size && x.size > 0) {
        more(out, fmt::format("a request of {} failed beside a free block of {}, as the trace tells it: the allocator "
                              "may not merge neighbouring free blocks as edgemem does, need more than the request "
                              "(headers, alignment), or hold blocks the trace does not show",
                              bytes(x.size), bytes(*x.largest_free)));
        break;
      }
  }
  // Fragmentation found by a failure alone (no [FRAGMENT] line below): its notes go here.
  const bool fragment_line = f.band && *f.band != Band::healthy;
  auto fragmentation_notes = [&] {
    if (r.checks.fragmentation.status != CheckStatus::found) return;
    found_note("fragmentation problem", r.checks.fragmentation);
    for (const auto& p : f.pools)
      if (!p.known_extent)
        more(out, fmt::format("'{}' fragmentation over the span its blocks touched: {} at worst, {} at the end "
                              "(not judged)",
                              p.pool, pct(p.max_rate), pct(p.final_rate)));
  };
  if (!fragment_line) fragmentation_notes();

  const bool marked = r.inferences > 0 || !r.inference_marks.spans.empty();
  std::vector<std::string_view> leak_sites;
  for (size_t i = 0; i < r.leaks.size() && i < 5; ++i) leak_sites.push_back(r.leaks[i].site);
  const std::vector<std::string> leak_names = shown_sites(leak_sites);
  // Listed while the leak check could not judge them (a recording cut
  // off): growing up to the cut, not known leaks.
  const bool leaks_judged = r.checks.leaks.status != CheckStatus::not_checked;
  for (size_t i = 0; i < r.leaks.size() && i < 5; ++i) {
    const SiteLeak& l = r.leaks[i];
    ++problems;
    line(out, leaks_judged ? "[LEAK]" : "[LEAK?]", leak_headline(l, marked, leak_names[i], r.restarts.total + 1));
    std::string blocks = fmt::format("{} block{}", grouped(l.count), l.count == 1 ? "" : "s");
    if (l.block_size) blocks += fmt::format(" of {}", bytes(l.block_size));
    std::string hint = l.type_hint.empty() ? "" : fmt::format(" ({})", l.type_hint);
    more(out, fmt::format("{} live in {}{}; pool '{}'; this group over the whole trace: {} allocations, {} frees", bytes(l.bytes),
                          blocks, hint, l.pool, grouped(l.allocs), grouped(l.frees)));
  }
  if (r.leaks.size() > 5)
    more(out, fmt::format("(and {} more {} group{})", r.leaks.size() - 5, leaks_judged ? "leaking" : "such",
                          r.leaks.size() == 6 ? "" : "s"));
  if (!r.leaks.empty() && !leaks_judged)
    more(out, "-> [LEAK?]: growing up to where the file was cut, not judged leaks: the rest of the run, where their "
              "blocks may be freed, is not in the file (see [NOT CHECKED] leak)");
  // A device in summary mode sends no blocks: a pool's steady growth is the finding.
  for (const PoolWatermark* leaking : summary_mode_leaks(r)) {
    const PoolWatermark& w = *leaking;
    if (w.growing()) {
      ++problems;
      line(out, "[LEAK]", fmt::format("pool '{}' grows {} per inference{} ({}; summary records name no site)",
                                      w.pool, rate_bytes(w.growth_rate()), late_rise_from(w, r.restarts.total + 1),
                                      to_string(w.shape)));
    } else if (w.stopped_growing()) {
      ++problems;
      line(out, "[LEAK]", fmt::format("pool '{}' grew {} in {} rises until inference {}, not since ({}; summary "
                                      "records name no site)",
                                      w.pool, bytes(static_cast<uint64_t>(w.stairs.step_bytes * static_cast<double>(w.stairs.steps) + 0.5)),
                                      grouped(w.stairs.steps), grouped(*w.grew_until_inference), to_string(w.shape)));
    } else {  // irregular, its floor rising: the test watch raises its leak alert on, so the two agree
      const FloorTrend& t = *w.floor_trend;
      ++problems;
      line(out, "[LEAK]",
           fmt::format("pool '{}' grows {} per inference over the run (irregular: its lowest usage in each "
                       "window of inferences rose {} per inference over the {} to inference {}, p {}, above "
                       "any earlier; summary records name no site)",
                       w.pool, rate_bytes(w.slope > 0 ? w.slope : t.bytes_per_inference),
                       rate_bytes(t.bytes_per_inference), grouped(t.inferences),
                       t.at_inference, t.p_value < 1e-15 ? "< 1e-15" : fmt::format("= {:.1e}", t.p_value)));
    }
  }
  // Growth with no leaking group in a pool: blocks that get bigger and are
  // freed, or more of them kept.
  auto growth = [&](const std::string& pool, double rate, std::string_view why) {
    ++problems;
    // A leak check that could not judge the groups found none, nor none
    // leaking. The growth is the latest boot's, and so are its groups.
    // Where a boot before leaked, the check's line is a [LEAK] one.
    const Check& own = r.restarts.total ? r.restarts.latest_boot : r.checks.leaks;
    const std::string unjudged =
        r.checks.leaks.status == CheckStatus::not_checked
            ? std::string("and the leak check could not judge its groups (see [NOT CHECKED] leak)")
            : fmt::format("and the leak check could not judge the latest boot's groups ({})", own.reason);
    line(out, "[GROWTH]", fmt::format("pool '{}' use grows {} per inference{}, {}{}",
                                      pool, rate_bytes(rate), why.empty() ? "" : fmt::format(" ({})", why),
                                      own.status != CheckStatus::not_checked
                                          ? "yet no group of blocks leaks: live blocks get bigger or more of them are kept"
                                          : unjudged,
                                      std::any_of(r.pools.begin(), r.pools.end(),
                                                  [&](const PoolSummary& p) { return p.name == pool && p.size == 0; })
                                          ? " (no pool size: no forecast)"
                                          : ""));
  };
  if (r.exhaustion_forecast) {
    const Forecast& fc = *r.exhaustion_forecast;
    // Growth with no leaking group in that pool (blocks that get bigger and
    // are freed, or a summary-mode device): said as growth, not as a leak.
    const bool leak_shown =
        std::any_of(r.leaks.begin(), r.leaks.end(), [&](const SiteLeak& l) { return l.pool == fc.pool; }) ||
        (r.leaks.empty() && r.counts.summaries > 0);
    if (!leak_shown && !fc.already_exhausted) growth(fc.pool, fc.bytes_per_inference, "");
    std::string when = fc.seconds ? fmt::format(" (about {})", duration(*fc.seconds)) : "";
    if (fc.already_exhausted)
      more(out, fmt::format("-> '{}' is already exhausted: it overflowed or refused a request (see above)", fc.pool));
    else if (fc.inferences == 0)
      more(out, fmt::format("-> '{}' is already exhausted at {}/inference", fc.pool, rate_bytes(fc.bytes_per_inference)));
    else
      more(out, fmt::format("-> '{}' runs out in {} more inferences{} at {}/inference", fc.pool,
                            grouped(fc.inferences), when, rate_bytes(fc.bytes_per_inference)));
  }
  // The same growth in a pool without the forecast (of unknown size, as
  // every pool of a Linux recording, or not the first to run out) was not
  // said at all.
  if (r.counts.summaries == 0)
    for (const auto& w : r.watermarks) {
      if (w.growing() && !(r.exhaustion_forecast && r.exhaustion_forecast->pool == w.pool) &&
          std::none_of(r.leaks.begin(), r.leaks.end(), [&](const SiteLeak& l) { return l.pool == w.pool; }))
        growth(w.pool, w.growth_rate(), fmt::format("{}{}", to_string(w.shape), late_rise_from(w, r.restarts.total + 1)));
    }
  // Boots before the latest, judged as each went down: the leak that made a
  // device restart is often in the boot before the capture's last. Past the
  // restarts kept, the boot that leaked the most bytes stands for the rest.
  size_t earlier_shown = 0, earlier_listed = 0;
  auto earlier_boot = [&](const Restart& boot) {
    earlier_listed += boot.leaking_groups;
    std::vector<std::string_view> sites;
    for (const SiteLeak& l : boot.leaks) sites.push_back(l.site);
    const std::vector<std::string> names = shown_sites(sites);
    const std::string ended =
        boot.during_inference  ? fmt::format("it went down during inference {}, ", grouped(*boot.during_inference))
        : boot.after_inference ? fmt::format("it went down after inference {}, ", grouped(*boot.after_inference))
        : marked               ? std::string("it went down before its first inference, ")
                               : std::string();
    for (size_t i = 0; i < boot.leaks.size() && earlier_shown < 5; ++i, ++earlier_shown) {
      const SiteLeak& l = boot.leaks[i];
      ++problems;
      line(out, "[LEAK]", fmt::format("{}, in boot {} ({}{} in use)", leak_headline(l, marked, names[i], 0),
                                      grouped(boot.boot), ended, bytes(boot.bytes_in_use)));
      more(out, fmt::format("{} live in {} block{} when it went down; pool '{}'", bytes(l.bytes), grouped(l.count),
                            l.count == 1 ? "" : "s", l.pool));
    }
  };
  uint64_t kept_leaking = 0;
  for (const Restart& boot : r.restarts.kept)
    if (boot.leak_check.status == CheckStatus::found) {
      ++kept_leaking;
      earlier_boot(boot);
    }
  if (kept_leaking == 0 && r.restarts.most_leaked) earlier_boot(*r.restarts.most_leaked);
  if (r.restarts.leaking_boots > std::max<uint64_t>(kept_leaking, 1) || earlier_listed > earlier_shown)
    more(out, fmt::format("({} before the latest leaked, {} of their leaking groups shown; the JSON's restarts.kept[] "
                          "has {})",
                          units::counted(r.restarts.leaking_boots, "boot", "boots"), grouped(earlier_shown),
                          r.restarts.total > Restarts::kKept
                              ? fmt::format("the first {} restarts and up to {} groups of each", Restarts::kKept,
                                            Restart::kLeaksKept)
                              : fmt::format("up to {} groups of each", Restart::kLeaksKept)));
  // Per inference only where inferences are marked (a recording of perl read this too).
  if (((!r.leaks.empty() && leaks_judged) || earlier_shown > 0) && marked)
    more(out, "-> free what an inference allocates before it ends, or allocate it once before the first (TFLite "
              "Micro: in Prepare, not Invoke)");
  else if (!r.leaks.empty() && leaks_judged)
    more(out, "-> free each block of these groups once it is no longer used, or make it once and reuse it");
  for (const auto& w : r.watermarks)
    if (w.shape == Shape::stair)
      more(out, w.grew_until_inference
                    ? fmt::format("   '{}' rose in steps: {} steps of {:.0f} B every {:.0f} inferences, until inference {}",
                                  w.pool, w.stairs.steps, w.stairs.step_bytes, w.stairs.period_inferences,
                                  grouped(*w.grew_until_inference))
                    : fmt::format("   '{}' rises in steps: {} steps of {:.0f} B every {:.0f} inferences", w.pool,
                                  w.stairs.steps, w.stairs.step_bytes, w.stairs.period_inferences));
  found_note("leak", r.checks.leaks);

  if (fragment_line) {
    ++problems;
    line(out, "[FRAGMENT]", fmt::format("{} at worst, {} at the end, {} failed allocation{}: {} "
                                        "(healthy < 10%, warning 10-25%, danger > 25%)",
                                        rate_or_unknown(f.max_rate), rate_or_unknown(f.final_rate),
                                        grouped(f.alloc_failures), f.alloc_failures == 1 ? "" : "s",
                                        to_string(*f.band)));
    for (const auto& p : f.pools)
      if (p.known_extent && p.final_rate > 0)
        more(out, fmt::format("'{}': {} free, largest block {}", p.pool, bytes(p.total_free), bytes(p.largest_free)));
    fragmentation_notes();
  }
  if (r.lifo.violations) {
    ++problems;
    std::string site = r.lifo.sites.empty() ? "?" : shown_site(r.lifo.sites.front().site);
    line(out, "[LIFO]", fmt::format("{} arena frees out of stack order (first culprit {}): up to {} stranded in one arena, {} at the end",
                                    grouped(r.lifo.violations), site, bytes(r.lifo.max_stranded_bytes),
                                    bytes(r.lifo.final_stranded_bytes)));
    more(out, "-> free arena buffers in reverse order of allocation; counts can balance while the water mark stays up");
  }
  found_note("LIFO violation", r.checks.lifo);

  // Every check is found (above), clean or not checked, and says which.
  const std::pair<const char*, const Check*> checks[] = {{"leak", &r.checks.leaks},
                                                         {"overflow", &r.checks.overflow},
                                                         {"guard failure", &r.checks.guards},
                                                         {"fragmentation problem", &r.checks.fragmentation},
                                                         {"LIFO violation", &r.checks.lifo}};
  std::vector<std::string> clean, clean_notes;
  // Pools of unknown extent: measured, not judged; said beside the fragmentation check's own line.
  std::vector<std::string> span_notes;
  for (const auto& p : f.pools)
    if (!p.known_extent)
      span_notes.push_back(fmt::format("'{}' fragmentation over the span its blocks touched: {} at worst, {} at the "
                                       "end (not judged)",
                                       p.pool, pct(p.max_rate), pct(p.final_rate)));
  for (const auto& [name, c] : checks) {
    const bool spans = c == &r.checks.fragmentation;
    if (c->status == CheckStatus::not_checked) {
      line(out, "[NOT CHECKED]", fmt::format("{}: {}", name, c->reason));
      if (spans) for (const auto& n : span_notes) more(out, n);
    } else if (c->status == CheckStatus::clean) {
      clean.emplace_back(name);
      if (!c->reason.empty()) clean_notes.push_back(fmt::format("({}: {})", name, c->reason));
      if (spans) clean_notes.insert(clean_notes.end(), span_notes.begin(), span_notes.end());
    }
  }
  if (!clean.empty()) {
    std::string names = clean.back();
    if (clean.size() > 1) {
      names.clear();
      for (size_t i = 0; i + 1 < clean.size(); ++i) names += (i ? ", " : "") + clean[i];
      names += " or " + clean.back();
    }
    line(out, "[OK]", fmt::format("no {} found{}", names,
                                  loss.status == CheckStatus::found ? " in the data that arrived (see [DATA LOST])" : ""));
    for (const auto& n : clean_notes) more(out, n);
  }

  out += "\n";
  // Summary records: what is proven, and the bound each pool's own peak sets.
  const std::string at_least = r.peak.exact ? "" : "at least ";
  out += fmt::format("Peak          {}{}", at_least, bytes(r.peak.bytes));
  // A device numbers each boot's inferences anew: the number alone is ambiguous.
  const std::string of_boot = r.restarts.total ? fmt::format(" of boot {}", grouped(r.peak.boot)) : "";
  if (r.peak.inference)
    out += fmt::format(" at inference {}{}", grouped(*r.peak.inference), of_boot);
  else if (r.inferences) {
    const auto& spans = r.inference_marks.spans;
    const bool after_first = !spans.empty() && spans.front().begin_time && r.peak.time > *spans.front().begin_time;
    const bool after_last = !spans.empty() && r.inference_marks.dropped == 0 && spans.back().end_time &&
                            r.peak.time > *spans.back().end_time;
    out += after_last ? " after the last inference" : after_first ? " between inferences" : " before the first inference";
    out += of_boot;
  }
  if (r.peak.at_most)
    out += fmt::format(", at most {} (the pools' own peaks added: summary records do not say when each was)",
                       bytes(*r.peak.at_most));
  if (r.inferences)
    out += fmt::format("; per inference {}{} .. {} (mean {})", at_least, bytes(r.peak.min_inference_peak),
                       bytes(r.peak.max_inference_peak),
                       bytes(static_cast<uint64_t>(std::llround(r.peak.mean_inference_peak))));
  out += "\n";
  // After an attach the peak is of the blocks made since, not the process's heap.
  if (s.attached)
    more(out, s.frees_before_attach
                  ? fmt::format("of blocks made since the attach only: the process also held blocks made before it, "
                                "{} of them ({}) freed during the recording, so its heap held more than this",
                                grouped(s.frees_before_attach), freed_before_attach(s, false))
                  : std::string("of blocks made since the attach only: blocks the process made before it are not "
                                "seen, so its heap may have held more than this"));
  auto blocks = [](uint64_t n) { return n == 1 ? "block " : "blocks"; };
  // Three rows and the rest in one; a rest of one holder is shown as itself.
  const size_t named = r.peak.live_at_peak.size() <= 4 ? r.peak.live_at_peak.size() : 3;
  std::vector<std::string_view> peak_sites;
  for (size_t i = 0; i < named; ++i) peak_sites.push_back(r.peak.live_at_peak[i].site);
  const std::vector<std::string> peak_names = shown_sites(peak_sites);
  for (size_t i = 0; i < peak_names.size(); ++i) {
    const PeakHolder& h = r.peak.live_at_peak[i];
    const bool no_block = h.site == kBelowArenaTop;
    more(out, fmt::format("{:>12} in {:>5} {}  {}", bytes(h.bytes), no_block ? "no" : grouped(h.count),
                          no_block ? "block " : blocks(h.count), no_block ? h.site : peak_names[i]));
  }
  // The rows shown add up to the peak: the rest in one.
  if (r.peak.live_at_peak.size() > named) {
    uint64_t rest_bytes = 0, rest_count = 0;
    for (size_t i = named; i < r.peak.live_at_peak.size(); ++i) {
      rest_bytes += r.peak.live_at_peak[i].bytes;
      rest_count += r.peak.live_at_peak[i].count;
    }
    more(out, fmt::format("{:>12} in {:>5} {}  (every other site)", bytes(rest_bytes), grouped(rest_count),
                          blocks(rest_count)));
  }
  for (const auto& p : r.pools) {
    std::string size = p.size ? bytes(p.size) : "size unknown";
    std::string margin = p.peak_margin_pct ? fmt::format(", margin {}%", units::percent_value(*p.peak_margin_pct)) : "";
    const std::string live = p.live_count ? fmt::format("{} live block{} at the end", grouped(*p.live_count),
                                                        *p.live_count == 1 ? "" : "s")
                                          : "live blocks not known (summary records count none)";
    line(out, "Pool", fmt::format("'{}' ({}, {}): peak {}{}, {}", p.name, to_string(p.kind), size, bytes(p.peak_bytes),
                                  margin, live));
  }
  if (r.counts.placements)
    line(out, "Placement", fmt::format("{} event{} in '{}' say where TFLite Micro put its tensors inside the arena "
                                       "head; not counted again as memory (--model compares them with edgemem's plan)",
                                       grouped(r.counts.placements), r.counts.placements == 1 ? "" : "s",
                                       kTensorPlacementPool));
  for (LiveReason why : {LiveReason::before_first_inference, LiveReason::not_growing, LiveReason::kept_by_c_runtime}) {
    uint64_t total = 0, groups = 0;
    const PersistentBlock* largest = nullptr;
    for (const auto& p : r.persistent)
      if (p.reason == why) {
        total += p.bytes;
        ++groups;
        if (!largest) largest = &p;
      }
    if (!largest) continue;
    if (why == LiveReason::before_first_inference)
      line(out, "Persistent", fmt::format("{} made before the first inference (not leaks), largest: {}", bytes(total),
                                          shown_site(largest->site)));
    else if (why == LiveReason::kept_by_c_runtime)
      line(out, "C runtime", fmt::format("{} in {} group{} kept by libc or the loader for itself (thread stacks and TLS, "
                                         "stdio buffers, locale data, dlopen; not the program's leaks), largest: {}",
                                         bytes(total), grouped(groups), groups == 1 ? "" : "s", shown_site(largest->site)));
    else if (r.inferences > 0)
      // Not "does not grow": a leak that stopped half-way grew, then held.
      line(out, "Live at end", fmt::format("{} in {} group{} whose live count is not growing in the second half of "
                                           "the run (a working set, or growth that stopped: not judged leaks), "
                                           "largest: {}", bytes(total), grouped(groups), groups == 1 ? "" : "s",
                                           shown_site(largest->site)));
    else  // a burst never freed (a table loaded once, or pointers dropped at once) reads the same
      line(out, "Live at end", fmt::format("{} in {} group{} that did not rise through the run: a working set, memory "
                                           "kept until exit, or blocks lost in one burst (without inference markers "
                                           "the trace cannot tell), largest: {}", bytes(total), grouped(groups),
                                           groups == 1 ? "" : "s", shown_site(largest->site)));
  }
  out += threads_text(r.threads);
  out += temporaries_text(r.temporaries);
  if (r.sizes.aligned_requests && r.sizes.padding_bytes > r.sizes.padding_bytes_at_8)
    line(out, "Alignment", fmt::format("{} of padding at up to {}-byte alignment; at most 8-byte alignment would need {}",
                                       bytes(r.sizes.padding_bytes), r.sizes.max_align, bytes(r.sizes.padding_bytes_at_8)));
  if (s.skipped_lines)
    line(out, "Input", fmt::format("{} unrelated lines skipped{}", grouped(s.skipped_lines),
                                   s.markers_dropped ? fmt::format(" ({} of them one-word lines past the cap on "
                                                                   "distinct marks, not kept as marks)",
                                                                   grouped(s.markers_dropped))
                                                     : ""));
  if (s.device_restarts) {
    // What the device was doing when it went down: the first clue to why.
    std::string when;
    // A pool told by summary records is known as of its latest one.
    const bool summarised = std::any_of(r.pools.begin(), r.pools.end(), [](const PoolSummary& p) { return !p.live_count; });
    const size_t shown = std::min<size_t>(r.restarts.kept.size(), 3);
    for (size_t i = 0; i < shown; ++i) {
      const Restart& x = r.restarts.kept[i];
      when += i ? "; " : ": ";
      if (x.during_inference) when += fmt::format("during inference {} (it never ended)", grouped(*x.during_inference));
      else if (x.after_inference) when += fmt::format("after inference {}", grouped(*x.after_inference));
      else when += "before the first inference";
      when += fmt::format(" with {} in use{}", bytes(x.bytes_in_use), summarised ? " at the latest summary record" : "");
    }
    if (r.restarts.total > shown) when += fmt::format("; {} more", grouped(r.restarts.total - shown));
    line(out, "Input", fmt::format("the device started again {} time{} (its capture library began anew: a second emt "
                                   "HEADER or [MEM] BOOT line){}; every pool was reset there, "
                                   "and time continues from the boot before",
                                   grouped(s.device_restarts), s.device_restarts == 1 ? "" : "s", when));
  }
  if (r.overlapping_inferences)
    line(out, "Inferences", fmt::format("{} began on one thread while another thread's was open: inferences ran at once "
                                        "on several threads; each is counted, ended by its own thread, but the "
                                        "per-inference numbers (leak per inference, peaks, forecast) take them in the "
                                        "order they end, and what one holds at its end includes the others still "
                                        "running; mark one thread's inferences to keep them apart",
                                        grouped(r.overlapping_inferences)));
  if (s.time_went_back)
    line(out, "Input", fmt::format("the stamps went back {} time{}, first at line {} (a restart or a corrupt stamp): "
                                   "later times continue from the last one",
                                   grouped(s.time_went_back), s.time_went_back == 1 ? "" : "s", s.time_went_back_line));
  return out;
}

}  // namespace edgemem
