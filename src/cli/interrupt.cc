#include "cli/interrupt.h"

#include <csignal>

namespace edgemem::cli {
namespace {

volatile std::sig_atomic_t caught = 0;

void on_signal(int signal) { caught = signal; }

}  // namespace

void catch_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interrupted() { return caught; }

}  // namespace edgemem::cli
