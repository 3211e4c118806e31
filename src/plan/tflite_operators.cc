#include "plan/tflite_operators.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plan/lifetimes.h"
#include "report/units.h"

namespace edgemem::plan {
namespace {

// enum BuiltinOperator in tensorflow/compiler/mlir/lite/schema/schema.fbs
// (tflite-micro 90b983c2), index = code.
constexpr std::array<std::string_view, 210> kBuiltinNames = {
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE",
    "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D",
    "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU",
    "RELU_N1_TO_1", "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH",
    "CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN",
    "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN",
    "EXP", "TOPK_V2", "SPLIT", "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU",
    "MAXIMUM", "ARG_MAX", "MINIMUM", "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL",
    "SELECT", "SLICE", "SIN", "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL",
    "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD",
    "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK", "REDUCE_MIN",
    "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD", "RANGE",
    "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE",
    "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK", "ELU", "REVERSE_SEQUENCE",
    "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF", "WHILE",
    "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM",
    "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D",
    "CONV_3D", "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT",
    "HASHTABLE_SIZE", "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE",
    "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL", "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL", "GELU",
    "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX",
    "UNSORTED_SEGMENT_SUM", "ATAN2", "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST", "BITWISE_XOR", "RIGHT_SHIFT",
    "STABLEHLO_LOGISTIC", "STABLEHLO_ADD", "STABLEHLO_DIVIDE", "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM",
    "STABLEHLO_RESHAPE", "STABLEHLO_CLAMP", "STABLEHLO_CONCATENATE", "STABLEHLO_BROADCAST_IN_DIM",
    "STABLEHLO_CONVOLUTION", "STABLEHLO_SLICE", "STABLEHLO_CUSTOM_CALL", "STABLEHLO_REDUCE", "STABLEHLO_ABS",
    "STABLEHLO_AND", "STABLEHLO_COSINE", "STABLEHLO_EXPONENTIAL", "STABLEHLO_FLOOR", "STABLEHLO_LOG",
    "STABLEHLO_MINIMUM", "STABLEHLO_NEGATE", "STABLEHLO_OR", "STABLEHLO_POWER", "STABLEHLO_REMAINDER",
    "STABLEHLO_RSQRT", "STABLEHLO_SELECT", "STABLEHLO_SUBTRACT", "STABLEHLO_TANH", "STABLEHLO_SCATTER",
    "STABLEHLO_COMPARE", "STABLEHLO_CONVERT", "STABLEHLO_DYNAMIC_SLICE", "STABLEHLO_DYNAMIC_UPDATE_SLICE",
    "STABLEHLO_PAD", "STABLEHLO_IOTA", "STABLEHLO_DOT_GENERAL", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_SORT",
    "STABLEHLO_WHILE", "STABLEHLO_GATHER", "STABLEHLO_TRANSPOSE", "DILATE", "STABLEHLO_RNG_BIT_GENERATOR",
    "REDUCE_WINDOW", "STABLEHLO_COMPOSITE", "STABLEHLO_SHIFT_LEFT", "STABLEHLO_CBRT", "STABLEHLO_CASE",
};

// The builtins MicroMutableOpResolver (tensorflow/lite/micro/
// micro_mutable_op_resolver.h, tflite-micro 90b983c2) registers.
constexpr std::string_view kTflmBuiltins[] = {
    "ABS", "ADD", "ADD_N", "ARG_MAX", "ARG_MIN", "ASSIGN_VARIABLE", "AVERAGE_POOL_2D", "BATCH_MATMUL",
    "BATCH_TO_SPACE_ND", "BROADCAST_ARGS", "BROADCAST_TO", "CALL_ONCE", "CAST", "CEIL", "CONCATENATION",
    "CONV_2D", "COS", "CUMSUM", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE", "DIV",
    "DYNAMIC_UPDATE_SLICE", "ELU", "EMBEDDING_LOOKUP", "EQUAL", "EXP", "EXPAND_DIMS", "FILL", "FLOOR",
    "FLOOR_DIV", "FLOOR_MOD", "FULLY_CONNECTED", "GATHER", "GATHER_ND", "GREATER", "GREATER_EQUAL",
    "HARD_SWISH", "IF", "L2_NORMALIZATION", "L2_POOL_2D", "LEAKY_RELU", "LESS", "LESS_EQUAL", "LOG",
    "LOGICAL_AND", "LOGICAL_NOT", "LOGICAL_OR", "LOGISTIC", "LOG_SOFTMAX", "MAXIMUM", "MAX_POOL_2D", "MEAN",
    "MINIMUM", "MIRROR_PAD", "MUL", "NEG", "NOT_EQUAL", "PACK", "PAD", "PADV2", "PRELU", "QUANTIZE",
    "READ_VARIABLE", "REDUCE_ALL", "REDUCE_MAX", "REDUCE_MIN", "RELU", "RELU6", "RESHAPE", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR", "REVERSE_V2", "ROUND", "RSQRT", "SELECT_V2", "SHAPE", "SIN", "SLICE",
    "SOFTMAX", "SPACE_TO_BATCH_ND", "SPACE_TO_DEPTH", "SPLIT", "SPLIT_V", "SQRT", "SQUARE",
    "SQUARED_DIFFERENCE", "SQUEEZE", "STRIDED_SLICE", "SUB", "SUM", "SVDF", "TANH", "TRANSPOSE",
    "TRANSPOSE_CONV", "UNIDIRECTIONAL_SEQUENCE_LSTM", "UNPACK", "VAR_HANDLE", "WHILE", "ZEROS_LIKE",
};

// Its custom registrations: AddEthosU, AddDetectionPostprocess,
// AddCircularBuffer, AddDecode and the signal library.
constexpr std::string_view kTflmCustom[] = {
    "ethos-u", "TFLite_Detection_PostProcess", "CIRCULAR_BUFFER", "TFLM_DECODE", "SignalDelay", "SignalEnergy",
    "SignalFftAutoScale", "SignalFilterBank", "SignalFilterBankLog", "SignalFilterBankSquareRoot",
    "SignalFilterBankSpectralSubtraction", "SignalFramer", "SignalIrfft", "SignalOverlapAdd", "SignalPCAN",
    "SignalRfft", "SignalStacker", "SignalWindow",
};

constexpr int32_t kCustom = 32;
constexpr int kTypeResource = 13, kTypeVariant = 14;
constexpr int32_t kVarHandle = 142;

// TensorType (schema.fbs) names, as the kernels' messages print them.
constexpr int kFloat32 = 0, kInt16 = 7, kInt8 = 9, kInt4 = 17;
std::string type_name(int type) {
  constexpr std::string_view kNames[] = {"float32", "float16", "int32", "uint8",  "int64",     "string",
                                         "bool",    "int16",   "complex64", "int8", "float64", "complex128",
                                         "uint64",  "resource", "variant", "uint32", "uint16",  "int4",
                                         "bfloat16", "int2", "uint4", "float8_e4m3fn", "float8_e5m2"};
  return type >= 0 && static_cast<size_t>(type) < std::size(kNames) ? std::string(kNames[type])
                                                                     : fmt::format("type {}", type);
}

// The input/weights type pairs each reference kernel's Prepare accepts
// (tflite-micro 90b983c2, tensorflow/lite/micro/kernels/); anything else,
// float input with int8 weights in particular ("hybrid"), fails there.
struct WeightsRule {
  int32_t builtin_code;
  size_t input, weights;  // operator input positions
  const char* source;
  bool (*accepts)(int input, int weights);
};
constexpr WeightsRule kWeightsRules[] = {
    {3, 0, 1, "conv_common.cc ConvPrepare",
     [](int in, int w) {
       return (in == kFloat32 && w == kFloat32) || (in == kInt16 && w == kInt8) ||
              (in == kInt8 && (w == kInt4 || w == kInt8));
     }},
    {4, 0, 1, "depthwise_conv_common.cc",
     [](int in, int w) {
       return in == w || (in == kInt8 && (w == kInt4 || w == kInt8)) || (in == kInt16 && w == kInt8);
     }},
    {67, 2, 1, "transpose_conv.cc", [](int in, int w) { return in == w || (in == kInt16 && w == kInt8); }},
    {9, 0, 1, "fully_connected.cc",
     [](int in, int w) {
       return !((in == kFloat32 && w != kFloat32) || (in == kInt8 && w != kInt8 && w != kInt4) ||
                (in == kInt16 && w != kInt8));
     }},
    {126, 0, 1, "batch_matmul.cc", [](int lhs, int rhs) { return lhs == rhs; }},
    {27, 0, 1, "svdf_common.cc PrepareSvdf",
     [](int in, int w) { return (in == kFloat32 && w == kFloat32) || (in == kInt8 && w == kInt8); }},
};

// "CONV_2D (float32 input with int8 weights: ...)" for each operator kind of
// subgraph 0 whose kernel refuses its tensor types, each kind once.
void type_blockers(const TfliteModel& model, std::vector<std::string>& out, std::set<std::string>& seen) {
  auto type_at = [&](const TfliteOp& op, size_t position) -> std::optional<int> {
    if (position >= op.inputs.size() || op.inputs[position] < 0 ||
        static_cast<size_t>(op.inputs[position]) >= model.tensors.size())
      return std::nullopt;
    return model.tensors[static_cast<size_t>(op.inputs[position])].type;
  };
  for (const TfliteOp& op : model.ops)
    for (const WeightsRule& rule : kWeightsRules) {
      if (op.builtin_code != rule.builtin_code) continue;
      auto in = type_at(op, rule.input), weights = type_at(op, rule.weights);
      if (!in || !weights || rule.accepts(*in, *weights)) continue;
      std::string why = fmt::format("{} ({} input with {} weights: its TFLite Micro kernel refuses the pair, {})",
                                    builtin_operator_name(op.builtin_code), type_name(*in), type_name(*weights),
                                    rule.source);
      if (seen.insert(why).second) out.push_back(std::move(why));
    }
}

// The TensorTypes TfLiteTypeSizeOf (memory_helpers.cc, tflite-micro
// 90b983c2) has a size for; AllocateTensors() sizes every tensor of every
// subgraph with it (InitializeAllocationInfo), constants and unused ones too.
bool tflm_sizes_type(int type) {
  switch (type) {
    case 0: case 1: case 2: case 3: case 4: case 6: case 7: case 8: case 9: case 10: case 11: case 12: case 13:
    case 15: case 16: case 17: case 18:
      return true;
    default:  // STRING, VARIANT, INT2, UINT4, FLOAT8_E4M3FN, FLOAT8_E5M2, newer types
      return false;
  }
}

// "tensor 3 'x' [1, 0], tensor 5 'y' [0, 2] and 4 more"
std::string some_tensors(const TfliteModel& model, const std::vector<size_t>& ids, bool with_shape) {
  std::vector<std::string> named;
  for (size_t k = 0; k < std::min<size_t>(ids.size(), 3); ++k) {
    const TfliteTensor& t = model.tensors[ids[k]];
    named.push_back(with_shape ? fmt::format("tensor {} '{}' [{}]", ids[k], t.name, fmt::join(t.shape, ", "))
                               : fmt::format("tensor {} '{}'", ids[k], t.name));
  }
  return fmt::format("{}{}", fmt::join(named, ", "), ids.size() > 3 ? fmt::format(" and {} more", ids.size() - 3) : "");
}

}  // namespace

std::string_view builtin_operator_name(int32_t code) {
  return code >= 0 && static_cast<size_t>(code) < kBuiltinNames.size() ? kBuiltinNames[static_cast<size_t>(code)]
                                                                         : std::string_view{};
}

bool tflm_has_kernel(const TfliteOp& op) {
  if (op.builtin_code == kCustom)
    return std::find(std::begin(kTflmCustom), std::end(kTflmCustom), op.custom_code) != std::end(kTflmCustom);
  std::string_view name = builtin_operator_name(op.builtin_code);
  return !name.empty() && std::find(std::begin(kTflmBuiltins), std::end(kTflmBuiltins), name) != std::end(kTflmBuiltins);
}

std::vector<std::string> tflm_blockers(const TfliteModel& model) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  bool var_handle = false;
  for (const TfliteOp& op : model.operator_codes) {
    var_handle = var_handle || op.builtin_code == kVarHandle;
    if (tflm_has_kernel(op)) continue;
    std::string why;
    if (op.builtin_code != kCustom) {
      std::string_view name = builtin_operator_name(op.builtin_code);
      why = fmt::format("{} (no TFLite Micro kernel)", name.empty() ? fmt::format("BUILTIN_{}", op.builtin_code)
                                                                      : std::string(name));
    } else if (op.custom_code.starts_with("Flex")) {
      why = fmt::format("{} (a TensorFlow op: needs the Flex delegate, which TFLite Micro does not have)", op.custom_code);
    } else {
      why = fmt::format("{} (a custom op TFLite Micro does not ship: register your own kernel)",
                        op.custom_code.empty() ? "CUSTOM" : op.custom_code);
    }
    if (seen.insert(why).second) out.push_back(std::move(why));
  }
  type_blockers(model, out, seen);
  // A -1 in `shape` (not `shape_signature`, where converters keep the
  // batch) is a size known only at run time; TFLite Micro sizes every
  // tensor once, from `shape`, in AllocateTensors().
  std::vector<size_t> open;
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const TfliteTensor& t = model.tensors[i];
    if (!t.has_data && std::any_of(t.shape.begin(), t.shape.end(), [](int32_t d) { return d < 0; })) open.push_back(i);
  }
  if (!open.empty())
    out.push_back(fmt::format("{} tensor{} with a dimension known only at run time ({}: TFLite Micro sizes each tensor "
                              "once, from a static shape; convert with a fixed batch and input size; a size edgemem "
                              "lists reads -1 as 1)",
                              open.size(), open.size() == 1 ? "" : "s", some_tensors(model, open, true)));
  // CheckDynamicTensors (micro_interpreter_graph.cc), after each Prepare:
  // an operator output with a dimension <= 0 is dynamic, except the legacy
  // scalar shape [0]. The -1s are named above.
  std::vector<size_t> empty_outputs;
  for (const TfliteOp& op : model.ops)
    for (int32_t id : op.outputs) {
      if (id < 0) continue;
      const std::vector<int32_t>& shape = model.tensors[static_cast<size_t>(id)].shape;
      if (shape.size() == 1 && shape[0] == 0) continue;
      if (std::any_of(shape.begin(), shape.end(), [](int32_t d) { return d < 0; }) ||
          std::none_of(shape.begin(), shape.end(), [](int32_t d) { return d == 0; }) ||
          std::count(empty_outputs.begin(), empty_outputs.end(), static_cast<size_t>(id)))
        continue;
      empty_outputs.push_back(static_cast<size_t>(id));
    }
  if (!empty_outputs.empty())
    out.push_back(fmt::format("{} operator output{} with a 0 dimension ({}: TFLite Micro's CheckDynamicTensors calls "
                              "such an output dynamic, and dynamic tensors are not supported)",
                              empty_outputs.size(), empty_outputs.size() == 1 ? "" : "s",
                              some_tensors(model, empty_outputs, true)));
  // TfLiteTypeSizeOf has no size for these: AllocateTensors() fails.
  std::vector<std::string> unsized;
  for (int type : model.tensor_types)
    if (type != kTypeVariant && !tflm_sizes_type(type)) unsized.push_back(type_name(type));
  if (!unsized.empty())
    out.push_back(fmt::format("{} tensors (TfLiteTypeSizeOf has no size for the type, so AllocateTensors() fails on "
                              "any tensor of it, even a constant or unused one)", fmt::join(unsized, ", ")));
  // GetOfflinePlannedOffsets wants one offset per tensor of every subgraph.
  if (model.offline_count_mismatch)
    out.push_back(fmt::format("an OfflineMemoryAllocation of {} offsets for {} tensors (TFLite Micro: \"Nbr of offline "
                              "buffer offsets ({}) in metadata not equal nbr tensors ({})\")",
                              *model.offline_count_mismatch, model.all_tensor_count, *model.offline_count_mismatch,
                              model.all_tensor_count));
  // Weights after the flatbuffer (Buffer.offset): TFLite Micro reads only
  // inline data, plans the tensor in the arena and computes with garbage.
  std::vector<size_t> external;
  for (size_t i = 0; i < model.tensors.size(); ++i)
    if (model.tensors[i].external_bytes && !model.tensors[i].has_data) external.push_back(i);
  if (!external.empty())
    out.push_back(fmt::format("{} tensor{} whose data is stored outside the flatbuffer ({}: Buffer.offset/size, the "
                              "> 2 GB layout; TFLite Micro reads only a buffer's inline data, so it would plan the "
                              "tensor in the arena and never load its weights)",
                              external.size(), external.size() == 1 ? "" : "s", some_tensors(model, external, false)));
  // CreatePlan hands GreedyMemoryPlanner::AddBuffer(int size, ...) each
  // aligned size as an int: 2 GiB or more does not fit. Only -1 means "plan
  // online": another negative offset places a planned tensor before the
  // arena (TFLite Micro wrote there, or aborted); a constant's is never read.
  std::vector<size_t> huge, before_arena;
  for (const PlanBuffer& b : planned_buffers(model)) {
    if (b.bytes > static_cast<uint64_t>(INT32_MAX)) huge.push_back(static_cast<size_t>(b.tensor));
    if (b.offline_offset < -1) before_arena.push_back(static_cast<size_t>(b.tensor));
  }
  if (!before_arena.empty())
    out.push_back(fmt::format("{} tensor{} the OfflineMemoryAllocation plan places before the arena ({}: an offset "
                              "below -1, which TFLite Micro takes as it is)",
                              before_arena.size(), before_arena.size() == 1 ? "" : "s",
                              some_tensors(model, before_arena, false)));
  if (!huge.empty())
    out.push_back(fmt::format("{} tensor{} of 2 GiB or more ({}, {} B: TFLite Micro's planner takes each size as an "
                              "int)", huge.size(), huge.size() == 1 ? "" : "s", some_tensors(model, huge, false),
                              units::grouped(model.tensors[huge[0]].bytes)));
  if (std::count(model.tensor_types.begin(), model.tensor_types.end(), kTypeVariant))
    out.push_back("VARIANT tensors (TensorFlow tensor lists: TFLite Micro has no such type)");
  // TFLite Micro holds RESOURCE tensors only as the variables VAR_HANDLE makes.
  if (!var_handle && std::count(model.tensor_types.begin(), model.tensor_types.end(), kTypeResource))
    out.push_back("RESOURCE tensors not made by VAR_HANDLE (TensorFlow resources: TFLite Micro has none)");
  return out;
}

}  // namespace edgemem::plan
