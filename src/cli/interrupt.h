// Ctrl-C or SIGTERM while a trace is read ends the read, not the process:
// the analysis is finished on what was decoded and its report printed.
#pragma once

namespace edgemem::cli {

// Installs SIGINT/SIGTERM handlers without SA_RESTART, so a read blocked on
// a pipe or FIFO returns at once.
void catch_interrupts();

// The signal that arrived since catch_interrupts(), or 0.
int interrupted();

// How many SIGINT/SIGTERM arrived: a second one cuts short what the first
// one's shutdown waits for.
int interrupt_count();

}  // namespace edgemem::cli
