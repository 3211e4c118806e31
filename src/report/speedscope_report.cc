// speedscope's file format (https://www.speedscope.app/file-format-schema.json):
// one sampled profile per pool of what is live at the end, then one of the
// live set at the peak. A sample is a stack and its weight the bytes it
// holds, so speedscope's "left heavy" view is a flame graph of live memory.
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "edgemem/exports.h"
#include "live_stacks.h"

namespace edgemem {

using nlohmann::json;

namespace {

class Frames {
 public:
  size_t index(const std::string& name) {
    auto [it, fresh] = index_.try_emplace(name, table_.size());
    if (fresh) table_.push_back(frame(name));
    return it->second;
  }
  json table() const { return table_; }

 private:
  // A symbolised frame "function (file:line)" gives speedscope its file and line.
  static json frame(const std::string& name) {
    static const std::regex symbolised(R"(^(.+) \(([^()]+):([0-9]{1,9})\)$)");
    std::smatch m;
    if (std::regex_match(name, m, symbolised))
      return {{"name", m[1].str()}, {"file", m[2].str()}, {"line", std::stoul(m[3].str())}};
    return {{"name", name}};
  }
  std::map<std::string, size_t> index_;
  json table_ = json::array();
};

json profile(const std::string& name, const std::vector<const LiveStack*>& stacks, Frames& frames) {
  json samples = json::array(), weights = json::array();
  uint64_t total = 0;
  for (const LiveStack* s : stacks) {
    json stack = json::array();
    for (const std::string& f : s->frames) stack.push_back(frames.index(f));
    samples.push_back(std::move(stack));
    weights.push_back(s->bytes);
    total += s->bytes;
  }
  return {{"type", "sampled"}, {"name", name},       {"unit", "bytes"},        {"startValue", 0},
          {"endValue", total}, {"samples", samples}, {"weights", weights}};
}

// Profiles per root, in the order the roots first appear.
void add_profiles(json& profiles, const std::vector<LiveStack>& stacks, const std::string& what, Frames& frames) {
  std::vector<std::pair<std::string, std::vector<const LiveStack*>>> roots;
  for (const LiveStack& s : stacks) {
    if (roots.empty() || roots.back().first != s.root) roots.push_back({s.root, {}});
    roots.back().second.push_back(&s);
  }
  for (const auto& [root, members] : roots) profiles.push_back(profile(what + ": " + root, members, frames));
}

}  // namespace

std::string speedscope_json(const InputSummary& input, const AnalysisResult& result) {
  Frames frames;
  json profiles = json::array();
  add_profiles(profiles, live_stacks(result, LiveSet::at_end), "live at end", frames);
  add_profiles(profiles, live_stacks(result, LiveSet::at_peak), "live at peak", frames);
  json doc = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
              {"shared", {{"frames", frames.table()}}},
              {"profiles", profiles},
              {"name", input.path},
              {"activeProfileIndex", 0},
              {"exporter", "edgemem"}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace edgemem
