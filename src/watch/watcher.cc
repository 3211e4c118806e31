#include "watch/watcher.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace edgemem::watch {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Short enough that Ctrl-C and --for are answered at once.
constexpr milliseconds kMaxWait{100};
constexpr size_t kUntilSlice = 256;
constexpr size_t kJudgeEvery = 4096;

Watcher::Watcher(TraceSession& session) : session_(session) {
  session_.analyzer().add_observer(engine_);
  session_.decode_as_read();
}

void Watcher::deliver(const WatchHandlers& handlers) {
  for (const Alert& a : engine_.take())
    if (handlers.alert) handlers.alert(a);
}

TraceOutcome Watcher::run(LiveSource& source, const WatchLimits& limits, const WatchHandlers& h,
                          const std::function<bool()>& stop) {
  auto note = [&](const std::string& text) {
    if (h.note) h.note(text);
  };
  std::vector<uint8_t> buffer(64 * 1024);
  const auto start = Clock::now();
  auto next_tick = start + limits.interval;
  bool told_undecided = false, ended = false;
  size_t unjudged = 0, judge_after = kUntilSlice;  // bytes fed since the format was last judged (--until)
  auto reached = [&] { return limits.until_inferences && engine_.inferences() >= *limits.until_inferences; };
  // Decompressed output, and the bytes held back to tell the format, are fed in slices too.
  if (limits.until_inferences) session_.stop_when(reached);
  while (session_.accepting()) {
    if (stop && stop()) break;
    auto now = Clock::now();
    auto wait = std::clamp(std::chrono::duration_cast<milliseconds>(next_tick - now), milliseconds(0), kMaxWait);
    SourceRead r = source.read(buffer, wait);
    for (const std::string& n : r.notes) note(n);
    received_ += r.bytes;
    if (r.restarted) session_.cut_stream();
    // With --until, fed in slices so the watch stops close to the N-th inference, not a 64 KiB read later.
    const size_t slice = limits.until_inferences ? kUntilSlice : buffer.size();
    // (and the format decided as soon as the bytes show it, rather than a 64 KiB sniffing window later).
    for (size_t at = 0; at < r.bytes && !reached() && session_.accepting(); at += slice) {
      session_.feed({buffer.data() + at, std::min(slice, r.bytes - at)});
      // Judging the held-back bytes reads them all: after 256 bytes, then
      // after twice as many each time up to every 4 KiB, not every slice.
      if (limits.until_inferences && (unjudged += slice) >= judge_after) {
        unjudged = 0;
        judge_after = std::min(2 * judge_after, kJudgeEvery);
        session_.start_if_known();
      }
    }
    deliver(h);
    if (reached()) {
      note(fmt::format("{} inference{} seen (--until {})", engine_.inferences(), engine_.inferences() == 1 ? "" : "s",
                       *limits.until_inferences));
      break;
    }
    // Why the watch ends, before its summary; with nothing received there
    // is none, and "nothing arrived" is the one line said.
    if (r.ended) {
      if (received_) note("end of input");
      ended = true;
      break;
    }
    now = Clock::now();
    if (limits.duration && now - start >= *limits.duration) {
      const auto ms = std::chrono::duration_cast<milliseconds>(*limits.duration).count();
      if (received_) note(ms % 1000 ? fmt::format("--for {} ms elapsed", ms) : fmt::format("--for {} s elapsed", ms / 1000));
      break;
    }
    if (now >= next_tick) {
      while (next_tick <= now) next_tick += limits.interval;  // a slow tick skips, it does not pile up
      if (!session_.start_if_known() && !told_undecided) {
        // Said once: a capture may print other text for a while before its first record.
        if (std::string so_far = session_.undecided(); !so_far.empty()) {
          note(so_far + "; waiting for more (or give --format)");
          told_undecided = true;
        }
      }
      deliver(h);
      if (auto run = session_.snapshot()) {
        engine_.on_snapshot(*run);
        deliver(h);
        if (h.tick) h.tick(*run, engine_);
      }
    }
  }
  if (!ended) session_.stopped();
  TraceOutcome outcome = session_.finish();
  session_.stop_when({});  // `reached` refers to this call's limits
  if (outcome.run) {
    engine_.on_snapshot(*outcome.run);
    deliver(h);
    if (h.tick) h.tick(*outcome.run, engine_);
  }
  return outcome;
}

std::optional<milliseconds> parse_duration(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !(value > 0)) return std::nullopt;
  std::string_view unit(end, text.data() + text.size() - end);
  double ms = unit == "ms"                ? value
              : unit == "s" || unit == "" ? value * 1e3
              : unit == "m"               ? value * 60e3
              : unit == "h"               ? value * 3600e3
              : unit == "d"               ? value * 86400e3
                                          : -1;
  // Past ten years the clock arithmetic (ns in 64 bits) is near overflow: 1e20 d read as a negative time.
  if (ms < 1 || ms > 3650 * 86400e3) return std::nullopt;
  return milliseconds(static_cast<int64_t>(ms));
}

}  // namespace edgemem::watch
