// The live loop of `edgemem watch`: bytes from a LiveSource into a
// TraceSession, alerts as inferences end, a status tick per interval, until
// the source ends, enough inferences were seen, the time is up or the
// caller says stop. What to do with a tick or an alert is the caller's.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "edgemem/trace_session.h"
#include "watch/alert_engine.h"
#include "watch/live_source.h"

namespace edgemem::watch {

struct WatchLimits {
  std::chrono::milliseconds interval{1000};
  // Stop at the first read that completes this many inferences (a read
  // may complete several, so the summary can hold a few more).
  std::optional<uint64_t> until_inferences;
  std::optional<std::chrono::milliseconds> duration;
};

struct WatchHandlers {
  std::function<void(const std::string&)> note;  // source events and why the watch ended
  std::function<void(const Alert&)> alert;
  // Per interval, and once more with the final result.
  std::function<void(const TraceRun&, const AlertEngine&)> tick;
};

class Watcher {
 public:
  // The session must not have been fed yet: the alert engine observes it from the first inference.
  explicit Watcher(TraceSession& session);
  // Returns the session's outcome over everything read.
  TraceOutcome run(LiveSource& source, const WatchLimits& limits, const WatchHandlers& handlers,
                   const std::function<bool()>& stop);
  const AlertEngine& alerts() const { return engine_; }
  // Bytes the source gave, over the whole run.
  uint64_t received() const { return received_; }

 private:
  void deliver(const WatchHandlers& handlers);
  TraceSession& session_;
  AlertEngine engine_;
  uint64_t received_ = 0;
};

// "500ms", "10s", "5m", "2h", "1d", or plain seconds ("1.5"); unset when
// the text is none of these, not above zero, or over ten years (3650d).
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace edgemem::watch
