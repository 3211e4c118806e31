// The call stacks of a recorded process as one tree for the whole process:
// each thread's recording numbers its own stack nodes, and the same stack
// on two threads must be one site. A node is the frames one return address
// stands for (symbolised once per address, in the module mapped there when
// it was first seen) under its caller's node, so two addresses with the
// same frames (two calls on one line) are one node, as their text is one
// site. Stacks are joined into text only when a site's name is asked for:
// joining every stack cost more than the rest of reading a recording.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "edgemem/site_table.h"
#include "static/process_symbolizer.h"

namespace edgemem {

class RecordedStacks : public SiteNamer {
 public:
  static constexpr uint32_t kTop = 0;  // the caller of every stack's outermost frame
  static constexpr uint32_t kNoModule = UINT32_MAX;
  // Frames named from the innermost; the recorder walks 64, more means a damaged tree.
  static constexpr size_t kMaxDepth = 256;

  // Without `name_frames` a return address stands for itself: for reading a
  // recording's head to judge its format, where opening every module's
  // debug information would cost more than the rest of the run.
  RecordedStacks(size_t max_nodes, bool name_frames);
  // The same path, bias and build give the same id, so a module mapped
  // again at its old place does not split its stacks (and one rebuilt
  // between a dlclose and a dlopen is another module). `record` is the MODULE
  // record's text: the path, then a NUL and the GNU build ID if known.
  uint32_t add_module(const std::string& record, uint64_t bias);
  // Objects whose file is another build than the one recorded.
  const std::vector<std::string>& changed_modules() const { return symbolizer_.changed_modules(); }
  // The node for a call returning to `address` from under `parent`;
  // nullopt once the tree holds `max_nodes` (damaged input).
  std::optional<uint32_t> child(uint32_t parent, uint64_t address, uint32_t module);
  size_t size() const { return nodes_.size(); }
  // Frames from the outermost to the innermost, joined by ';'.
  std::string name(uint64_t node) override;

 private:
  struct Node {
    uint32_t parent;
    uint32_t frames;  // in frame_lists_
  };
  struct AddressHash {
    size_t operator()(const std::pair<uint32_t, uint64_t>& a) const {
      return std::hash<uint64_t>{}(a.second * 0x9E3779B97F4A7C15ull ^ a.first);
    }
  };
  struct Module {
    std::string path;
    uint64_t bias;
    std::string build_id;
  };
  // The frames of a return address in a module, as an id in frame_lists_.
  uint32_t frames_of(uint64_t address, uint32_t module);

  size_t max_nodes_;
  bool name_frames_;
  std::vector<Node> nodes_;                       // [kTop] stands for no frame
  std::unordered_map<uint64_t, uint32_t> index_;  // parent << 32 | frames -> node
  std::vector<Module> modules_;
  std::map<std::tuple<std::string, uint64_t, std::string>, uint32_t> module_ids_;  // path, bias, build ID
  // Each at most one entry per node.
  std::unordered_map<std::pair<uint32_t, uint64_t>, uint32_t, AddressHash> address_frames_;
  std::vector<std::string> frame_lists_;  // frames joined by ';'
  std::unordered_map<std::string, uint32_t> frame_list_ids_;
  ProcessSymbolizer symbolizer_;
};

}  // namespace edgemem
