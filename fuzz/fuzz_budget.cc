// libFuzzer entry for `edgemem check`'s budget: the text is parsed as a
// budget and every limit in it evaluated against empty inputs of each kind
// (a map, a stack report, a trace's result), so a budget's own bytes can
// never crash or hang the check.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "report/budget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto budget = edgemem::parse_budget({reinterpret_cast<const char*>(data), size}, error);
  if (!budget) return 0;
  static const edgemem::LinkerMap map;
  static const edgemem::StackReport stack;
  static const edgemem::AnalysisResult trace;
  edgemem::BudgetInputs inputs;
  inputs.map = &map;
  inputs.stack = &stack;
  inputs.trace = &trace;
  (void)edgemem::evaluate_budget(*budget, inputs, error);
  return 0;
}
