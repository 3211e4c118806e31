// Writes small .tflite models for tests whose point is one odd tensor or
// operator (a -1 in a shape, a tensor past 4 GiB) that no public model has.
// Field slots are the TFLite schema's (4 + 2 x field id), as the reader's.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <string>
#include <vector>

namespace edgemem::test {

struct TinyTensor {
  std::vector<int32_t> shape;
  int8_t type = 9;  // INT8
  std::string name;
  bool variable = false;  // is_variable: persistent state, in the arena's tail
};

struct TinyOp {
  int32_t builtin_code = 0;
  std::vector<int32_t> inputs, outputs;
};

// One subgraph of activations only (buffer 0, empty, for every tensor);
// graph input: tensor 0, graph output: the last tensor.
inline std::string tiny_tflite(const std::vector<TinyTensor>& tensors, const std::vector<TinyOp>& ops) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<void>> codes, tensor_tables, op_tables;
  auto table = [&](auto&& fill) {
    auto start = b.StartTable();
    fill();
    return flatbuffers::Offset<void>(b.EndTable(start));
  };
  for (const TinyOp& op : ops) {
    codes.push_back(table([&] {
      b.AddElement<int8_t>(4, static_cast<int8_t>(op.builtin_code < 127 ? op.builtin_code : 127), 0);
      b.AddElement<int32_t>(10, op.builtin_code, 0);
    }));
  }
  for (const TinyTensor& t : tensors) {
    auto shape = b.CreateVector(t.shape);
    auto name = b.CreateString(t.name);
    tensor_tables.push_back(table([&] {
      b.AddOffset(4, shape);
      b.AddElement<int8_t>(6, t.type, 0);
      b.AddElement<uint8_t>(14, t.variable ? 1 : 0, 0);
      b.AddOffset(10, name);
    }));
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    auto in = b.CreateVector(ops[i].inputs), out = b.CreateVector(ops[i].outputs);
    op_tables.push_back(table([&] {
      b.AddElement<uint32_t>(4, static_cast<uint32_t>(i), 0);
      b.AddOffset(6, in);
      b.AddOffset(8, out);
    }));
  }
  auto tensor_list = b.CreateVector(tensor_tables), op_list = b.CreateVector(op_tables);
  auto inputs = b.CreateVector(std::vector<int32_t>{0});
  auto outputs = b.CreateVector(std::vector<int32_t>{static_cast<int32_t>(tensors.size()) - 1});
  auto subgraph = table([&] {
    b.AddOffset(4, tensor_list);
    b.AddOffset(6, inputs);
    b.AddOffset(8, outputs);
    b.AddOffset(10, op_list);
  });
  auto subgraphs = b.CreateVector(std::vector{subgraph}), code_list = b.CreateVector(codes);
  auto empty = table([] {});
  auto buffers = b.CreateVector(std::vector{empty});
  auto model = table([&] {
    b.AddElement<uint32_t>(4, 3, 0);
    b.AddOffset(6, code_list);
    b.AddOffset(8, subgraphs);
    b.AddOffset(12, buffers);
  });
  b.Finish(model, "TFL3");
  return {reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()};
}

}  // namespace edgemem::test
