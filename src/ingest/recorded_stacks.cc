#include "recorded_stacks.h"

namespace edgemem {

RecordedStacks::RecordedStacks(size_t max_nodes) : max_nodes_(max_nodes) { nodes_.push_back({kTop, kNoModule, 0}); }

uint32_t RecordedStacks::add_module(const std::string& path, uint64_t bias) {
  auto [it, fresh] = module_ids_.try_emplace({path, bias}, static_cast<uint32_t>(modules_.size()));
  if (fresh) modules_.push_back({path, bias});
  return it->second;
}

std::optional<uint32_t> RecordedStacks::child(uint32_t parent, uint64_t address, uint32_t module) {
  Key key{parent, module, address};
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  if (nodes_.size() >= max_nodes_) return std::nullopt;
  auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back({parent, module, address});
  index_.emplace(key, id);
  return id;
}

const std::vector<std::string>& RecordedStacks::frames(const Node& n) {
  auto [it, fresh] = frames_.try_emplace({n.module, n.address});
  if (!fresh) return it->second;
  if (n.address == 0)
    it->second.push_back("?");  // a node the recording does not define
  else if (n.module == kNoModule)
    it->second = symbolizer_.frames({}, 0, n.address);
  else
    it->second = symbolizer_.frames(modules_[n.module].path, modules_[n.module].bias, n.address);
  return it->second;
}

std::string RecordedStacks::name(uint64_t node) {
  std::vector<uint32_t> inner_first;
  for (uint64_t n = node; n != kTop && n < nodes_.size() && inner_first.size() < kMaxDepth; n = nodes_[n].parent)
    inner_first.push_back(static_cast<uint32_t>(n));
  std::string text;
  for (auto it = inner_first.rbegin(); it != inner_first.rend(); ++it) {
    for (const std::string& f : frames(nodes_[*it])) {
      if (!text.empty()) text += ';';
      text += f;
    }
  }
  return text;
}

}  // namespace edgemem
