// Presenters: they read an AnalysisResult and the decode statistics, never events.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "edgemem/analysis_result.h"
#include "edgemem/decoder.h"

namespace edgemem {

struct InputSummary {
  std::string path;
  std::string format;
  DecodeStats stats;
  TimeBase time_base = TimeBase::sequence;
  // analyze stopped by SIGINT/SIGTERM before the input's end: the report covers what came before.
  bool interrupted = false;
};

// `edgemem analyze --json`, schema "edgemem.analyze/1" (docs/json-schema.md).
nlohmann::json to_json(const InputSummary& input, const AnalysisResult& result);
// The same, as text. Site names come from device logs and may hold bytes that
// are not UTF-8; they are replaced (U+FFFD) instead of failing the report.
std::string json_report(const InputSummary& input, const AnalysisResult& result);

// The terminal summary: worst problem first, with numbers and a next step.
std::string text_report(const InputSummary& input, const AnalysisResult& result);

// `edgemem analyze --html`: one self-contained page (charts inlined, no
// network) with the findings in the text report's order.
std::string html_report(const InputSummary& input, const AnalysisResult& result);

// --fail-on: "leak,overflow,guard,lifo,alloc-failure,fragmentation=warning|danger".
struct FailOn {
  bool leak = false, overflow = false, guard = false, lifo = false, alloc_failure = false;
  std::optional<Band> fragmentation;  // the band from which on it fails; unset = off
};
// Throws std::invalid_argument naming the bad item.
FailOn parse_fail_on(std::string_view spec);
// One line per broken rule; empty when everything holds.
std::vector<std::string> broken_rules(const FailOn& rules, const AnalysisResult& result);
// One line per rule whose check did not run (NOT CHECKED in the report):
// such a rule neither holds nor breaks. The gate judges the rules it can;
// when it could judge none of them it is refused (exit 2).
std::vector<std::string> unjudged_rules(const FailOn& rules, const AnalysisResult& result);
// How many of the rules asked for there are.
size_t rule_count(const FailOn& rules);

}  // namespace edgemem
