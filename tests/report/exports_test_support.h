// The demo capture (the QEMU firmware's KWS loop, leaking 644 B per
// inference) analysed as `edgemem demo` does, for the export tests.
#pragma once

#include <stdexcept>
#include <string>

#include "edgemem/trace_session.h"

namespace edgemem::test {

inline const TraceRun& demo_run() {
  static const TraceRun run = [] {
    TraceSessionOptions options;
    options.elf = std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.elf";
    TraceOutcome out = analyse_trace_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt", options);
    if (!out.run) throw std::runtime_error("the demo trace examples/traces/kws_leak.emt did not analyse");
    return *out.run;
  }();
  return run;
}

}  // namespace edgemem::test
