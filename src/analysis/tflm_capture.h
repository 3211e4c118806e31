// What a capture of TFLite Micro's tensor arena shows, read from its events:
// where TFLM put each tensor, what it allocated in the persistent tail, and
// how big the planned head was when AllocateTensors() finished (the first
// inference marker). The pool and site conventions are those of
// tools/tflm_oracle/capture_probe.cc, written down in docs/device.md so
// firmware can record the same: pool "tflm" (head, offsets from the arena
// start), "tflm.persistent" (tail, offsets from the arena end to each
// block's upper end), "tflm.tensors" (one block per placed tensor, site
// "tensor:<index>"); other sites are "<what>:<index>".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace edgemem {

struct CapturedTensor {
  int32_t tensor = -1;  // index in subgraph 0
  uint64_t offset = 0;  // from the arena start
  uint64_t bytes = 0;
};

struct CapturedTailBlock {
  std::string what;     // the site's name part: "TfLiteEvalTensor[]", "CONV_2D.Init", ...
  uint32_t index = 0;   // the site's number: operator or tensor index, 0 if none
  uint64_t offset = 0;  // from the arena end to the block's upper end
  uint64_t bytes = 0;
  uint64_t charged = 0;  // bytes plus the alignment padding above it: what the tail grew by
};

struct TflmCapture {
  uint64_t arena_bytes = 0;
  std::vector<CapturedTensor> tensors;
  std::vector<CapturedTailBlock> tail;       // made before the first inference, in order
  std::vector<CapturedTailBlock> tail_later;  // made during an inference (a kernel allocating in Invoke)
  uint64_t head_bytes = 0;  // extent of the head at the first inference marker: TFLM's plan
  uint64_t tail_bytes = 0;  // tail used at that moment
};

// Reads an emt capture; on failure returns nullopt and a one-line reason
// naming `path` and what was expected.
std::optional<TflmCapture> read_tflm_capture(std::span<const uint8_t> bytes, const std::string& path,
                                             std::string& error);

}  // namespace edgemem
