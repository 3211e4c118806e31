#include "cli/status_display.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "report/units.h"

namespace edgemem::cli {

StatusDisplay::StatusDisplay() : tty_(::isatty(STDERR_FILENO)) {}

StatusDisplay::~StatusDisplay() { clear(); }

void StatusDisplay::clear() {
  if (shown_) fmt::print(stderr, "\r\x1b[K");
  shown_ = false;
}

void StatusDisplay::status(const std::string& line) {
  if (!tty_) {
    fmt::print(stderr, "{}\n", line);
    return;
  }
  winsize w{};
  size_t width = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 1 ? w.ws_col - 1 : 159;
  fmt::print(stderr, "\r{}\x1b[K", units::fit_columns(line, width));
  std::fflush(stderr);
  shown_ = true;
}

void StatusDisplay::message(const std::string& line) {
  clear();
  fmt::print(stderr, "{}\n", line);
}

}  // namespace edgemem::cli
