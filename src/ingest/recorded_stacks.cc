#include "recorded_stacks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>

namespace edgemem {

RecordedStacks::RecordedStacks(size_t max_nodes, bool name_frames) : max_nodes_(max_nodes), name_frames_(name_frames) {
  nodes_.push_back({kTop, 0, kNoCut});
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
  // V8's builtins (node links them into its binary, as Builtins_*) are
  // code V8 generated: its interpreter's entry trampoline stands for each
  // function it interprets, and the stubs around JavaScript (entry, API
  // call, C entry) change as it compiles a function. Its C++ that calls a
  // native function from them (v8::internal::Builtin_HandleApiCall,
  // FunctionCallbackArguments::Call) is the interpreter's slow path only.
  Code code = Code::module;
  const std::string_view outermost = frames.empty() ? std::string_view() : std::string_view(frames.front());
  if ((module == kNoModule && address != 0) || outermost.starts_with("Builtins_")) code = Code::generated;
  else if (outermost.starts_with("v8::internal::")) code = Code::runtime_call;
  return at->second = frame_list(fmt::format("{}", fmt::join(frames, ";")), code);
}

uint32_t RecordedStacks::frame_list(std::string text, Code code) {
  auto [id, added] = frame_list_ids_.try_emplace(std::move(text), static_cast<uint32_t>(frame_lists_.size()));
  if (added) {
    frame_lists_.push_back(id->first);
    frame_code_.push_back(code);
  }
  return id->second;
}

std::optional<uint32_t> RecordedStacks::child(uint32_t parent, uint64_t address, uint32_t module) {
  return node(parent, frames_of(address, module));
}

std::optional<uint32_t> RecordedStacks::node(uint32_t parent, uint32_t frames) {
  uint64_t key = uint64_t{parent} << 32 | frames;
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  if (nodes_.size() >= max_nodes_) return std::nullopt;
  const uint32_t above = nodes_[parent].cut;
  auto id = static_cast<uint32_t>(nodes_.size());
  uint32_t cut = kNoCut;
  if (frame_code_[frames] == Code::generated) {
    if (generated_ == kNoCut) {
      if (nodes_.size() + 1 >= max_nodes_) return std::nullopt;
      generated_ = id++;
      nodes_.push_back({kTop, frame_list("(JIT code)", Code::generated), generated_});
      index_.emplace(uint64_t{kTop} << 32 | nodes_.back().frames, generated_);
    }
    cut = generated_;
  } else if (above == kNoCut || (above == generated_ && frame_code_[frames] == Code::runtime_call)) {
    cut = above;
  } else if (above == parent) {
    cut = id;  // a node of a cut stack: its own
  } else {
    std::optional<uint32_t> inward = node(above, frames);
    if (!inward || nodes_.size() >= max_nodes_) return std::nullopt;
    cut = *inward;
    id = static_cast<uint32_t>(nodes_.size());
  }
  nodes_.push_back({parent, frames, cut});
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
