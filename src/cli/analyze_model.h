#pragma once

#include <optional>

#include "cli/commands.h"
#include "plan/plan_vs_capture.h"

namespace edgemem::cli {

// Reads --model and the capture; on bad input prints the one-line reason and returns nullopt (exit 2).
std::optional<plan::PlanVsCapture> compare_with_model(const AnalyzeArgs& args);

}  // namespace edgemem::cli
