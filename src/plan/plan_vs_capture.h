// edgemem's arena plan for a model beside what a real TFLite Micro run
// captured (analysis/tflm_capture.h): each planned tensor's offset, the
// planned head, and the persistent tail structure by structure. Every
// disagreement is named, because either the plan or the model of TFLM's
// structs is then wrong for this model and target.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/tflm_capture.h"
#include "plan/arena_budget.h"
#include "plan/tflite_model.h"

namespace edgemem::plan {

enum class TensorRegion { head, tail };

struct TensorComparison {
  int32_t tensor = -1;
  std::string name;
  TensorRegion region = TensorRegion::head;  // where TFLM (or, if it did not place it, edgemem) puts it
  std::optional<uint64_t> predicted_offset, captured_offset;  // from the arena start; unset = not placed
  uint64_t predicted_bytes = 0, captured_bytes = 0;
  bool matches() const {
    return predicted_offset == captured_offset && (!captured_offset || predicted_bytes == captured_bytes);
  }
};

// One TFLM structure kind in the tail: "allocator", "eval_tensors", "nodes",
// "op:CONV_2D", "scratch_handles", "variables", "io_tensors", or
// "unmodelled:<site>" for what edgemem has no item for.
struct TailComparison {
  std::string kind;
  std::string what;  // edgemem's description, or the capture's site name
  uint64_t predicted_bytes = 0, captured_bytes = 0;  // padding included, as the tail grew
  std::vector<std::string> sites;  // captured sites ("CONV_2D.Init:3")
};

struct PlanVsCapture {
  Target target = Target::cortex_m;
  uint64_t arena_bytes = 0;
  uint64_t predicted_head_bytes = 0, captured_head_bytes = 0;
  uint64_t predicted_tail_bytes = 0, captured_tail_bytes = 0;  // allocator objects included
  std::vector<TensorComparison> tensors;  // by tensor index
  std::vector<TailComparison> tail;       // in the order the capture allocated them
  std::vector<std::string> differences;   // one line each, every disagreement above and below
  bool matches() const { return differences.empty(); }
};

PlanVsCapture compare_plan_with_capture(const TfliteModel& model, Target target, const TflmCapture& capture);

}  // namespace edgemem::plan
