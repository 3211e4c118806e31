// edgemem plan MODEL.tflite: the tensor arena TFLite Micro would plan, the
// smaller one edgemem finds, and the bound no plan can beat.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/kind_hint.h"
#include "cli/options.h"
#include "cli/report_file.h"
#include "plan/model_plan.h"
#include "report/plan_report.h"

namespace edgemem::cli {
namespace {

struct PlanArgs {
  std::string model;
  std::string planner = "best";
  bool json = false;
  bool reorder = false;
  std::string html;
  std::string target = "cortex-m";
  uint64_t declared = 0;
};

int run_plan(const PlanArgs& args) {
  if (std::string clash = clashing_outputs({args.model}, {{"--html", args.html}}); !clash.empty()) return fail(clash);
  std::string error;
  auto file = read_whole_file(args.model, error, hinted(plan::tflite_input(), args.model, "plan"));
  if (!file) return fail(args.model, error);
  auto model = plan::read_tflite({reinterpret_cast<const uint8_t*>(file->data()), file->size()}, error);
  if (!model) return fail(args.model, error + kind_hint(args.model, *file, "plan"));
  plan::PlanOptions options;
  options.planner = args.planner == "greedy" ? plan::Planner::tflm_greedy : plan::Planner::best;
  options.target = plan::target_named(args.target);
  if (args.declared) options.declared = args.declared;
  // Vela's offline plan shares bytes between tensors on the strength of its
  // own operator order: another order would break the plan, not improve it.
  if (args.reorder && model->offline_offsets)
    return fail("--reorder", fmt::format("{} carries an offline memory plan (Vela's): its tensor offsets are fixed to "
                                         "its operator order; leave --reorder out", args.model));
  options.reorder = args.reorder;
  plan::PlanReport r = plan::plan_model(*model, args.model, options);
  fmt::print("{}", args.json ? plan_json(r) : plan_text(r));
  if (!args.html.empty() && !write_report_file(args.html, plan_html(r), "--html")) return 2;
  return r.against_user() ? 1 : 0;
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "Plan the tensor arena of a .tflite model");
  file_name(cmd->add_option("model", args->model, "The .tflite model"))->required();
  add_name_option(*cmd, "--planner", args->planner, "best (edgemem) | greedy (TFLite Micro's)", "--planner",
                  {"best", "greedy"});
  cmd->add_flag("--json", args->json, "Print the edgemem.plan/1 JSON document");
  add_name_option(*cmd, "--target", args->target, "Struct sizes of the runtime: cortex-m (32-bit) | x86-64", "--target",
                  {"cortex-m", "x86-64"});
  add_size_option(*cmd, "--declared", args->declared, "The kTensorArenaSize the firmware declares, to compare");
  file_name(cmd->add_option("--html", args->html, "Also write a self-contained HTML page (both plans over the operators, the arena in parts)"));
  cmd->add_flag("--reorder", args->reorder, "Search the operator order with the lowest peak (Liberis & Lane)");
  exit_code_help(*cmd, "the --declared arena is shorter than the recommended one, or TFLite Micro cannot run the model",
                 "edgemem plan --declared 64K model.tflite || echo 'kTensorArenaSize is too small'");
  cmd->callback([args] { throw CLI::RuntimeError(run_plan(*args)); });
}

}  // namespace edgemem::cli
