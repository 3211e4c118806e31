// Which tensors TFLite Micro plans into the arena head, and when each is
// live, under its own rules (micro_allocation_info.cc): graph inputs are
// created at scope 0, operator i runs at scope i + 1, a tensor lives from the
// FIRST operator that writes it to the last one that reads or writes it,
// graph outputs to the end. Constants (inline buffer data), variables (unless
// an offline plan places them) and empty tensors are not planned. A tensor
// read but never written keeps the "uninitialised" start of -1, i.e. it lives
// from before the first op; one nothing touches lives over -1..-1.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/planners.h"
#include "plan/tflite_model.h"

namespace edgemem::plan {

inline constexpr uint64_t kBufferAlignment = 16;  // TFLite Micro's arena alignment

struct PlanBuffer {
  int32_t tensor = -1;
  uint64_t bytes = 0;          // the tensor's bytes aligned to kBufferAlignment
  int32_t first = 0, last = 0;  // allocation scopes, inclusive
  int64_t offline_offset = -1;  // from OfflineMemoryAllocation, -1 = online
};

std::vector<PlanBuffer> planned_buffers(const TfliteModel& model);

// What the planners see of them: size, lifetime, offline offset.
std::vector<Buffer> planner_input(const std::vector<PlanBuffer>& planned);

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace edgemem::plan
