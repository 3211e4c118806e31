// --on-alert CMD: a shell command run for every alert, so a soak rig can
// page someone, stop the device or save the capture. The alert travels as
// environment variables (EDGEMEM_ALERT kind, EDGEMEM_POOL, EDGEMEM_VALUE,
// EDGEMEM_INFERENCE, EDGEMEM_MESSAGE, EDGEMEM_DEVICE, EDGEMEM_SOURCE) and as
// one line on the command's stdin. Commands run beside the watch, not in its
// way: a slow hook must not make a live stream back up.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "watch/alert_engine.h"

namespace edgemem::watch {

class AlertHook {
 public:
  AlertHook(std::string command, std::string device, std::string source);
  ~AlertHook();
  // Starts the command; returns an error text, empty on success.
  std::string run(const Alert& alert);
  // Commands started and not yet ended.
  size_t running();
  // Waits for every command started, at most `grace` (or until `give_up`
  // says so: a second Ctrl-C); then stops what still runs (SIGTERM to its
  // process group, SIGKILL a second later). Returns one line per command
  // that failed, and one for those stopped.
  std::vector<std::string> wait_all(std::chrono::milliseconds grace, const std::function<bool()>& give_up = {});

 private:
  std::string command_, device_, source_;
  void note_failure(int wait_status);
  // Forgets the commands that ended, noting those that failed (unless we stopped them).
  void reap(bool note = true);
  std::vector<pid_t> running_;
  std::vector<std::string> failed_;
};

// The line a hook reads on stdin and `watch` prints: "ALERT kind pool: message".
std::string alert_line(const Alert& alert);

}  // namespace edgemem::watch
