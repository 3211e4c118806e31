#include "watch/alert_hook.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace edgemem::watch {

std::string alert_line(const Alert& a) {
  return fmt::format("ALERT {}{}: {}", to_string(a.kind), a.pool.empty() ? "" : " " + a.pool, a.message);
}

AlertHook::AlertHook(std::string command, std::string device, std::string source)
    : command_(std::move(command)), device_(std::move(device)), source_(std::move(source)) {}

AlertHook::~AlertHook() { wait_all(std::chrono::seconds(0)); }

std::string AlertHook::run(const Alert& a) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "EDGEMEM_", 8) != 0) env.emplace_back(*e);
  env.push_back(fmt::format("EDGEMEM_ALERT={}", to_string(a.kind)));
  env.push_back(fmt::format("EDGEMEM_POOL={}", a.pool));
  env.push_back(fmt::format("EDGEMEM_VALUE={}", a.value));
  env.push_back(fmt::format("EDGEMEM_INFERENCE={}", a.inference));
  env.push_back(fmt::format("EDGEMEM_MESSAGE={}", a.message));
  env.push_back(fmt::format("EDGEMEM_DEVICE={}", device_));
  env.push_back(fmt::format("EDGEMEM_SOURCE={}", source_));
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return fmt::format("--on-alert: pipe: {}", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  // Its output goes to stderr: stdout holds only the summary (or its JSON).
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  // Its own process group: the terminal's Ctrl-C is the watch's to handle,
  // and a hook that outstays the watch is stopped with all it started.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  // edgemem ignores SIGPIPE and SIGXFSZ; a shell pipeline in the hook should not.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  std::string sh = "/bin/sh", dash_c = "-c", cmd = command_;
  char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
  pid_t pid;
  int rc = ::posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    return fmt::format("--on-alert: cannot start /bin/sh: {}", std::strerror(rc));
  }
  running_.push_back(pid);
  // One short line fits the pipe buffer, so this does not block on a hook
  // that never reads its stdin (SIGPIPE is ignored by main).
  std::string line = alert_line(a) + "\n";
  [[maybe_unused]] ssize_t written = ::write(fds[1], line.data(), line.size());
  ::close(fds[1]);
  reap();  // hooks that are done, so a long soak does not collect zombies
  return {};
}

void AlertHook::note_failure(int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    failed_.push_back(fmt::format("--on-alert command exited with {}", WEXITSTATUS(status)));
  else if (WIFSIGNALED(status))
    failed_.push_back(fmt::format("--on-alert command killed by signal {}", WTERMSIG(status)));
}

void AlertHook::reap(bool note) {
  std::erase_if(running_, [this, note](pid_t p) {
    int status = 0;
    pid_t got = ::waitpid(p, &status, WNOHANG);
    if (got == 0) return false;
    if (got == p && note) note_failure(status);
    return true;  // ended (or, on an error, not ours to wait for)
  });
}

size_t AlertHook::running() {
  reap();
  return running_.size();
}

std::vector<std::string> AlertHook::wait_all(std::chrono::milliseconds grace, const std::function<bool()>& give_up) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + grace;
  for (reap(); !running_.empty() && Clock::now() < deadline && !(give_up && give_up()); reap())
    ::usleep(20 * 1000);
  if (!running_.empty()) {
    failed_.push_back(fmt::format("{} --on-alert command{} still running when the watch ended: stopped",
                                  running_.size(), running_.size() == 1 ? "" : "s"));
    // Each hook leads its own process group: its shell and all it started.
    const std::vector<pid_t> groups = running_;
    for (pid_t g : groups) ::kill(-g, SIGTERM);
    const auto hard = Clock::now() + std::chrono::seconds(1);
    for (reap(false); !running_.empty() && Clock::now() < hard; reap(false)) ::usleep(20 * 1000);
    // Whatever of those groups is left (a child that ignores SIGTERM outlives its shell).
    for (pid_t g : groups) ::kill(-g, SIGKILL);
    for (pid_t p : running_)
      while (::waitpid(p, nullptr, 0) < 0 && errno == EINTR) {
      }
    running_.clear();
  }
  return std::exchange(failed_, {});
}

}  // namespace edgemem::watch
