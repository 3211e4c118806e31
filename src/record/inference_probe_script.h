// The gdb Python script behind `--inference-fn` without root
// (inference_probe.h): breakpoints at NAME's entry and at the return
// addresses of its outermost calls, each numbered from the preload
// library's sequence counter.
#pragma once

namespace edgemem {

// Expects MARKS, LOG, READY, STOP, SYMBOL, ARCH, PRELOAD and ATTACH defined before it.
extern const char* const kInferenceProbeScript;

}  // namespace edgemem
