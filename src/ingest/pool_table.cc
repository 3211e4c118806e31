#include "edgemem/pool_table.h"

namespace edgemem {

std::string_view to_string(PoolKind kind) { return kind == PoolKind::arena ? "arena" : "heap"; }

PoolId PoolTable::intern(std::string_view name, PoolKind kind) {
  for (size_t i = 0; i < pools_.size(); ++i)
    if (pools_[i].name == name) return static_cast<PoolId>(i);
  pools_.push_back(PoolInfo{std::string(name), kind, 0, 0, std::nullopt});
  return static_cast<PoolId>(pools_.size() - 1);
}

PoolId PoolTable::declare(const PoolInfo& info) {
  PoolId id = intern(info.name, info.kind);
  pools_[id] = info;
  return id;
}

std::optional<PoolId> PoolTable::partner(PoolId id) const {
  if (pools_.at(id).shares) return pools_.at(id).shares;
  for (size_t i = 0; i < pools_.size(); ++i)
    if (pools_[i].shares == id) return static_cast<PoolId>(i);
  return std::nullopt;
}

void PoolTable::default_size(uint64_t size) {
  for (auto& pool : pools_)
    if (pool.size == 0) pool.size = size;
}

}  // namespace edgemem
