#include "edgemem/pool_table.h"

#include "printable_name.h"

namespace edgemem {

std::string_view to_string(PoolKind kind) { return kind == PoolKind::arena ? "arena" : "heap"; }

PoolId PoolTable::intern(std::string_view name, PoolKind kind, bool event) {
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  if (!is_printable_name(name)) return intern(printable_name(name), kind, event);
  if (pools_.size() >= kMaxPools && name != "(other pools)") {
    if (event) ++dropped_;
    return intern("(other pools)", kind);
  }
  pools_.push_back(PoolInfo{std::string(name), kind, 0, 0, std::nullopt, std::nullopt, false,
                            name == kTensorPlacementPool});
  auto id = static_cast<PoolId>(pools_.size() - 1);
  ids_.emplace(pools_.back().name, id);
  return id;
}

PoolId PoolTable::declare(const PoolInfo& info) {
  PoolId id = intern(info.name, info.kind, false);
  // Geometry declared for a name that landed in "(other pools)" is not that pool's.
  const std::string name = pools_[id].name;
  if (name != printable_name(info.name)) return id;
  std::optional<PoolId> shared_by = pools_[id].shared_by;
  const bool mappings = pools_[id].mappings;
  pools_[id] = info;
  pools_[id].mappings = mappings || info.mappings;
  pools_[id].name = name;
  pools_[id].shared_by = shared_by;
  pools_[id].declared = true;
  pools_[id].placement = info.name == kTensorPlacementPool;
  pools_[id].kind_guessed = false;
  if (info.shares && *info.shares < pools_.size() && *info.shares != id) pools_[*info.shares].shared_by = id;
  return id;
}

std::optional<PoolId> PoolTable::partner(PoolId id) const {
  const PoolInfo& p = pools_.at(id);
  return p.shares ? p.shares : p.shared_by;
}

}  // namespace edgemem
