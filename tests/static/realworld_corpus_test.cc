// Real files from public repositories (tests/data/realworld, listed with
// their origin and licence in tests/data/realworld/SOURCES-collected.md),
// each with a truth file whose numbers come from outside edgemem: what the
// file itself states (armlink Grand Totals, IAR "bytes of ... memory", Keil
// "Max Depth"), a report written beside it (esp-idf-size, Zephyr's
// zephyr.stat) or GNU binutils / flatc run on it or on its companion ELF.
//
// Every file is compared and printed as "exact" or "wrong" with both values,
// so a parser fix shows up in the log. A truth file that says
// "edgemem_known_wrong" must STILL be wrong: when a fix makes it exact, the
// mark has to go (the numbers themselves are never loosened).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/tflite_model.h"
#include "static/elf_image.h"
#include "static/linker_map.h"
#include "static/stack_usage.h"
#include "test_support.h"

namespace edgemem {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using edgemem::test::region_used;

const std::string kRoot = std::string(EDGEMEM_TEST_DATA_DIR) + "/realworld";

// One number (or list, written out) the truth states, and what edgemem says.
struct Check {
  std::string key, want, got;
};

std::string str(uint64_t v) { return std::to_string(v); }

template <typename T>
std::string joined(const std::vector<T>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ',';
    if constexpr (std::is_same_v<T, std::string>)
      out += item;
    else
      out += std::to_string(item);
  }
  return out;
}

std::string want_of(const json& v) {
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v) {
      if (!out.empty()) out += ',';
      out += item.is_string() ? item.get<std::string>() : std::to_string(item.get<int64_t>());
    }
    return out;
  }
  return v.is_string() ? v.get<std::string>() : std::to_string(v.get<uint64_t>());
}

// Sizes summed over every output section of that name (GNU ld may list one twice).
std::optional<uint64_t> section_size(const LinkerMap& m, const std::string& name) {
  std::optional<uint64_t> sum;
  for (const auto& s : m.sections)
    if (s.name == name) sum = sum.value_or(0) + s.size;
  return sum;
}

std::optional<LinkerMap> load_map(const std::string& path, std::string& error) {
  return parse_linker_map(test::read_file(path), error);
}

std::vector<Check> gnu_map(const std::string& path, const json& t) {
  std::vector<Check> out;
  std::string error;
  auto m = load_map(path, error);
  std::string fail = "not parsed: " + error;
  for (const auto& [name, r] : t["regions"].items()) {
    const MapRegion* found = nullptr;
    if (m)
      for (const auto& region : m->regions)
        if (region.name == name) found = &region;
    std::string missing = m ? "no such region" : fail;
    out.push_back({"region " + name + " origin", want_of(r["origin"]), found ? str(found->origin) : missing});
    out.push_back({"region " + name + " length", want_of(r["length"]), found ? str(found->length) : missing});
    // Optional: what the linker's own --print-memory-usage table says is used, and the memory's kind.
    if (r.contains("used")) out.push_back({"region " + name + " used", want_of(r["used"]), found ? str(found->used) : missing});
    if (r.contains("kind")) {
      static const char* kinds[] = {"flash", "ram", "other"};
      out.push_back({"region " + name + " kind", r["kind"].get<std::string>(),
                     found ? kinds[static_cast<int>(found->kind)] : missing});
    }
  }
  auto size_of = [&](const std::string& name) -> std::string {
    if (!m) return fail;
    auto size = section_size(*m, name);
    return size ? str(*size) : "no such section";
  };
  for (const auto& [name, size] : t["sections"].items()) out.push_back({"section " + name, want_of(size), size_of(name)});
  const json groups = t.value("section_groups", json::object());
  for (const auto& [label, group] : groups.items()) {
    std::string got;
    uint64_t sum = 0;
    for (const auto& name : group["sections"]) {
      auto size = m ? section_size(*m, name.get<std::string>()) : std::nullopt;
      if (!size) got = m ? "no section " + name.get<std::string>() : fail;
      sum += size.value_or(0);
    }
    out.push_back({"sections " + label, want_of(group["bytes"]), got.empty() ? str(sum) : got});
  }
  return out;
}

std::vector<Check> armlink(const std::string& path, const json& t) {
  std::string error;
  auto m = load_map(path, error);
  if (!m) return {{"parse", "armlink map", "not parsed: " + error}};
  const MapTotals& s = m->totals;
  // Totals edgemem sums from the entries it read; flash/RAM use from its regions.
  return {{"code", want_of(t["code"]), str(s.code)},
          {"ro_data", want_of(t["ro_data"]), str(s.ro_data)},
          {"rw_data", want_of(t["rw_data"]), str(s.rw_data)},
          {"zi_data", want_of(t["zi_data"]), str(s.zi_data)},
          {"total_ro (code + ro_data)", want_of(t["total_ro"]), str(s.code + s.ro_data)},
          {"total_rw (ram regions used)", want_of(t["total_rw"]), str(region_used(*m, RegionKind::ram))},
          {"total_rom (flash regions used)", want_of(t["total_rom"]), str(region_used(*m, RegionKind::flash))}};
}

std::vector<Check> iar(const std::string& path, const json& t) {
  std::string error;
  auto m = load_map(path, error);
  if (!m) return {{"parse", "IAR map", "not parsed: " + error}};
  const MapTotals& s = m->totals;
  // Flash holds exactly what IAR counts as readonly memory. (RAM is not
  // compared: placements used in parts hold alignment gaps IAR's readwrite
  // total leaves out.)
  uint64_t readonly = t["readonly_code"].get<uint64_t>() + t["readonly_data"].get<uint64_t>();
  return {{"readonly code", want_of(t["readonly_code"]), str(s.code)},
          {"readonly data", want_of(t["readonly_data"]), str(s.ro_data)},
          {"readwrite data", want_of(t["readwrite_data"]), str(s.rw_data + s.zi_data)},
          {"flash used (readonly code + data)", str(readonly), str(region_used(*m, RegionKind::flash))}};
}

std::vector<Check> keil_htm(const std::string& path, const json& t) {
  std::string error;
  auto report = parse_keil_callgraph(test::read_file(path), false, error);
  if (!report) return {{"parse", "Keil call graph", "not parsed: " + error}};
  std::vector<Check> out;
  // edgemem's own walk of the graph, not the number it echoes.
  out.push_back({"worst root", want_of(t["max_stack_bytes"]),
                 report->roots.empty() ? "no roots" : str(report->roots[0].worst_case_bytes)});
  for (const auto& [fn, depth] : t["root_max_depth"].items()) {
    std::string got = "not a root";
    for (const auto& r : report->roots)
      if (r.function == fn) got = str(r.worst_case_bytes);
    out.push_back({"root " + fn, want_of(depth), got});
  }
  return out;
}

std::vector<Check> su(const std::string& dir, const json& t) {
  std::string error;
  auto report = analyze_stack({dir}, false, error);
  if (!report) return {{"parse", ".su files", "not read: " + error}};
  std::vector<std::string> want, got;
  for (const auto& f : t["functions"])
    want.push_back(f[0].get<std::string>() + " " + std::to_string(f[1].get<uint64_t>()) + " " + f[2].get<std::string>());
  for (const auto& f : report->functions) got.push_back(f.name + " " + str(f.frame_bytes) + " " + f.qualifier);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  std::vector<std::string> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  return {{"files", want_of(t["files"]), str(report->files)},
          {"functions (name frame qualifier)", str(want.size()), str(got.size())},
          {"lines not matched", "", joined(missing)},
          {"functions edgemem adds", "", joined(extra)}};
}

std::vector<Check> elf(const std::string& path, const json& t) {
  std::string error;
  auto image = read_elf_image(path, error);
  if (!image) return {{"parse", "ELF", "not read: " + error}};
  std::vector<Check> out = {{"text", want_of(t["text"]), str(image->text)},
                            {"data", want_of(t["data"]), str(image->data)},
                            {"bss", want_of(t["bss"]), str(image->bss)}};
  std::vector<std::string> want, got;
  for (const auto& s : t["alloc_sections"]) want.push_back(s[0].get<std::string>() + "=" + std::to_string(s[1].get<uint64_t>()));
  for (const auto& s : image->sections)
    if (s.alloc) got.push_back(s.name + "=" + str(s.size));
  out.push_back({"alloc sections", joined(want), joined(got)});
  return out;
}

std::vector<Check> tflite(const std::string& path, const json& t) {
  std::string bytes = test::read_file(path), error;
  auto m = plan::read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
  if (!m) return {{"parse", "TFLite model", "not read: " + error}};
  std::vector<int32_t> codes;
  std::vector<std::string> customs;
  for (const auto& op : m->ops) {
    codes.push_back(op.builtin_code);
    customs.push_back(op.custom_code);
  }
  std::vector<int> types;
  for (const auto& tensor : m->tensors) types.push_back(tensor.type);
  return {{"subgraphs", want_of(t["subgraph_count"]), str(m->subgraph_count)},
          {"tensors", want_of(t["tensors"]), str(m->tensors.size())},
          {"ops", want_of(t["ops"]), str(m->ops.size())},
          {"all tensors", want_of(t["all_tensors"]), str(m->all_tensor_count)},
          {"all ops", want_of(t["all_ops"]), str(m->all_op_count)},
          {"inputs", want_of(t["inputs"]), joined(m->inputs)},
          {"outputs", want_of(t["outputs"]), joined(m->outputs)},
          {"op builtin codes", want_of(t["op_builtin_codes"]), joined(codes)},
          {"op custom codes", want_of(t["op_custom_codes"]), joined(customs)},
          {"tensor types", want_of(t["tensor_types"]), joined(types)}};
}

std::vector<Check> compare(const std::string& kind, const std::string& path, const json& truth) {
  if (kind == "gnu_map") return gnu_map(path, truth);
  if (kind == "armlink") return armlink(path, truth);
  if (kind == "iar") return iar(path, truth);
  if (kind == "keil_htm") return keil_htm(path, truth);
  if (kind == "su") return su(path, truth);
  if (kind == "elf") return elf(path, truth);
  if (kind == "tflite") return tflite(path, truth);
  return {{"kind", "a known kind", "unknown kind " + kind}};
}

TEST(RealworldCorpus, EveryFileMatchesItsOutsideTruthOrIsMarkedKnownWrong) {
  std::vector<fs::path> truths;
  for (const auto& entry : fs::directory_iterator(kRoot + "/truth"))
    if (entry.path().extension() == ".json") truths.push_back(entry.path());
  std::sort(truths.begin(), truths.end());
  ASSERT_GE(truths.size(), 45u) << "the realworld corpus is missing from " << kRoot;

  std::map<std::string, int> exact, wrong;
  for (const auto& truth_path : truths) {
    json doc = json::parse(test::read_file(truth_path.string()));
    std::string file = doc["file"], kind = doc["kind"];
    SCOPED_TRACE(file);
    std::string path = kRoot + "/" + kind + "/" + file;
    std::vector<Check> checks = compare(kind, path, doc["truth"]);
    std::string diffs;
    for (const auto& c : checks)
      if (c.want != c.got) diffs += "\n    " + c.key + ": truth " + c.want + ", edgemem " + c.got;
    bool known_wrong = doc.contains("edgemem_known_wrong");
    std::cout << "realworld " << kind << " " << file << ": " << (diffs.empty() ? "exact" : "wrong") << diffs << "\n";
    (diffs.empty() ? exact : wrong)[kind]++;
    if (known_wrong)
      EXPECT_FALSE(diffs.empty()) << "now exact: drop edgemem_known_wrong from " << truth_path.filename();
    else
      EXPECT_TRUE(diffs.empty()) << "edgemem disagrees with the truth:" << diffs;
  }
  for (const auto& [kind, n] : exact) std::cout << "realworld " << kind << ": " << n << " exact\n";
  for (const auto& [kind, n] : wrong) std::cout << "realworld " << kind << ": " << n << " wrong\n";
}

}  // namespace
}  // namespace edgemem
