// The whole tensor arena TFLite Micro's MicroInterpreter::AllocateTensors()
// needs, estimated from the model file alone: the planned head (tensors plus
// the scratch buffers kernels request in Prepare), the persistent tail
// (runtime structs, kernel op data, variable tensors, the interpreter's
// input/output TfLiteTensors), the allocator's own objects, and the temporary
// peak while the memory plan is computed — which arena_used_bytes() does not
// report (tflite-micro issue #2738) but which AllocateTensors() needs.
//
// Sizes follow the reference kernels and TFLite Micro's structs laid out for
// the target's pointer width. Where an operator has no cost model, the
// estimate says so (complete = false) instead of pretending.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan/tflite_model.h"

namespace edgemem::plan {

enum class Target { cortex_m, x86_64 };

// "x86-64" or "cortex-m", as the command line spells them.
inline Target target_named(std::string_view name) { return name == "x86-64" ? Target::x86_64 : Target::cortex_m; }

struct BudgetItem {
  std::string what;
  uint64_t bytes = 0;
  std::string source;  // where the size comes from
  // What TFLite Micro structure it stands for, to match a capture's tail:
  // "eval_tensors", "nodes", "op:CONV_2D", "scratch_handles", "variables",
  // "io_tensors" (plan_vs_capture.h).
  std::string kind;
};

// Where the plan puts one tensor in the head.
struct HeadPlacement {
  int32_t tensor = -1;
  uint64_t offset = 0;
};

struct ArenaBudget {
  Target target = Target::cortex_m;
  uint64_t tensor_bytes = 0;         // TFLite Micro's greedy plan of the tensors alone
  uint64_t head_bytes = 0;           // its plan of tensors and kernel scratch together
  std::vector<HeadPlacement> head_plan;  // each planned tensor's offset in that plan
  std::vector<BudgetItem> scratch;   // scratch buffers, per requesting operator
  uint64_t tail_bytes = 0;           // persistent allocations of this model
  std::vector<BudgetItem> tail;
  uint64_t allocator_bytes = 0;      // MicroAllocator's objects, placed in the tail first
  uint64_t planning_bytes = 0;       // temporary head use while AllocateTensors() plans
  std::vector<BudgetItem> planning;
  uint64_t prepare_bytes = 0;        // temporary head use while one kernel prepares
  // The whole arena in use at those two moments (the tail allocated so far
  // plus the temporary head): when one exceeds the final plan, it sets the size.
  uint64_t planning_peak_bytes = 0, prepare_peak_bytes = 0;
  uint64_t alignment_bytes = 0;      // lost if the arena array is not 16-byte aligned
  uint64_t recommended_bytes = 0;    // the kTensorArenaSize to declare; 0 when the model cannot run
  bool complete = true;              // false: some operators have no cost model
  std::vector<std::string> unmodelled;
  // Why TFLite Micro cannot run the model at all (Flex and unknown custom
  // ops, operators without a kernel, VARIANT tensors): then no arena size
  // is recommended, since none would make AllocateTensors() succeed.
  std::vector<std::string> blockers;
  bool runnable() const { return blockers.empty(); }
};

ArenaBudget arena_budget(const TfliteModel& model, Target target);

// "CONV_2D", "GATHER", ... as schema.fbs names the builtin, the custom code
// for custom ops, "BUILTIN_<n>" for a code newer than edgemem's table.
std::string operator_name(const TfliteOp& op);

}  // namespace edgemem::plan
