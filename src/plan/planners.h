// Arena planners behind one small interface: buffers with a size and an
// inclusive lifetime in, one offset per buffer out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgemem::plan {

struct Buffer {
  uint64_t size = 0;
  int32_t first = 0, last = 0;
  int64_t offline_offset = -1;  // fixed by an offline plan, -1 = free to place
};

struct Plan {
  std::vector<uint64_t> offsets;  // per buffer, in input order
  uint64_t arena_bytes = 0;       // max over buffers of offset + size
  std::string strategy;
};

// TFLite Micro's GreedyMemoryPlanner, reproduced: offline buffers first at
// their offsets, the rest by size (largest first; equal sizes in reverse
// order of addition, as its stable sort over a tail-filled array leaves
// them), each at the lowest gap among buffers live at the same time.
Plan tflm_greedy_plan(const std::vector<Buffer>& buffers);

// edgemem's planner: several orders and placement rules, exact search for
// small graphs, the smallest valid plan wins.
Plan best_plan(const std::vector<Buffer>& buffers);

// No plan can be smaller: the most bytes live at any one time (online
// buffers, plus the bytes the offline buffers live then cover: those may
// share bytes on purpose), or the extent of the offline plan, whichever is larger.
uint64_t lower_bound(const std::vector<Buffer>& buffers);

// True if no two buffers live at the same time share a byte.
bool plan_is_valid(const std::vector<Buffer>& buffers, const Plan& plan);

}  // namespace edgemem::plan
