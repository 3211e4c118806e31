// The part of a .tflite model (TFLite flatbuffer schema v3) that memory
// planning needs: subgraph 0's tensors and operators, the buffers that hold
// constant data, and an OfflineMemoryAllocation plan if the metadata has one.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "session/whole_input.h"

namespace edgemem::plan {

struct TfliteTensor {
  std::string name;
  std::vector<int32_t> shape;
  int type = 0;              // TensorType enum value
  bool has_data = false;     // constant: its bytes live in the model (inline `data`), not the arena
  bool is_variable = false;  // persistent state, allocated outside the plan
  uint64_t bytes = 0;        // element size x product of dims (INT4 counted as 1 byte)
  uint32_t quant_channels = 0;  // quantization scales (0 = not quantized, >1 = per channel)
  // Bytes stored outside the flatbuffer (Buffer.offset/size, the > 2 GB
  // layout). TFLite Micro reads only inline `data`: such a tensor is planned
  // in the arena like an activation and its weights are never loaded.
  uint64_t external_bytes = 0;
};

struct TfliteOp {
  int32_t builtin_code = 0;
  std::string custom_code;  // set for custom ops (e.g. "ethos-u")
  std::vector<int32_t> inputs, outputs, intermediates;
};

struct TfliteModel {
  std::vector<TfliteTensor> tensors;
  std::vector<TfliteOp> ops;
  std::vector<int32_t> inputs, outputs;
  size_t subgraph_count = 0;
  size_t all_tensor_count = 0, all_op_count = 0;  // over every subgraph: TFLite Micro allocates for all
  std::vector<TfliteOp> operator_codes;  // the model's operator table (codes only), every subgraph's ops
  std::vector<int> tensor_types;         // TensorTypes of every subgraph's tensors, sorted, each once
  std::optional<std::vector<int32_t>> offline_offsets;  // subgraph 0's, -1 = plan online
  // The tensor count an OfflineMemoryAllocation states when it is not the
  // model's (all subgraphs): TFLite Micro refuses the model.
  std::optional<size_t> offline_count_mismatch;
  uint64_t constant_bytes = 0;                          // weights and biases in the model
};

// Reads and verifies a model; on failure returns nullopt and a one-line reason.
std::optional<TfliteModel> read_tflite(std::span<const uint8_t> bytes, std::string& error);

// Reading a model whole: refused on its file identifier before the rest is
// read, and at 2 GiB from a pipe (a flatbuffer is never larger).
WholeInputRules tflite_input();

// Bytes per element of a TensorType, 0 for types without a fixed size.
uint32_t element_size(int type);

}  // namespace edgemem::plan
