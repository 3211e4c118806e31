// `edgemem analyze TRACE --model MODEL`: edgemem's plan beside a TFLite
// Micro capture, as a text section after the trace summary and as the
// "plan_vs_capture" member of the edgemem.analyze/1 JSON document.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "edgemem/report.h"
#include "plan/plan_vs_capture.h"

namespace edgemem {

std::string plan_vs_capture_text(const plan::PlanVsCapture& c, const std::string& model_path);
nlohmann::json plan_vs_capture_json(const plan::PlanVsCapture& c, const std::string& model_path);
// The whole edgemem.analyze/1 document with its "plan_vs_capture" member.
std::string analyze_json_with_capture(const InputSummary& input, const AnalysisResult& result,
                                      const plan::PlanVsCapture& c, const std::string& model_path);

}  // namespace edgemem
