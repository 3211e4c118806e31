// Memory pools: the malloc heap and each arena, declared by the trace or
// created on first use. Sizes may be unknown (0) until declared or given
// on the command line (--arena-size).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "edgemem/event.h"

namespace edgemem {

enum class PoolKind : uint8_t {
  heap,   // addresses are absolute; blocks may be freed in any order
  arena,  // addresses are offsets from the arena start; stack-like allocator
};

std::string_view to_string(PoolKind kind);

struct PoolInfo {
  std::string name;
  PoolKind kind = PoolKind::heap;
  uint64_t base = 0;
  uint64_t size = 0;  // 0 = unknown
  // The other end of a two-ended arena (TFLite Micro: activations from the
  // head, persistent buffers from the tail): both pools spend the same bytes.
  std::optional<PoolId> shares;
  std::optional<PoolId> shared_by;  // set by PoolTable: the pool that declared `shares` = this one
  // The trace itself stated the geometry (POOL record). Sizes filled in
  // later (--arena-size) are assumptions, so only declared ones can prove
  // an event impossible.
  bool declared = false;
  // The blocks say where another allocator put things inside its own bytes
  // (TFLite Micro's tensors inside its arena head); they spend nothing, so
  // no usage, peak or finding counts them. Set by name: kTensorPlacementPool.
  bool placement = false;
  // Named by an event before any declaration (an emt stream joined after its
  // POOL records): "heap" is a guess, and address 0 may be an arena's first
  // offset, so it is not read as NULL.
  bool kind_guessed = false;
  // A heap's addresses are absolute: its extent is known only with its base,
  // which may be 0 (`POOL ... base=0`). emt POOL records cannot say "no
  // base", so there a heap's base 0 is taken as not known.
  bool base_known = false;
  // A recorded process's anonymous mappings: address space the kernel really
  // reserved, where terabytes are real (sanitizer shadow memory, a runtime
  // reserving its heap with MAP_NORESERVE), so no size there is corrupt.
  bool mappings = false;
};

// The pool a TFLite Micro capture records its tensor placement in
// (docs/device.md; tools/tflm_oracle/capture_probe.cc).
inline constexpr std::string_view kTensorPlacementPool = "tflm.tensors";

class PoolTable {
 public:
  // A real device has a handful of pools; a damaged log could name millions.
  // Past this many, new names share one overflow pool "(other pools)".
  static constexpr size_t kMaxPools = 1024;

  // Returns the pool with this name, creating it with `kind` if new.
  // `event`: an event names it (a declaration, or a pool named as another's
  // partner, is none): counted in dropped() when it goes to "(other pools)".
  PoolId intern(std::string_view name, PoolKind kind, bool event = true);
  void mark_kind_guessed(PoolId id) { pools_.at(id).kind_guessed = true; }
  // Declares (or re-declares) geometry; a later declaration wins.
  PoolId declare(const PoolInfo& info);
  const PoolInfo& at(PoolId id) const { return pools_.at(id); }
  PoolInfo& at(PoolId id) { return pools_.at(id); }
  size_t size() const { return pools_.size(); }
  // The pool that shares this one's bytes, declared from either side.
  std::optional<PoolId> partner(PoolId id) const;
  // Events whose pool went to "(other pools)".
  uint64_t dropped() const { return dropped_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<PoolInfo> pools_;
  std::unordered_map<std::string, PoolId, Hash, std::equal_to<>> ids_;
  uint64_t dropped_ = 0;
};

}  // namespace edgemem
