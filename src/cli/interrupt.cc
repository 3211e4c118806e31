#include "cli/interrupt.h"

#include <csignal>

namespace edgemem::cli {
namespace {

volatile std::sig_atomic_t caught = 0;
volatile std::sig_atomic_t count = 0;

void on_signal(int signal) {
  caught = signal;
  count = count + 1;
}

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

int interrupt_count() { return count; }

}  // namespace edgemem::cli
