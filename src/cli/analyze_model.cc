// `analyze TRACE --model MODEL`: reads the two files and hands them to the
// comparison (plan/plan_vs_capture.h); nothing is computed here.
#include "cli/analyze_model.h"

#include <fmt/format.h>

#include "analysis/tflm_capture.h"
#include "cli/commands.h"
#include "cli/input_stream.h"
#include "plan/tflite_model.h"
#include "session/decompressor.h"

namespace edgemem::cli {

std::optional<plan::PlanVsCapture> compare_with_model(const AnalyzeArgs& args) {
  std::string error;
  auto model_file = read_whole_file(args.model, error, plan::tflite_input());
  if (!model_file) {
    fail(args.model, error);
    return std::nullopt;
  }
  auto model = plan::read_tflite({reinterpret_cast<const uint8_t*>(model_file->data()), model_file->size()}, error);
  if (!model) {
    fail(args.model, error);
    return std::nullopt;
  }
  auto file = read_whole_file(args.path, error, {});
  if (!file) {
    fail(args.path, error);
    return std::nullopt;
  }
  auto trace = decompressed(std::move(*file), error);
  if (!trace) {
    fail(args.path, error);
    return std::nullopt;
  }
  auto capture =
      read_tflm_capture({reinterpret_cast<const uint8_t*>(trace->data()), trace->size()}, args.path, error);
  if (!capture) {
    fmt::print(stderr, "edgemem: {}\n", error);
    return std::nullopt;
  }
  return plan::compare_plan_with_capture(*model, plan::target_named(args.target), *capture);
}

}  // namespace edgemem::cli
