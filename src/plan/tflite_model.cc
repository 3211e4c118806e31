#include "plan/tflite_model.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "report/units.h"

namespace edgemem::plan {
namespace {

using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Table;
using flatbuffers::Vector;
using flatbuffers::Verifier;

// Field slots (4 + 2 * field id) of the tables read, from the TFLite schema.
namespace model_f { constexpr uint16_t operator_codes = 6, subgraphs = 8, buffers = 12, metadata = 16; }
namespace opcode_f { constexpr uint16_t deprecated_builtin_code = 4, custom_code = 6, builtin_code = 10; }
namespace subgraph_f { constexpr uint16_t tensors = 4, inputs = 6, outputs = 8, operators = 10; }
namespace tensor_f { constexpr uint16_t shape = 4, type = 6, buffer = 8, name = 10, quantization = 12, is_variable = 14; }
namespace quant_f { constexpr uint16_t scale = 8, zero_point = 10; }
namespace op_f { constexpr uint16_t opcode_index = 4, inputs = 6, outputs = 8, intermediates = 20; }
namespace buffer_f { constexpr uint16_t data = 4, offset = 6, size = 8; }
namespace metadata_f { constexpr uint16_t name = 4, buffer = 6; }

template <typename T>
const Vector<T>* vec(const Table* t, uint16_t field) {
  return t->GetPointer<const Vector<T>*>(field);
}
const Vector<Offset<Table>>* tables(const Table* t, uint16_t field) { return vec<Offset<Table>>(t, field); }

// Structural checks: every table, vector and string read below lies inside
// the buffer, so a malformed file is rejected before it is walked.
bool verify_ints(Verifier& v, const Table* t, uint16_t field) {
  return t->VerifyOffset(v, field) && v.VerifyVector(vec<int32_t>(t, field));
}
bool verify_quantization(Verifier& v, const Table* t) {
  if (!t->VerifyOffset(v, tensor_f::quantization)) return false;
  const auto* q = t->GetPointer<const Table*>(tensor_f::quantization);
  return !q || (q->VerifyTableStart(v) && q->VerifyOffset(v, quant_f::scale) &&
                v.VerifyVector(vec<float>(q, quant_f::scale)) && q->VerifyOffset(v, quant_f::zero_point) &&
                v.VerifyVector(vec<int64_t>(q, quant_f::zero_point)) && v.EndTable());
}
bool verify_string(Verifier& v, const Table* t, uint16_t field) {
  return t->VerifyOffset(v, field) && v.VerifyString(t->GetPointer<const String*>(field));
}
template <typename F>
bool verify_tables(Verifier& v, const Table* t, uint16_t field, F&& each) {
  if (!t->VerifyOffset(v, field)) return false;
  const auto* list = tables(t, field);
  if (!list) return true;
  if (!v.VerifyVector(list)) return false;
  for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
    const Table* item = list->Get(i);
    if (!item->VerifyTableStart(v) || !each(item) || !v.EndTable()) return false;
  }
  return true;
}

bool verify_model(Verifier& v, const Table* m) {
  if (!m->VerifyTableStart(v)) return false;
  bool ok = verify_tables(v, m, model_f::operator_codes, [&](const Table* c) {
    return c->VerifyField<int8_t>(v, opcode_f::deprecated_builtin_code, 1) &&
           verify_string(v, c, opcode_f::custom_code) && c->VerifyField<int32_t>(v, opcode_f::builtin_code, 4);
  });
  ok = ok && verify_tables(v, m, model_f::subgraphs, [&](const Table* g) {
    return verify_ints(v, g, subgraph_f::inputs) && verify_ints(v, g, subgraph_f::outputs) &&
           verify_tables(v, g, subgraph_f::tensors, [&](const Table* t) {
             return verify_ints(v, t, tensor_f::shape) && t->VerifyField<int8_t>(v, tensor_f::type, 1) &&
                    t->VerifyField<uint32_t>(v, tensor_f::buffer, 4) && verify_string(v, t, tensor_f::name) &&
                    t->VerifyField<uint8_t>(v, tensor_f::is_variable, 1) && verify_quantization(v, t);
           }) &&
           verify_tables(v, g, subgraph_f::operators, [&](const Table* o) {
             return o->VerifyField<uint32_t>(v, op_f::opcode_index, 4) && verify_ints(v, o, op_f::inputs) &&
                    verify_ints(v, o, op_f::outputs) && verify_ints(v, o, op_f::intermediates);
           });
  });
  ok = ok && verify_tables(v, m, model_f::buffers, [&](const Table* b) {
    return b->VerifyOffset(v, buffer_f::data) && v.VerifyVector(vec<uint8_t>(b, buffer_f::data)) &&
           b->VerifyField<uint64_t>(v, buffer_f::offset, 8) && b->VerifyField<uint64_t>(v, buffer_f::size, 8);
  });
  ok = ok && verify_tables(v, m, model_f::metadata, [&](const Table* d) {
    return verify_string(v, d, metadata_f::name) && d->VerifyField<uint32_t>(v, metadata_f::buffer, 4);
  });
  return ok && v.EndTable();
}

std::vector<int32_t> ints(const Table* t, uint16_t field) {
  std::vector<int32_t> out;
  if (const auto* v = vec<int32_t>(t, field)) out.assign(v->begin(), v->end());
  return out;
}

}  // namespace

uint32_t element_size(int type) {
  switch (type) {
    case 0: return 4;   // FLOAT32
    case 1: return 2;   // FLOAT16
    case 2: return 4;   // INT32
    case 3: return 1;   // UINT8
    case 4: return 8;   // INT64
    case 6: return 1;   // BOOL
    case 7: return 2;   // INT16
    case 8: return 8;   // COMPLEX64
    case 9: return 1;   // INT8
    case 10: return 8;  // FLOAT64
    case 11: return 16; // COMPLEX128
    case 12: return 8;  // UINT64
    case 15: return 4;  // UINT32
    case 16: return 2;  // UINT16
    case 17: return 1;  // INT4: TFLite Micro holds one element per byte in the arena
    case 18: return 2;  // BFLOAT16
    default: return 0;  // STRING, RESOURCE, VARIANT: no fixed size
  }
}

namespace {

// Of at least the first 8 bytes.
std::string identifier_problem(std::span<const uint8_t> bytes) {
  return flatbuffers::BufferHasIdentifier(bytes.data(), "TFL3") ? std::string()
                                                                : "offset 4: expected the TFLite file identifier \"TFL3\"";
}

}  // namespace

std::optional<TfliteModel> read_tflite(std::span<const uint8_t> bytes, std::string& error) {
  if (bytes.empty()) {
    error = "empty file, expected a TFLite model";
    return std::nullopt;
  }
  if (bytes.size() < 8) {
    error = fmt::format("offset {}: the file ends before the TFLite file identifier \"TFL3\" at offset 4", bytes.size());
    return std::nullopt;
  }
  if (error = identifier_problem(bytes); !error.empty()) return std::nullopt;
  Verifier verifier(bytes.data(), bytes.size(), 64, 10'000'000);
  const Table* model = flatbuffers::GetRoot<Table>(bytes.data());
  if (!verify_model(verifier, model)) {
    error = fmt::format("the flatbuffer ({} bytes) does not verify against the TFLite schema (truncated or corrupt "
                        "model; the verifier does not tell where)", bytes.size());
    return std::nullopt;
  }
  TfliteModel out;
  const auto* subgraphs = tables(model, model_f::subgraphs);
  if (!subgraphs || subgraphs->size() == 0) {
    error = "the model has no subgraph";
    return std::nullopt;
  }
  out.subgraph_count = subgraphs->size();
  for (flatbuffers::uoffset_t i = 0; i < subgraphs->size(); ++i) {
    if (const auto* t = tables(subgraphs->Get(i), subgraph_f::tensors)) {
      out.all_tensor_count += t->size();
      for (flatbuffers::uoffset_t k = 0; k < t->size(); ++k)
        out.tensor_types.push_back(t->Get(k)->GetField<int8_t>(tensor_f::type, 0));
    }
    if (const auto* o = tables(subgraphs->Get(i), subgraph_f::operators)) out.all_op_count += o->size();
  }
  std::sort(out.tensor_types.begin(), out.tensor_types.end());
  out.tensor_types.erase(std::unique(out.tensor_types.begin(), out.tensor_types.end()), out.tensor_types.end());
  const Table* graph = subgraphs->Get(0);
  const auto* buffers = tables(model, model_f::buffers);
  auto buffer_bytes = [&](uint32_t index) -> uint64_t {
    if (!buffers || index >= buffers->size()) return 0;
    const auto* data = vec<uint8_t>(buffers->Get(index), buffer_f::data);
    return data ? data->size() : 0;
  };
  // Data stored after the flatbuffer (the > 2 GB layout: Buffer.offset from
  // the start of the file, as TFLite reads it when offset > 1). It must lie
  // inside the file; TFLite Micro itself never reads it.
  auto external_bytes = [&](uint32_t index) -> uint64_t {
    if (!buffers || index >= buffers->size()) return 0;
    const Table* b = buffers->Get(index);
    return b->GetField<uint64_t>(buffer_f::offset, 0) > 1 ? b->GetField<uint64_t>(buffer_f::size, 0) : 0;
  };
  for (flatbuffers::uoffset_t i = 0; buffers && i < buffers->size(); ++i) {
    const uint64_t offset = buffers->Get(i)->GetField<uint64_t>(buffer_f::offset, 0), size = external_bytes(i);
    if (size && (offset > bytes.size() || size > bytes.size() - offset)) {
      error = fmt::format("buffer {} says its {} B of data are at offset {}, past the end of the {} B file (a truncated "
                          "or damaged model)", i, units::grouped(size), units::grouped(offset), units::grouped(bytes.size()));
      return std::nullopt;
    }
  }

  // Tensors may share a buffer (MLPerf Tiny's str_ww: three depthwise
  // tensors one 512 B buffer): its bytes are in the model once.
  std::set<uint32_t> counted_buffers;
  if (const auto* tensors = tables(graph, subgraph_f::tensors)) {
    for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
      const Table* t = tensors->Get(i);
      TfliteTensor tensor;
      if (const auto* name = t->GetPointer<const String*>(tensor_f::name)) tensor.name = name->str();
      tensor.shape = ints(t, tensor_f::shape);
      tensor.type = t->GetField<int8_t>(tensor_f::type, 0);
      const uint32_t buffer = t->GetField<uint32_t>(tensor_f::buffer, 0);
      uint64_t data = buffer_bytes(buffer);
      tensor.has_data = data > 0;
      tensor.external_bytes = external_bytes(buffer);
      if (counted_buffers.insert(buffer).second) out.constant_bytes += data;
      tensor.is_variable = t->GetField<uint8_t>(tensor_f::is_variable, 0) != 0;
      // TFLite Micro copies quantization only when both lists are non-empty.
      if (const auto* q = t->GetPointer<const Table*>(tensor_f::quantization)) {
        const auto* scale = vec<float>(q, quant_f::scale);
        const auto* zero = vec<int64_t>(q, quant_f::zero_point);
        if (scale && zero && scale->size() > 0 && zero->size() > 0) tensor.quant_channels = scale->size();
      }
      // Unknown dimensions (-1) count as 1. A shape that multiplies out past
      // 1 TiB is no model for any device: reject it rather than overflow.
      constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;
      uint64_t elements = 1;
      bool too_big = false;
      for (int32_t d : tensor.shape) {
        uint64_t dim = d > 0 ? static_cast<uint64_t>(d) : (d == 0 ? 0 : 1);
        if (dim != 0 && elements > kMaxTensorBytes / dim) too_big = true;
        else elements *= dim;
      }
      tensor.bytes = elements * element_size(tensor.type);
      if (too_big || tensor.bytes > kMaxTensorBytes) {
        error = fmt::format("tensor {} ('{}'): its shape is larger than 1 TiB (a corrupt model)", i, tensor.name);
        return std::nullopt;
      }
      out.tensors.push_back(std::move(tensor));
    }
  }
  const auto* codes = tables(model, model_f::operator_codes);
  auto code_at = [&](uint32_t index) {
    TfliteOp op;
    if (!codes || index >= codes->size()) return op;
    const Table* c = codes->Get(index);
    // Codes above 127 live in builtin_code; the old byte field says 127.
    op.builtin_code = std::max<int32_t>(c->GetField<int8_t>(opcode_f::deprecated_builtin_code, 0),
                                        c->GetField<int32_t>(opcode_f::builtin_code, 0));
    if (const auto* custom = c->GetPointer<const String*>(opcode_f::custom_code)) op.custom_code = custom->str();
    return op;
  };
  for (flatbuffers::uoffset_t i = 0; codes && i < codes->size(); ++i) out.operator_codes.push_back(code_at(i));
  if (const auto* ops = tables(graph, subgraph_f::operators)) {
    for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
      const Table* o = ops->Get(i);
      TfliteOp op = code_at(o->GetField<uint32_t>(op_f::opcode_index, 0));
      op.inputs = ints(o, op_f::inputs);
      op.outputs = ints(o, op_f::outputs);
      op.intermediates = ints(o, op_f::intermediates);
      for (const auto* list : {&op.inputs, &op.outputs, &op.intermediates})
        for (int32_t t : *list)
          if (t >= static_cast<int32_t>(out.tensors.size())) {
            error = fmt::format("operator {} names tensor {}, but subgraph 0 has {} tensors", i, t, out.tensors.size());
            return std::nullopt;
          }
      out.ops.push_back(std::move(op));
    }
  }
  out.inputs = ints(graph, subgraph_f::inputs);
  out.outputs = ints(graph, subgraph_f::outputs);
  for (const auto* list : {&out.inputs, &out.outputs})
    for (int32_t t : *list)
      if (t < 0 || t >= static_cast<int32_t>(out.tensors.size())) {
        error = fmt::format("subgraph 0 names tensor {} as input or output, but has {} tensors", t, out.tensors.size());
        return std::nullopt;
      }

  // OfflineMemoryAllocation: [version, subgraph, tensor count, offset...].
  if (const auto* metadata = tables(model, model_f::metadata)) {
    for (flatbuffers::uoffset_t i = 0; i < metadata->size(); ++i) {
      const Table* d = metadata->Get(i);
      const auto* name = d->GetPointer<const String*>(metadata_f::name);
      if (!name || name->str() != "OfflineMemoryAllocation" || !buffers) continue;
      uint32_t index = d->GetField<uint32_t>(metadata_f::buffer, 0);
      if (index >= buffers->size()) continue;
      const auto* data = vec<uint8_t>(buffers->Get(index), buffer_f::data);
      if (!data || data->size() < 12) continue;
      std::vector<int32_t> words(data->size() / 4);
      std::memcpy(words.data(), data->data(), words.size() * 4);
      // TFLite Micro (micro_allocation_info.cc GetOfflinePlannedOffsets)
      // wants one offset per tensor of every subgraph, subgraph 0's first.
      const auto count = static_cast<uint32_t>(words[2]);
      if (count != out.all_tensor_count) {
        out.offline_count_mismatch = count;
        continue;
      }
      if (words.size() < 3 + size_t{count}) {
        error = fmt::format("the OfflineMemoryAllocation metadata names {} tensors but holds {} offsets (a damaged model)",
                            count, words.size() - 3);
        return std::nullopt;
      }
      out.offline_offsets = std::vector<int32_t>(words.begin() + 3, words.begin() + 3 + static_cast<std::ptrdiff_t>(out.tensors.size()));
    }
  }
  return out;
}

WholeInputRules tflite_input() {
  WholeInputRules rules;
  rules.what = "a TFLite model";
  rules.stream_limit = uint64_t{2} << 30;
  // Shorter heads are read_tflite's to refuse, with its offset.
  rules.check = [](std::string_view head) {
    return head.size() < 8 ? std::string()
                           : identifier_problem({reinterpret_cast<const uint8_t*>(head.data()), head.size()});
  };
  return rules;
}

}  // namespace edgemem::plan
