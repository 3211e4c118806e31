#include "recorded_stacks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace edgemem {

RecordedStacks::RecordedStacks(size_t max_nodes, bool name_frames) : max_nodes_(max_nodes), name_frames_(name_frames) {
  nodes_.push_back({kTop, 0});
}

uint32_t RecordedStacks::add_module(const std::string& record, uint64_t bias) {
  size_t nul = record.find('\0');
  std::string path = record.substr(0, nul), build_id = nul == std::string::npos ? std::string() : record.substr(nul + 1);
  auto [it, fresh] = module_ids_.try_emplace({path, bias, build_id}, static_cast<uint32_t>(modules_.size()));
  if (fresh) modules_.push_back({path, bias, build_id});
  return it->second;
}

uint32_t RecordedStacks::frames_of(uint64_t address, uint32_t module) {
  auto [at, fresh] = address_frames_.try_emplace({module, address});
  if (!fresh) return at->second;
  std::vector<std::string> frames;
  if (address == 0)
    frames.push_back("?");  // a node the recording does not define
  else if (!name_frames_)
    frames.push_back(fmt::format("{:#x}", address));
  else if (module == kNoModule)
    frames = symbolizer_.frames({}, {}, 0, address);
  else
    frames = symbolizer_.frames(modules_[module].path, modules_[module].build_id, modules_[module].bias, address);
  auto [id, added] = frame_list_ids_.try_emplace(fmt::format("{}", fmt::join(frames, ";")),
                                                 static_cast<uint32_t>(frame_lists_.size()));
  if (added) frame_lists_.push_back(id->first);
  return at->second = id->second;
}

std::optional<uint32_t> RecordedStacks::child(uint32_t parent, uint64_t address, uint32_t module) {
  uint64_t key = uint64_t{parent} << 32 | frames_of(address, module);
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  if (nodes_.size() >= max_nodes_) return std::nullopt;
  auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back({parent, static_cast<uint32_t>(key)});
  index_.emplace(key, id);
  return id;
}

std::string RecordedStacks::name(uint64_t node) {
  std::vector<uint32_t> inner_first;
  for (uint64_t n = node; n != kTop && n < nodes_.size() && inner_first.size() < kMaxDepth; n = nodes_[n].parent)
    inner_first.push_back(static_cast<uint32_t>(n));
  std::string text;
  for (auto it = inner_first.rbegin(); it != inner_first.rend(); ++it) {
    const std::string& frames = frame_lists_[nodes_[*it].frames];
    if (frames.empty()) continue;
    if (!text.empty()) text += ';';
    text += frames;
  }
  return text;
}

}  // namespace edgemem
