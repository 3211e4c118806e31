#include "plan/arena_budget.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "plan/lifetimes.h"
#include "plan/planners.h"
#include "plan/tflite_operators.h"
#include "report/units.h"

namespace edgemem::plan {
namespace {

// TFLite Micro's structs laid out for the target: c/common.h as built
// without TF_LITE_STATIC_MEMORY (what its memory_arena_threshold_test
// measures on x86-64; the static-memory build only drops fields, so the
// 32-bit numbers are an upper bound for it), micro_allocator.h,
// micro_allocation_info.h, greedy_memory_planner.h.
struct Abi {
  const char* name;
  uint64_t ptr;
  uint64_t eval_tensor;            // TfLiteEvalTensor {data, dims, type}
  uint64_t tflite_tensor;          // TfLiteTensor
  uint64_t node_and_registration;  // TfLiteNode + registration pointer
  uint64_t affine_quantization;    // TfLiteAffineQuantization {scale, zero_point, dim}
  uint64_t scratch_request;        // internal::ScratchBufferRequest {bytes, node, subgraph}
  uint64_t scratch_handle;         // ScratchBufferHandle {data}
  uint64_t allocation_info;        // AllocationInfo, one per tensor and scratch buffer while planning
  uint64_t subgraph_allocations;   // SubgraphAllocations {nodes, tensors}
  uint64_t allocator_objects;      // SingleArenaBufferAllocator + MicroAllocator + builtin data allocator + GreedyMemoryPlanner
  // Kernel op data structs (reference kernels). TailSim adds the padding
  // the 16-byte alignment costs, so a size rounded up to 16 here counts it
  // twice after an allocation that left the tail unaligned: OpDataConv and
  // transpose_conv.cc's OpData are their sizeof, as TFLite Micro's own
  // arena shows (tests/data/tflm_captures); the other three are still
  // rounded up, which the captures show costing nothing on their models.
  uint64_t op_data_conv, op_data_fully_connected, softmax_params, op_data_concat, op_data_transpose_conv;
};
constexpr Abi kX86_64{"x86-64", 8, 24, 112, 88, 24, 16, 8, 32, 16, 72 + 72 + 16 + 72, 72, 64, 80, 48, 80};
constexpr Abi kCortexM{"cortex-m", 4, 12, 64, 44, 12, 12, 4, 24, 8, 36 + 36 + 8 + 44, 56, 48, 64, 32, 72};

constexpr uint64_t kPlannerBytesPerBuffer = 40;  // GreedyMemoryPlanner::per_buffer_size()
constexpr uint64_t kMaxScratchBuffersPerOp = 12;  // requests reserved ahead for the next kernel
constexpr uint64_t kMaxBytes = uint64_t{1} << 40;   // as the reader caps tensors
constexpr uint64_t kInt16LutBytes = 513 * 2;      // softmax's int16 exp and 1/(1+x) tables

namespace op {
constexpr int32_t kAdd = 0, kAveragePool = 1, kConcatenation = 2, kConv = 3, kDepthwiseConv = 4, kDequantize = 6,
                  kFullyConnected = 9, kLogistic = 14, kMaxPool = 17, kMul = 18, kReshape = 22, kSoftmax = 25,
                  kSvdf = 27, kCustom = 32, kPad = 34, kSub = 41, kStridedSlice = 45, kCast = 53, kMaximum = 55,
                  kMinimum = 57, kDiv = 42, kTransposeConv = 67, kUnidirectionalSequenceLstm = 44, kLeakyRelu = 98,
                  kQuantize = 114;
}
constexpr int kTypeFloat32 = 0, kTypeInt16 = 7, kTypeInt8 = 9;

// What one operator takes from the arena, per the reference kernel; each
// case names its source file under tflite-micro tensorflow/lite/micro/kernels/
// (signal/micro/kernels/ for the Signal ops).
struct KernelCost {
  uint64_t builtin_data = 0;      // its parsed options struct, 4-byte aligned
  std::vector<uint64_t> init;     // AllocatePersistentBuffer in Init: op data
  std::vector<uint64_t> prepare;  // ... in Prepare: per-channel multipliers, tables
  std::vector<uint64_t> scratch;  // RequestScratchBufferInArena in Prepare
  bool modelled = true;
};

const TfliteTensor* tensor_at(const TfliteModel& m, const std::vector<int32_t>& list, size_t i) {
  if (i >= list.size() || list[i] < 0) return nullptr;
  return &m.tensors[static_cast<size_t>(list[i])];
}
uint64_t dim(const TfliteTensor* t, size_t i) {
  return t && i < t->shape.size() && t->shape[i] > 0 ? static_cast<uint64_t>(t->shape[i]) : 1;
}
uint64_t elements(const TfliteTensor* t) {
  uint64_t n = 1;
  if (t)
    for (size_t i = 0; i < t->shape.size(); ++i) n *= dim(t, i);
  return n;
}

// Bytes kissfft's kiss_fftr_alloc() asks for an N-point real FFT
// (kissfft v130 tools/kiss_fftr.c as patched by TFLM): the kiss_fftr_state
// (three pointers), the N/2-point kiss_fft_state (nfft, inverse, 64 factors:
// 264 B, then N/2 twiddles) and N/2 * 3/2 more complex values.
uint64_t kiss_fftr_bytes(uint64_t n, uint64_t scalar_bytes, const Abi& abi) {
  const uint64_t half = n / 2, complex = 2 * scalar_bytes;
  return 3 * abi.ptr + 264 + complex * half + complex * (half * 3 / 2);
}

// The Signal library's custom ops (tflite-micro signal/micro/kernels/<op>.cc):
// their options are flexbuffers, so sizes come from the tensors instead.
KernelCost signal_cost(const TfliteModel& m, const TfliteOp& o, const Abi& abi) {
  const TfliteTensor* in = tensor_at(m, o.inputs, 0);
  const TfliteTensor* out = tensor_at(m, o.outputs, 0);
  const std::string& op = o.custom_code;
  KernelCost k;
  if (op == "SignalWindow" || op == "SignalEnergy" || op == "SignalFilterBankLog") {
    k.init = {8};  // window.cc, energy.cc, filter_bank_log.cc: two int32 params
  } else if (op == "SignalPCAN") {
    k.init = {4};  // pcan.cc: TfLitePcanParams {snr_shift}
  } else if (op == "SignalFftAutoScale" || op == "SignalFilterBankSquareRoot") {
    // fft_auto_scale_kernel.cc, filter_bank_square_root.cc: no op data
  } else if (op == "SignalFilterBank") {
    // filter_bank.cc: TFLMSignalFilterBankParams (FilterbankConfig of
    // signal/src/filter_bank.h: int32, five pointers, two int32; then a
    // work-area pointer) and a uint64 work area of num_channels + 1.
    k.init = {align_up(4, abi.ptr) + 6 * abi.ptr + 8, (elements(out) + 1) * 8};
  } else if (op == "SignalFilterBankSpectralSubtraction") {
    // filter_bank_spectral_subtraction.cc: SpectralSubtractionConfig (36 B),
    // a pointer and a size_t; a uint32 noise estimate per channel.
    k.init = {align_up(36, abi.ptr) + 2 * abi.ptr, elements(in) * 4};
  } else if (op == "SignalRfft") {
    // rfft.cc: TfLiteAudioFrontendRfftParams (five 32-bit fields, the
    // work-area pointer, the scratch index, the state pointer),
    // the kissfft state (rfft_{float,int16,int32}.cc), and in Prepare an
    // fft_length scratch buffer; the output's last dimension is
    // 2 * (fft_length / 2 + 1) real values.
    const uint64_t scalar = in && in->type == kTypeInt16 ? 2 : 4;
    const uint64_t out_last = out && !out->shape.empty() ? dim(out, out->shape.size() - 1) : 2;
    const uint64_t n = 2 * (std::max<uint64_t>(out_last / 2, 1) - 1);
    k.init = {align_up(20, abi.ptr) + abi.ptr + align_up(4, abi.ptr) + abi.ptr, kiss_fftr_bytes(n, scalar, abi)};
    k.scratch = {n * scalar};
  } else {
    k = {0, {64}, {}, {}, false};
  }
  return k;
}

KernelCost kernel_cost(const TfliteModel& m, const TfliteOp& o, const Abi& abi) {
  if (o.builtin_code == op::kCustom && o.custom_code.rfind("Signal", 0) == 0) return signal_cost(m, o, abi);
  KernelCost k;
  const TfliteTensor* in = tensor_at(m, o.inputs, 0);
  const TfliteTensor* filter = tensor_at(m, o.inputs, 1);
  const TfliteTensor* out = tensor_at(m, o.outputs, 0);
  auto per_channel = [&](uint64_t channels) { k.prepare = {4 * channels, 4 * channels}; };
  switch (o.builtin_code) {
    case op::kConv:  // conv.cc, conv_common.cc: TfLiteConvParams; OpDataConv; per-channel multiplier and shift
      k = {28, {abi.op_data_conv}, {}, {}};
      per_channel(dim(filter, 0));
      break;
    case op::kDepthwiseConv:  // depthwise_conv.cc: as CONV_2D, channels on the filter's last axis
      k = {28, {abi.op_data_conv}, {}, {}};
      per_channel(dim(filter, 3));
      break;
    case op::kTransposeConv: {
      // transpose_conv.cc (transpose_conv.h: input 0 is the output shape, 1
      // the filter, 2 the data, 3 the bias): int32 (int64 for int16)
      // accumulators for the whole output; a 16-bit bias is widened to int64.
      const TfliteTensor* data = tensor_at(m, o.inputs, 2);
      const TfliteTensor* bias = tensor_at(m, o.inputs, 3);
      k = {20, {abi.op_data_transpose_conv}, {}, {}};
      per_channel(dim(filter, 0));
      if (data && data->type == kTypeInt8) k.scratch = {elements(out) * 4};
      if (data && data->type == kTypeInt16) {
        k.scratch = {elements(out) * 8};
        if (bias && bias->type == kTypeInt16) k.scratch.push_back(elements(bias) * 8);
      }
      break;
    }
    case op::kFullyConnected:  // fully_connected.cc: TfLiteFullyConnectedParams; OpDataFullyConnected
      k = {16, {abi.op_data_fully_connected}, {}, {}};
      if (filter && filter->quant_channels > 1) per_channel(filter->quant_channels);
      break;
    case op::kSvdf: {  // svdf.cc, svdf_common.cc: OpDataSvdf; int32 scratch per filter (and per unit when quantized)
      k = {12, {48}, {}, {}};
      uint64_t batch = dim(in, 0), filters = dim(filter, 0), units = dim(out, 1);  // each below 2^31
      k.scratch = {batch * filters * 4};
      if (in && in->type != kTypeFloat32) k.scratch.push_back(batch * units * 4);
      break;
    }
    case op::kSoftmax:  // softmax_common.cc: SoftmaxParams; int16 input builds two lookup tables
      k = {4, {abi.softmax_params}, {}, {}};
      if (in && in->type == kTypeInt16) k.prepare = {kInt16LutBytes, kInt16LutBytes};
      break;
    case op::kQuantize:
    case op::kDequantize: k = {0, {32}, {}, {}}; break;  // quantize.cc, dequantize.cc: their op data
    case op::kAveragePool:
    case op::kMaxPool: k = {40, {32}, {}, {}}; break;  // pooling.cc: TfLitePoolParams; OpDataPooling
    case op::kReshape: k = {36, {}, {}, {}}; break;    // reshape.cc: TfLiteReshapeParams, no op data
    case op::kAdd:
    case op::kSub: k = {8, {64}, {}, {}}; break;  // add.cc / sub.cc: OpDataAdd / OpDataSub
    case op::kMul: k = {4, {48}, {}, {}}; break;  // mul.cc: OpDataMul
    case op::kLogistic: k = {0, {16}, {}, {}}; break;  // logistic.cc: OpDataLogistic
    case op::kConcatenation: k = {8, {abi.op_data_concat}, {}, {}}; break;  // concatenation.cc: OpData
    case op::kPad: k = {0, {56}, {}, {}}; break;             // pad.cc: PadParams + output zero point
    case op::kStridedSlice: k = {24, {96}, {}, {}}; break;   // strided_slice.cc: StridedSliceParams
    case op::kLeakyRelu: k = {4, {24}, {}, {}}; break;       // leaky_relu.cc: LeakyReluOpData, six int32
    case op::kCast: k = {8, {}, {}, {}}; break;              // cast.cc: TfLiteCastParams, no op data
    case op::kMaximum:
    case op::kMinimum: break;
    case op::kDiv: k = {4, {28}, {}, {}}; break;  // div.cc: TfLiteDivParams; OpDataDiv
    case op::kUnidirectionalSequenceLstm: {
      // unidirectional_sequence_lstm.cc: TfLiteUnidirectionalSequenceLSTMParams
      // (16 B); Init allocates OpDataLSTM (lstm_shared.h, 688 B, no pointers);
      // Prepare requests four scratch buffers of batch x state units of the
      // cell state's type (input 19); input 18 is the [batch, units] output state.
      const TfliteTensor* cell_state = tensor_at(m, o.inputs, 19);
      const uint64_t cell_bytes = cell_state && cell_state->type == kTypeInt16 ? 2 : 4;
      const uint64_t state = elements(tensor_at(m, o.inputs, 18)) * cell_bytes;
      k = {16, {688}, {}, {state, state, state, state}};
      break;
    }
    default:  // no cost model: assume one small op data struct, scratch unknown
      k = {0, {64}, {}, {}, false};
      break;
  }
  return k;
}

// The tail grows down from the arena's (16-byte aligned) end: aligning the
// new tail pointer down is aligning the used byte count up.
struct TailSim {
  uint64_t used = 0;
  uint64_t alloc(uint64_t size, uint64_t align) {
    uint64_t before = used;
    used = align_up(used + size, align);
    return used - before;
  }
};

}  // namespace

std::string operator_name(const TfliteOp& o) {
  if (o.builtin_code == op::kCustom) return o.custom_code.empty() ? "CUSTOM" : o.custom_code;
  std::string_view name = builtin_operator_name(o.builtin_code);
  return name.empty() ? fmt::format("BUILTIN_{}", o.builtin_code) : std::string(name);
}

ArenaBudget arena_budget(const TfliteModel& m, Target target) {
  const Abi& abi = target == Target::x86_64 ? kX86_64 : kCortexM;
  ArenaBudget b;
  b.target = target;
  std::vector<KernelCost> costs;
  for (const TfliteOp& o : m.ops) costs.push_back(kernel_cost(m, o, abi));

  // Head: TFLite Micro plans scratch buffers with the tensors, each live for
  // its operator only (scope op + 1), after the tensors in AllocationInfo order.
  std::vector<Buffer> buffers = planner_input(planned_buffers(m));
  b.tensor_bytes = tflm_greedy_plan(buffers).arena_bytes;
  size_t planned_tensors = buffers.size();
  uint64_t scratch_count = 0;
  for (size_t i = 0; i < m.ops.size(); ++i) {
    uint64_t sum = 0;
    for (uint64_t& s : costs[i].scratch) {
      s = std::min(s, kMaxBytes);  // a corrupt shape must not wrap the sums below
      int32_t scope = static_cast<int32_t>(i) + 1;
      buffers.push_back({align_up(s, kBufferAlignment), scope, scope, -1});
      sum += s;
      ++scratch_count;
    }
    if (sum)
      b.scratch.push_back({fmt::format("op {} {}: {} scratch buffer{}", i, operator_name(m.ops[i]),
                                       costs[i].scratch.size(), costs[i].scratch.size() > 1 ? "s" : ""),
                           sum, "RequestScratchBufferInArena in the reference kernel's Prepare", ""});
  }
  const Plan head = tflm_greedy_plan(buffers);
  b.head_bytes = head.arena_bytes;
  const std::vector<PlanBuffer> planned = planned_buffers(m);
  for (size_t i = 0; i < planned.size(); ++i) b.head_plan.push_back({planned[i].tensor, head.offsets[i]});

  // Tail, in the order AllocateTensors() allocates it.
  TailSim tail;
  b.allocator_bytes = tail.alloc(abi.allocator_objects, abi.ptr) +
                      tail.alloc(abi.subgraph_allocations * std::max<size_t>(m.subgraph_count, 1), abi.ptr);
  auto item = [&](std::string what, uint64_t bytes, std::string source, std::string kind) {
    b.tail.push_back({std::move(what), bytes, std::move(source), std::move(kind)});
  };
  item(fmt::format("TfLiteEvalTensor x {}", m.all_tensor_count),
       tail.alloc(abi.eval_tensor * m.all_tensor_count, abi.ptr),
       fmt::format("{} B each on {}, one per tensor of every subgraph", abi.eval_tensor, abi.name),
       "eval_tensors");
  item(fmt::format("NodeAndRegistration x {}", m.all_op_count),
       tail.alloc(abi.node_and_registration * m.all_op_count, abi.ptr),
       fmt::format("{} B each on {}, one per operator of every subgraph", abi.node_and_registration, abi.name),
       "nodes");

  // Builtin options for every operator, then each kernel's Init, then its
  // Prepare: charged per operator type, padding included as TFLite Micro's
  // RecordingMicroAllocator charges it.
  std::map<std::string, std::pair<uint64_t, int>> per_kind;  // bytes, operator count
  for (size_t i = 0; i < m.ops.size(); ++i) {
    auto& [bytes, count] = per_kind[operator_name(m.ops[i])];
    ++count;
    if (costs[i].builtin_data) bytes += tail.alloc(costs[i].builtin_data, 4);
  }
  std::vector<uint64_t> tail_after_prepare(m.ops.size());  // allocator and tail when op i has prepared
  for (auto stage : {&KernelCost::init, &KernelCost::prepare})
    for (size_t i = 0; i < m.ops.size(); ++i) {
      for (uint64_t s : costs[i].*stage) per_kind[operator_name(m.ops[i])].first += tail.alloc(s, kBufferAlignment);
      tail_after_prepare[i] = tail.used;
    }
  for (const auto& [kind, v] : per_kind) {
    if (v.first == 0) continue;
    bool modelled = true;
    for (size_t i = 0; i < m.ops.size(); ++i)
      if (operator_name(m.ops[i]) == kind) modelled = costs[i].modelled;
    item(fmt::format("{} x {}: options, op data, per-channel data", kind, v.second), v.first,
         modelled ? "reference kernel's structs and persistent buffers"
                  : "no cost model for this operator: 64 B of op data assumed",
         "op:" + kind);
    if (!modelled) b.unmodelled.push_back(kind);
  }
  if (scratch_count)
    item(fmt::format("ScratchBufferHandle x {}", scratch_count), tail.alloc(abi.scratch_handle * scratch_count, abi.ptr),
         fmt::format("{} B each", abi.scratch_handle), "scratch_handles");

  uint64_t variables = 0;
  int variable_count = 0;
  // AllocateVariables skips a variable the offline plan places: it is in the head.
  for (size_t i = 0; i < m.tensors.size(); ++i)
    if (const TfliteTensor& t = m.tensors[i]; t.is_variable && (!m.offline_offsets || (*m.offline_offsets)[i] == -1)) {
      variables += tail.alloc(t.bytes, kBufferAlignment);
      ++variable_count;
    }
  if (variable_count)
    item(fmt::format("variable tensors x {}", variable_count), variables, "their bytes, 16-byte aligned", "variables");
  const uint64_t tail_while_planning = tail.used;

  // The interpreter's persistent TfLiteTensor for each graph input and output,
  // with a copy of its quantization parameters.
  uint64_t io = 0;
  for (const auto* list : {&m.inputs, &m.outputs}) {
    io += tail.alloc(abi.ptr * list->size(), kBufferAlignment);
    for (int32_t id : *list) {
      io += tail.alloc(abi.tflite_tensor, abi.ptr);
      const TfliteTensor& t = m.tensors[static_cast<size_t>(id)];
      if (t.quant_channels)
        io += tail.alloc(abi.affine_quantization, abi.ptr) + tail.alloc(4 + 4 * uint64_t{t.quant_channels}, 4);
    }
  }
  item(fmt::format("input/output TfLiteTensor x {}", m.inputs.size() + m.outputs.size()), io,
       fmt::format("{} B each on {}, plus quantization and the pointer arrays", abi.tflite_tensor, abi.name),
       "io_tensors");
  for (const BudgetItem& i : b.tail) b.tail_bytes += i.bytes;

  // Head while AllocateTensors() runs: the scratch request list, then, while
  // planning, one AllocationInfo per tensor and scratch buffer and the
  // greedy planner's per-buffer arrays.
  uint64_t requests = align_up(abi.scratch_request * (scratch_count + kMaxScratchBuffersPerOp), kBufferAlignment);
  uint64_t info = align_up(abi.allocation_info * (m.all_tensor_count + scratch_count), kBufferAlignment);
  uint64_t offsets = align_up(abi.ptr * std::max<size_t>(m.subgraph_count, 1), kBufferAlignment);
  uint64_t planner = kPlannerBytesPerBuffer * (planned_tensors + scratch_count);
  b.planning = {{"scratch buffer requests", requests, fmt::format("{} B each, {} reserved ahead", abi.scratch_request, kMaxScratchBuffersPerOp), ""},
                {"AllocationInfo", info, fmt::format("{} B per tensor and scratch buffer", abi.allocation_info), ""},
                {"subgraph offsets", offsets, "one size_t per subgraph", ""},
                {"greedy planner arrays", planner, "GreedyMemoryPlanner::per_buffer_size() = 40 B per planned buffer", ""}};
  b.planning_bytes = requests + info + offsets + planner;

  // While a kernel prepares, it reads its tensors as temporary TfLiteTensors
  // (with quantization copies) after the request list, which holds the
  // requests so far plus room for 12 (MicroAllocator::FinishPrepareNodeAllocations).
  uint64_t prepare_peak = 0, requests_so_far = 0;
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const TfliteOp& o = m.ops[i];
    const uint64_t list = abi.scratch_request * (requests_so_far + kMaxScratchBuffersPerOp);
    requests_so_far += costs[i].scratch.size();
    uint64_t temp = 0;
    for (const auto* list : {&o.inputs, &o.outputs})
      for (int32_t id : *list) {
        if (id < 0) continue;
        const TfliteTensor& t = m.tensors[static_cast<size_t>(id)];
        temp += align_up(abi.tflite_tensor, abi.ptr);
        if (t.quant_channels) temp += abi.affine_quantization + align_up(4 + 4 * uint64_t{t.quant_channels}, abi.ptr);
      }
    b.prepare_bytes = std::max(b.prepare_bytes, list + temp);
    prepare_peak = std::max(prepare_peak, tail_after_prepare[i] + list + temp);
  }

  // Operators of other subgraphs (control flow) are counted in the structs
  // above but their kernels are not read.
  if (m.all_op_count > m.ops.size())
    b.unmodelled.push_back(fmt::format("{} operators of subgraphs 1..{}", m.all_op_count - m.ops.size(), m.subgraph_count - 1));
  b.alignment_bytes = kBufferAlignment;
  b.complete = b.unmodelled.empty();
  b.blockers = tflm_blockers(m);
  // MicroInterpreter::AllocateTensors() peaks in one of three phases, each
  // with only the tail allocated by then: a kernel's Prepare (before the
  // scratch handles, variables and I/O tensors), the planning (before the
  // I/O tensors), and the final plan beside the whole tail.
  b.planning_peak_bytes = tail_while_planning + b.planning_bytes;
  b.prepare_peak_bytes = prepare_peak;
  const uint64_t final_state = b.allocator_bytes + b.tail_bytes + b.head_bytes;
  const uint64_t needed = b.alignment_bytes + std::max({final_state, b.planning_peak_bytes, b.prepare_peak_bytes});
  // GreedyMemoryPlanner keeps offsets and the plan's extent in an int on
  // every target: a head of 2 GiB or more overflows, whatever each tensor.
  const bool one_too_big = std::any_of(planned.begin(), planned.end(), [](const PlanBuffer& p) {
    return p.bytes > static_cast<uint64_t>(INT32_MAX);  // said by tflm_blockers
  });
  if (b.head_bytes > static_cast<uint64_t>(INT32_MAX) && !one_too_big)
    b.blockers.push_back(fmt::format("tensors of {} B live together (TFLite Micro's planner holds offsets and the "
                                     "plan's extent in an int: 2 GiB or more overflows)",
                                     units::grouped(b.head_bytes)));
  // A 32-bit target's size_t cannot even say the size.
  else if (target == Target::cortex_m && needed > UINT32_MAX)
    b.blockers.push_back(fmt::format("an arena of {} B (more than a 32-bit address space holds)", units::grouped(needed)));
  if (b.runnable()) b.recommended_bytes = needed;
  return b;
}

}  // namespace edgemem::plan
