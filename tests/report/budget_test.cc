// Budgets for CI: every kind of limit holds or breaks on measured inputs,
// and a malformed budget or a missing input is an error, not a pass.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "report/budget.h"
#include "report/check_report.h"

namespace edgemem {
namespace {

using nlohmann::json;

LinkerMap image() {
  LinkerMap m;
  m.regions = {{"FLASH", 0x08000000, 262144, "rx", 3292, RegionKind::flash},
               {"RAM", 0x20000000, 65536, "xrw", 20512, RegionKind::ram}};
  m.sections = {{".text", 0x08000040, 3220, std::nullopt, SectionKind::code, 0},
                {".bss", 0x20000010, 16400, std::nullopt, SectionKind::bss, 0},
                {".stack", 0x20004020, 4096, std::nullopt, SectionKind::bss, 0}};
  m.symbols = {{"tensor_arena", ".bss", "app.o", 0x20000020, 16384}};
  return m;
}

StackReport stacks() {
  StackReport r;
  StackRoot reset{"Reset_Handler", 136, {"Reset_Handler", "main"}, false, {}, false, std::nullopt, {}, std::nullopt, {}};
  StackRoot tick{"SysTick_Handler", 40, {"SysTick_Handler"}, false, {}, true, std::nullopt, {}, std::nullopt, {}};
  StackRoot task{"vTaskInfer", 900, {"vTaskInfer"}, true, {"recursion: walk"}, false, std::nullopt, {}, std::nullopt, {}};
  r.roots = {task, reset, tick};
  r.interrupts = {900, 900 + 40 + 32, 900 + 40 + 32, 32, 1};
  return r;
}

const BudgetOutcome* find(const std::vector<BudgetOutcome>& out, const std::string& rule) {
  for (const auto& o : out)
    if (o.rule == rule) return &o;
  return nullptr;
}

TEST(Budget, RegionSectionAndSymbolLimits) {
  LinkerMap m = image();
  BudgetInputs in{&m, nullptr, nullptr, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_percent": 30, "min_free_bytes": 1024},
      "FLASH": {"max_bytes": 4096}}, "sections": {".bss": {"max_bytes": 16400}},
      "symbols": {"tensor_arena": {"max_bytes": 16000}}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(out.size(), 5u);
  EXPECT_FALSE(find(out, "regions.RAM.max_percent")->ok);  // 31.3 % > 30 %
  EXPECT_NE(find(out, "regions.RAM.max_percent")->message.find("31.3 %"), std::string::npos);
  EXPECT_TRUE(find(out, "regions.RAM.min_free_bytes")->ok);
  EXPECT_TRUE(find(out, "regions.FLASH.max_bytes")->ok);
  EXPECT_TRUE(find(out, "sections..bss.max_bytes")->ok);  // equal is within budget
  EXPECT_FALSE(find(out, "symbols.tensor_arena.max_bytes")->ok);
  // A percent keeps its fraction: 31.3 % is within 31.9 %, not over a rounded 31.
  out = evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_percent": 31.9}}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_TRUE(find(out, "regions.RAM.max_percent")->ok);
  // A count is whole: 0.5 failed allocations is a mistake, not 0.
  AnalysisResult t;
  t.inferences = 1;
  BudgetInputs with_trace{nullptr, nullptr, &t, nullptr};
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"fragmentation": {"max_alloc_failures": 0.5}})"), with_trace, error).empty());
  EXPECT_NE(error.find("expected a whole number"), std::string::npos) << error;
}

// Limits that could never be judged are refused, not passed: over 100 % of
// a region, or regions of an ELF (which names none).
TEST(Budget, RegionLimitsThatCannotBeJudgedAreRefused) {
  LinkerMap m = image();
  BudgetInputs in{&m, nullptr, nullptr, nullptr};
  std::string error;
  evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_percent": 150}}})"), in, error);
  EXPECT_NE(error.find("regions.RAM.max_percent: 150 % only an overflowed region"), std::string::npos) << error;
  LinkerMap elf;
  elf.toolchain = "ELF";
  BudgetInputs from_elf{&elf, nullptr, nullptr, nullptr};
  error.clear();
  evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_percent": 90}}})"), from_elf, error);
  EXPECT_NE(error.find("regions.RAM: an ELF names no memory regions"), std::string::npos) << error;
  // IAR's "place at" regions have no length: "0 B free", broken, once.
  LinkerMap iar = image();
  iar.regions.push_back({"A0", 0x08000000, 0, "", 64, RegionKind::flash});
  iar.regions.back().position_only = true;  // as the IAR parser marks it: no overflow of a length it has not
  BudgetInputs with_place_at{&iar, nullptr, nullptr, nullptr};
  error.clear();
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"regions": {"A0": {"min_free_bytes": 1}}})"), with_place_at, error).empty());
  EXPECT_NE(error.find("regions.A0.min_free_bytes: the map gives region A0 no length"), std::string::npos) << error;
}

// The map of a failed link (RAM overflowed by 432 B): a FLASH-only budget
// held on a firmware that does not exist.
TEST(Budget, TheMapOfALinkThatFailedBreaksTheBudget) {
  LinkerMap m = image();
  m.regions[1].used = 65536 + 432;
  BudgetInputs in{&m, nullptr, nullptr, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"regions": {"FLASH": {"max_percent": 90}}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_TRUE(find(out, "regions.FLASH.max_percent")->ok);
  ASSERT_NE(find(out, "regions.RAM.overflowed"), nullptr);
  EXPECT_FALSE(find(out, "regions.RAM.overflowed")->ok);
  EXPECT_EQ(find(out, "regions.RAM.overflowed")->message, "RAM overflowed by 432 B: the map is of a link that failed");
  // Beside a refused limit the failed link is still said, and nothing is said to hold.
  out = evaluate_budget(json::parse(R"({"regions": {"FLASH": {"max_percent": 90}}, "leak": {"max_leaked_bytes": 0}})"),
                        in, error);
  EXPECT_NE(error.find("leak: needs a trace"), std::string::npos) << error;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule, "regions.RAM.overflowed");
}

TEST(Budget, StackAgainstTheReservedStackAndPerRoot) {
  LinkerMap m = image();
  StackReport s = stacks();
  BudgetInputs in{&m, &s, nullptr, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"stack": {"main_stack_bytes": "map", "roots": {"vTaskInfer": 1024}}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_TRUE(find(out, "stack.main_stack_bytes")->ok);  // 972 B of the 4096 B .stack
  EXPECT_NE(find(out, "stack.main_stack_bytes")->message.find(".stack in the map"), std::string::npos);
  EXPECT_TRUE(find(out, "stack.roots.vTaskInfer")->ok);
  ASSERT_NE(find(out, "stack.allow_unbounded"), nullptr);  // the recursion is not waved through
  EXPECT_FALSE(find(out, "stack.allow_unbounded")->ok);

  out = evaluate_budget(json::parse(R"({"stack": {"main_stack_bytes": 960, "allow_unbounded": true}})"), in, error);
  EXPECT_FALSE(find(out, "stack.main_stack_bytes")->ok);  // 900 + 40 + 32 > 960
  EXPECT_EQ(find(out, "stack.allow_unbounded"), nullptr);
  // Allowed, the number still says it counts known frames only.
  EXPECT_NE(find(out, "stack.main_stack_bytes")->message.find("needs 972 B + unbounded"), std::string::npos)
      << find(out, "stack.main_stack_bytes")->message;
}

// Allowed, an unbounded root still leaves the need a lower bound: the JSON
// says which roots and why beside `measured` (once only the text's
// "+ unbounded" did, with measured 32 and ok true).
TEST(Budget, TheJsonNamesTheUnboundedRootsAStackNeedLeavesOut) {
  LinkerMap m = image();
  StackReport s = stacks();
  BudgetInputs in{&m, &s, nullptr, nullptr};
  std::string error;
  auto out = evaluate_budget(
      json::parse(R"({"stack": {"main_stack_bytes": 4096, "allow_unbounded": true,
                      "roots": {"vTaskInfer": 1024, "Reset_Handler": 1024}}})"),
      in, error);
  ASSERT_TRUE(error.empty()) << error;
  const std::vector<std::string> walk = {"vTaskInfer: recursion: walk"};
  EXPECT_EQ(find(out, "stack.main_stack_bytes")->unbounded, walk);
  EXPECT_EQ(find(out, "stack.roots.vTaskInfer")->unbounded, walk);
  EXPECT_EQ(find(out, "stack.roots.Reset_Handler")->unbounded, std::vector<std::string>{});
  const json doc = json::parse(check_json("b.json", out, std::nullopt));
  EXPECT_EQ(doc["outcomes"][0]["unbounded"], json(walk)) << doc.dump();
  EXPECT_EQ(doc["outcomes"][0]["measured"], 972);
  LinkerMap other = image();
  BudgetInputs map_only{&other, nullptr, nullptr, nullptr};
  out = evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_bytes": 65536}}})"), map_only, error);
  EXPECT_FALSE(json::parse(check_json("b.json", out, std::nullopt))["outcomes"][0].contains("unbounded"));
}

// A definition the graph cannot tell weak from static (an STM32 HAL weak
// callback): the budget is judged by the larger need, and says so.
TEST(Budget, AWeakOrStaticDoubtIsJudgedByTheLargerNeed) {
  LinkerMap m = image();
  StackReport s = stacks();
  s.roots[0].unbounded = false;
  s.roots[0].reasons.clear();
  s.roots[2].if_weak_bytes = 592;
  s.weak_or_static = {"HAL_UART_RxCpltCallback"};
  s.interrupts_if_weak = InterruptBudget{900, 900 + 592 + 32, 900 + 592 + 32, 32, 1};
  BudgetInputs in{&m, &s, nullptr, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"stack": {"main_stack_bytes": 1200, "roots": {"SysTick_Handler": 100}}})"),
                             in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "stack.main_stack_bytes")->ok);
  EXPECT_EQ(find(out, "stack.main_stack_bytes")->message,
            "main stack needs 1,524 B (thread 900 B + interrupts, all nested) were HAL_UART_RxCpltCallback weak (972 B "
            "if static), configured 1,200 B; handlers known by name only: --elf FW.elf reads the vector table");
  EXPECT_FALSE(find(out, "stack.roots.SysTick_Handler")->ok);
  EXPECT_EQ(find(out, "stack.roots.SysTick_Handler")->measured, 592);
}

// Handlers nest as their priorities let them, set at run time: the main
// stack needs every one nested unless the budget says otherwise. One level
// by default once passed 940 B against a 1,280 B stack that three handlers
// of distinct priorities took to 1,480 B under QEMU (a stranger's audit).
TEST(Budget, TheMainStackNeedsEveryHandlerNestedUnlessTold) {
  LinkerMap m = image();
  StackReport s = stacks();
  s.roots[0].unbounded = false;
  s.roots[0].reasons.clear();
  s.interrupts = {600, 600 + 300 + 36, 600 + 300 + 200 + 100 + 3 * 36, 36, 3};
  BudgetInputs in{&m, &s, nullptr, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"stack": {"main_stack_bytes": 1280}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "stack.main_stack_bytes")->ok);
  EXPECT_EQ(find(out, "stack.main_stack_bytes")->measured, 1308);
  out = evaluate_budget(json::parse(R"({"stack": {"main_stack_bytes": 1280, "nesting": "one_level"}})"), in, error);
  EXPECT_TRUE(find(out, "stack.main_stack_bytes")->ok);
  EXPECT_EQ(find(out, "stack.main_stack_bytes")->measured, 936);
}

// A handler the main-stack number counts is judged as the thread roots are:
// a recursive SysTick_Handler once passed beside "needs 584 B", its
// recursion left out. Without nesting handlers are not counted.
TEST(Budget, AnUnboundedHandlerTheMainStackCountsBreaksIt) {
  LinkerMap m = image();
  StackReport s = stacks();
  s.roots[0].unbounded = false;
  s.roots[0].reasons.clear();
  s.roots[2].unbounded = true;
  s.roots[2].reasons = {"recursion: rec"};
  BudgetInputs in{&m, &s, nullptr, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"stack": {"main_stack_bytes": 2048}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_NE(find(out, "stack.allow_unbounded"), nullptr);
  EXPECT_FALSE(find(out, "stack.allow_unbounded")->ok);
  EXPECT_NE(find(out, "stack.allow_unbounded")->message.find("SysTick_Handler is unbounded: recursion: rec"),
            std::string::npos);
  out = evaluate_budget(json::parse(R"({"stack": {"main_stack_bytes": 2048, "nesting": "none"}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(find(out, "stack.allow_unbounded"), nullptr);
  EXPECT_TRUE(find(out, "stack.main_stack_bytes")->ok);
  // Frames without a call graph (.su alone) have no roots: "needs 0 B" passed any limit.
  StackReport frames_only;
  frames_only.functions.push_back({"recurse", "a.c:1:5", 328, "static"});
  BudgetInputs su_only{&m, &frames_only, nullptr, nullptr};
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"stack": {"main_stack_bytes": 1}})"), su_only, error).empty());
  EXPECT_NE(error.find("stack.main_stack_bytes: the stack input holds frames only, no call graph"), std::string::npos)
      << error;
  error.clear();
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"stack": {"roots": {"recurse": 400}}})"), su_only, error).empty());
  EXPECT_NE(error.find("stack.roots: the stack input holds frames only"), std::string::npos) << error;
  error.clear();
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"stack": {"main_stack_bytes": 9, "nesting": true}})"), in, error).empty());
  EXPECT_NE(error.find("stack.nesting: expected a string"), std::string::npos) << error;
}

TEST(Budget, TraceLimits) {
  AnalysisResult t;
  t.inferences = 400;
  t.checks.leaks.status = CheckStatus::found;
  t.leak_rate_bytes_per_inference = 644;
  t.leaks.push_back({"model.c:58", "heap", 257600, 400, 644.0, "", 0, 0, 0, 400, 0, std::nullopt, false, {}});
  t.fragmentation.band = Band::warning;
  t.fragmentation.alloc_failures = 1;
  t.pools.push_back({"arena", PoolKind::arena, 81920, 78848, 78848, 3, 3.75});
  BudgetInputs in{nullptr, nullptr, &t, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 0},
      "fragmentation": {"max_band": "warning", "max_alloc_failures": 0},
      "arena": {"min_margin_percent": 5}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "leak.max_bytes_per_inference")->ok);
  EXPECT_TRUE(find(out, "fragmentation.max_band")->ok);
  EXPECT_FALSE(find(out, "fragmentation.max_alloc_failures")->ok);
  EXPECT_FALSE(find(out, "arena.arena")->ok);  // 3.75 % left, 5 % wanted
  // Two pools spending one 40 KiB arena from both ends (the demo's): the head
  // alone peaks at 232 B, but with its partner only 20.6 % is left.
  AnalysisResult shared;
  shared.pools.push_back({"arena", PoolKind::arena, 40960, 232, 0, 0, 20.6});
  BudgetInputs both{nullptr, nullptr, &shared, nullptr};
  out = evaluate_budget(json::parse(R"({"arena": {"min_margin_percent": 21}})"), both, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "arena.arena")->ok) << find(out, "arena.arena")->message;
  EXPECT_NE(find(out, "arena.arena")->message.find("at least 21 % wanted"), std::string::npos)  // no byte limit set
      << find(out, "arena.arena")->message;
  // The JSON's measured and limit are the percent judged, as fractions (in
  // review a percent minimum read as a byte limit of 0 beside ok false).
  EXPECT_EQ(find(out, "arena.arena")->unit, BudgetUnit::fraction);
  EXPECT_NEAR(find(out, "arena.arena")->measured.get<double>(), 0.206, 1e-4);  // (the shared peak rounded to a byte)
  EXPECT_NEAR(find(out, "arena.arena")->limit.get<double>(), 0.21, 1e-9);
  // Both minima: one outcome each, in its own unit.
  out = evaluate_budget(json::parse(R"({"arena": {"min_margin_bytes": 100, "min_margin_percent": 21}})"), both, error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_NE(find(out, "arena.arena"), nullptr);
  EXPECT_EQ(find(out, "arena.arena")->unit, BudgetUnit::bytes);
  EXPECT_EQ(find(out, "arena.arena")->limit, 100);
  EXPECT_TRUE(find(out, "arena.arena")->ok);
  ASSERT_NE(find(out, "arena.arena.min_margin_percent"), nullptr);
  EXPECT_FALSE(find(out, "arena.arena.min_margin_percent")->ok);
  EXPECT_EQ(find(out, "arena.arena.min_margin_percent")->unit, BudgetUnit::fraction);
}

// The declared arena (tensor_arena, 16,384 B at 0x20000020: aligned) against
// a recommendation of 16,400 B with its 16 B allowance for an unaligned array.
TEST(Budget, AnAlignedDeclaredArenaIsNotShortByTheAlignmentAllowance) {
  LinkerMap m = image();
  plan::ArenaBudget arena;
  arena.recommended_bytes = 16400;
  arena.alignment_bytes = 16;
  arena.complete = true;
  BudgetInputs in{&m, nullptr, nullptr, &arena};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"arena": {"min_margin_bytes": 0}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_NE(find(out, "arena.tensor_arena"), nullptr);
  EXPECT_TRUE(find(out, "arena.tensor_arena")->ok) << find(out, "arena.tensor_arena")->message;
  m.symbols[0].address = 0x20000024;  // unaligned: the 16 B are needed
  out = evaluate_budget(json::parse(R"({"arena": {"min_margin_bytes": 0}})"), in, error);
  EXPECT_FALSE(find(out, "arena.tensor_arena")->ok);
}

// One decimal could show a number on the wrong side of its limit: a message
// then contradicts its verdict.
TEST(Budget, MessagesShowTheMeasuredValueOnItsSideOfTheLimit) {
  LinkerMap m = image();  // RAM: 20,512 of 65,536 B = 31.2988 %
  BudgetInputs in{&m, nullptr, nullptr, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_percent": 31.3}}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_TRUE(find(out, "regions.RAM.max_percent")->ok);
  EXPECT_NE(find(out, "regions.RAM.max_percent")->message.find("uses 31.299 %"), std::string::npos)
      << find(out, "regions.RAM.max_percent")->message;
  // 32.04999... % rounds half-up to 32.1 but prints as 32.0: the side is read from the text.
  m.regions[1].length = 64000;
  out = evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_percent": 32}}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "regions.RAM.max_percent")->ok);
  EXPECT_NE(find(out, "regions.RAM.max_percent")->message.find("uses 32.05 %"), std::string::npos)
      << find(out, "regions.RAM.max_percent")->message;
  AnalysisResult t;
  t.inferences = 1000;
  t.checks.leaks.status = CheckStatus::found;
  t.leak_rate_bytes_per_inference = 0.04;
  BudgetInputs trace{nullptr, nullptr, &t, nullptr};
  out = evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 0}})"), trace, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "leak.max_bytes_per_inference")->ok);
  EXPECT_NE(find(out, "leak.max_bytes_per_inference")->message.find("leaks 0.04 B"), std::string::npos)
      << find(out, "leak.max_bytes_per_inference")->message;
}

// A leak that stopped on its own adds nothing to the rate now, but the
// build leaked 64 B per inference while it ran: a 50 B limit breaks.
TEST(Budget, ALeakThatStoppedStillCountsAtItsRate) {
  AnalysisResult t;
  t.inferences = 5100;
  t.checks.leaks.status = CheckStatus::found;
  t.leak_rate_bytes_per_inference = 0;
  SiteLeak leak;
  leak.site = "model.c:58";
  leak.bytes_per_inference = 64.0;
  leak.growth = LeakGrowth{};
  leak.growth->stopped_after_inference = 3000;
  leak.growth->inferences_since_stop = 2100;
  t.leaks.push_back(leak);
  BudgetInputs in{nullptr, nullptr, &t, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 50}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "leak.max_bytes_per_inference")->ok);
  EXPECT_NE(find(out, "leak.max_bytes_per_inference")->message.find("leaks 64.0 B"), std::string::npos)
      << find(out, "leak.max_bytes_per_inference")->message;
}

// A cut recording's leak check did not run: its rate holds nothing (a
// reviewer's leak of 4,096 B per inference past the cut read "0.0 B per
// inference, all budgets hold"). A summary-mode pool that grew 200 B per
// inference and stopped counts at its steps' rate.
TEST(Budget, ARateIsRefusedWhereTheLeakCheckDidNotRunAndAStoppedPoolCounts) {
  AnalysisResult cut;
  cut.inferences = 100;
  cut.counts.allocs = 1000;
  cut.checks.leaks = {CheckStatus::not_checked, "the recording's file is cut off"};
  BudgetInputs in{nullptr, nullptr, &cut, nullptr};
  std::string error;
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 10}})"), in, error).empty());
  EXPECT_NE(error.find("the leak check did not run on this trace (the recording's file is cut off)"), std::string::npos)
      << error;

  AnalysisResult summary;
  summary.inferences = 1000;
  summary.counts.summaries = 1000;
  summary.checks.leaks = {CheckStatus::not_checked, "summary records name no site"};
  PoolWatermark w;
  w.pool = "arena";
  w.slope = 120.0;
  w.shape = Shape::stair;
  w.stairs = {120, 1000.0, 5.0};
  w.grew_until_inference = 600;
  summary.watermarks.push_back(w);
  BudgetInputs s{nullptr, nullptr, &summary, nullptr};
  error.clear();
  auto out = evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 10}})"), s, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "leak.max_bytes_per_inference")->ok);
  EXPECT_NE(find(out, "leak.max_bytes_per_inference")->message.find("leaks 200.0 B"), std::string::npos)
      << find(out, "leak.max_bytes_per_inference")->message;
}

// A device that started again inside the capture: each boot is judged on
// its own, the ones before the latest as they went down. A leak of 1,600 B
// in the boot before once passed as "0.0 B per inference over 100
// inferences" (50 of them judged): a boot that could not be judged refuses
// a limit held, a leaking one breaks it with its own numbers, the worst boot
// decides.
TEST(Budget, ALeakLimitHoldsForEveryBootAfterARestart) {
  AnalysisResult t;
  t.inferences = 100;
  t.inferences_before_latest_boot = 50;
  t.counts.allocs = 400;
  t.restarts.total = 1;
  t.restarts.unjudged_boots = 1;
  Restart boot;
  boot.boot = 1;
  boot.inferences = 1;
  boot.leak_check = {CheckStatus::not_checked, "1 inference ended in boot 1"};
  t.restarts.kept.push_back(boot);
  t.restarts.first_unjudged = boot;
  t.checks.leaks.status = CheckStatus::clean;
  t.restarts.latest_boot = t.checks.leaks;
  BudgetInputs in{nullptr, nullptr, &t, nullptr};
  for (const char* limit : {"max_bytes_per_inference", "max_leaked_bytes"}) {
    std::string error;
    EXPECT_TRUE(evaluate_budget(json::parse(fmt::format(R"({{"leak": {{"{}": 0}}}})", limit)), in, error).empty());
    EXPECT_NE(error.find(fmt::format("leak.{}: the device started again 1 time in the trace, and 1 boot before the "
                                     "latest could not be judged (boot 1: 1 inference ended in boot 1)",
                                     limit)),
              std::string::npos)
        << error;
  }
  // Judged clean: the limits hold.
  t.restarts.unjudged_boots = 0;
  t.restarts.first_unjudged.reset();
  t.restarts.kept[0].inferences = 50;
  t.restarts.kept[0].leak_check.status = CheckStatus::clean;
  {
    std::string error;
    auto out = evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 0, "max_leaked_bytes": 0}})"), in, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_TRUE(find(out, "leak.max_bytes_per_inference")->ok);
    EXPECT_TRUE(find(out, "leak.max_leaked_bytes")->ok);
  }
  // Leaking in the latest boot: its numbers, the worst of every boot.
  t.checks.leaks.status = CheckStatus::found;
  t.restarts.latest_boot = t.checks.leaks;
  t.leak_rate_bytes_per_inference = 32;
  t.leaks.push_back({"leak.c:42", "heap", 1600, 50, 32.0, "", 0, 0, 0, 50, 0, std::nullopt, false, {}});
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 0, "max_leaked_bytes": 0}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "leak.max_bytes_per_inference")->ok);
  EXPECT_EQ(find(out, "leak.max_bytes_per_inference")->message,
            "leaks 32.0 B per inference over 50 inferences of the latest boot, the worst of every boot (100 in the "
            "trace: the device started again 1 time), limit 0 B");
  EXPECT_NE(find(out, "leak.max_leaked_bytes")->message.find("in the latest boot, the worst of every boot"),
            std::string::npos)
      << find(out, "leak.max_leaked_bytes")->message;
  // The boot before leaked more: its numbers decide.
  t.restarts.leaking_boots = 1;
  Restart& leaky = t.restarts.kept[0];
  leaky.leak_check.status = CheckStatus::found;
  leaky.leaked_bytes = 3200;
  leaky.leaking_groups = 1;
  leaky.leak_bytes_per_inference = 64;
  leaky.leaks.push_back({"old.c:7", "heap", 3200, 50, 64.0, "", 0, 0, 0, 50, 0, std::nullopt, false, {}});
  t.restarts.most_leaked = t.restarts.fastest_leak = leaky;
  error.clear();
  out = evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 40, "max_leaked_bytes": 2000}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(find(out, "leak.max_bytes_per_inference")->message,
            "leaks 64.0 B per inference in boot 1, before the device started again (50 inferences), limit 40 B");
  EXPECT_FALSE(find(out, "leak.max_bytes_per_inference")->ok);
  EXPECT_EQ(find(out, "leak.max_leaked_bytes")->message,
            "3,200 B leaked at 1 site(s) (first old.c:7) in boot 1, before the device started again (50 inferences), "
            "limit 2,000 B");
  EXPECT_FALSE(find(out, "leak.max_leaked_bytes")->ok);
  // The latest boot not judged (one inference): a leak before it breaks a
  // limit it is over, and does not make a limit it is under hold.
  t.checks.leaks.status = CheckStatus::found;
  t.restarts.latest_boot = {CheckStatus::not_checked, "1 inference ended since the device last started again"};
  t.leaks.clear();
  t.leak_rate_bytes_per_inference = 0;
  error.clear();
  out = evaluate_budget(json::parse(R"({"leak": {"max_leaked_bytes": 2000}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(find(out, "leak.max_leaked_bytes")->ok);
  error.clear();
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"leak": {"max_leaked_bytes": 4000}})"), in, error).empty());
  EXPECT_NE(error.find("leak.max_leaked_bytes: the leak check did not run on the latest boot (1 inference ended since the "
                       "device last started again)"),
            std::string::npos)
      << error;
  // Groups the unjudged latest boot lists measure nothing: even when they
  // are more than the boot before, that boot's judged numbers are cited.
  t.leaks.push_back({"cut.c:1", "heap", 9000, 1, 9000.0, "", 0, 0, 0, 1, 0, std::nullopt, false, {}});
  t.leak_rate_bytes_per_inference = 9000;
  error.clear();
  out = evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 40, "max_leaked_bytes": 2000}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(find(out, "leak.max_bytes_per_inference")->message,
            "leaks 64.0 B per inference in boot 1, before the device started again (50 inferences), limit 40 B");
  EXPECT_EQ(find(out, "leak.max_leaked_bytes")->message,
            "3,200 B leaked at 1 site(s) (first old.c:7) in boot 1, before the device started again (50 inferences), "
            "limit 2,000 B");
  t.leaks.clear();
  t.leak_rate_bytes_per_inference = 0;
  // A summary-mode trace with one inference end in its latest boot has no slope.
  AnalysisResult summary;
  summary.inferences = 1;
  summary.counts.summaries = 1;
  BudgetInputs s{nullptr, nullptr, &summary, nullptr};
  error.clear();
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 0}})"), s, error).empty());
  EXPECT_NE(error.find("leak.max_bytes_per_inference: 1 inference ended: a rate needs two"), std::string::npos) << error;
}

// Groups listed while the leak check did not run (a cut recording's, growing
// up to the cut) neither hold nor break a leak limit, over it or not.
TEST(Budget, GroupsOfALeakCheckThatDidNotRunBreakNoLimit) {
  AnalysisResult t;
  t.inferences = 20;
  t.counts.allocs = 400;
  t.checks.leaks = {CheckStatus::not_checked, "the recording's file is cut off"};
  t.leak_rate_bytes_per_inference = 500;
  t.leaks.push_back({"cut.c:1", "heap", 10000, 20, 500.0, "", 0, 0, 0, 20, 0, std::nullopt, false, {}});
  BudgetInputs in{nullptr, nullptr, &t, nullptr};
  for (const char* limit : {"max_bytes_per_inference", "max_leaked_bytes"}) {
    std::string error;
    EXPECT_TRUE(evaluate_budget(json::parse(fmt::format(R"({{"leak": {{"{}": 10}}}})", limit)), in, error).empty());
    EXPECT_NE(error.find(fmt::format("leak.{}: the leak check did not run on this trace (the recording's file is cut off)",
                                     limit)),
              std::string::npos)
        << error;
  }
}

// Limits said as people write them: a margin percent no arena can leave is
// refused as a max_percent over 100 is (it broke, exit 1), a rate takes a
// size string as the byte limits do, and 94.7 % is 0.947 in the JSON, not
// 0.9470000000000001.
TEST(Budget, PercentsAndRatesAreReadAsWritten) {
  AnalysisResult t;
  t.inferences = 10;
  t.counts.allocs = 40;
  t.checks.leaks.status = CheckStatus::clean;
  t.pools.push_back({"arena", PoolKind::arena, 81920, 78848, 78848, 3, 3.75});
  BudgetInputs in{nullptr, nullptr, &t, nullptr};
  std::string error;
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"arena": {"min_margin_percent": 101}})"), in, error).empty());
  EXPECT_EQ(error, "arena.min_margin_percent: 101 % no arena can leave (its margin is at most all of it); expected 0 "
                   "to 100");
  error.clear();
  auto out = evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": "32"},
                                             "arena": {"min_margin_percent": 94.7}})"),
                             in, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_TRUE(find(out, "leak.max_bytes_per_inference")->ok);
  EXPECT_EQ(find(out, "leak.max_bytes_per_inference")->limit, 32.0);
  EXPECT_EQ(find(out, "arena.arena")->limit.dump(), "0.947");
  LinkerMap m = image();
  BudgetInputs map{&m, nullptr, nullptr, nullptr};
  out = evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_percent": 94.7}}})"), map, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(find(out, "regions.RAM.max_percent")->limit.dump(), "0.947");
}

TEST(Budget, MistakesAreErrorsNotPasses) {
  LinkerMap m = image();
  BudgetInputs with_map{&m, nullptr, nullptr, nullptr};
  std::string error;
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"region": {}})"), with_map, error).empty());
  EXPECT_NE(error.find("unknown key"), std::string::npos);
  error.clear();
  evaluate_budget(json::parse(R"({"regions": {"SRAM": {"max_bytes": 1}}})"), with_map, error);
  EXPECT_NE(error.find("did you mean RAM? expected FLASH or RAM"), std::string::npos) << error;
  error.clear();
  evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 0}})"), with_map, error);
  EXPECT_NE(error.find("needs a trace"), std::string::npos);
  error.clear();
  evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_percent": "lots"}}})"), with_map, error);
  EXPECT_NE(error.find("expected a number"), std::string::npos);
  error.clear();
  evaluate_budget(json::parse(R"({})"), with_map, error);
  EXPECT_NE(error.find("no limit"), std::string::npos);
  error.clear();
  evaluate_budget(json::parse(R"({"regons": {}})"), with_map, error);
  EXPECT_NE(error.find("unknown key 'regons' (did you mean regions?"), std::string::npos) << error;
  error.clear();
  evaluate_budget(json::parse(R"({"regions": {"RAM": {"max_bytes": "-5"}}})"), with_map, error);
  EXPECT_NE(error.find("regions.RAM.max_bytes: '-5' is not a size"), std::string::npos) << error;
  error.clear();
  AnalysisResult unmarked;  // a trace without inference markers has no rate to hold a limit against
  unmarked.checks.leaks.status = CheckStatus::clean;
  BudgetInputs with_trace{nullptr, nullptr, &unmarked, nullptr};
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"leak": {"max_bytes_per_inference": 0}})"), with_trace, error).empty());
  EXPECT_NE(error.find("no inference markers"), std::string::npos) << error;
  error.clear();
  // Refused, yet the limits the other groups broke are still said: a
  // refused rate hid a broken failure limit until the budget was fixed.
  unmarked.fragmentation.alloc_failures = 2;
  auto beside = evaluate_budget(
      json::parse(R"({"leak": {"max_bytes_per_inference": 0}, "fragmentation": {"max_alloc_failures": 1}})"), with_trace,
      error);
  EXPECT_NE(error.find("no inference markers"), std::string::npos) << error;
  ASSERT_EQ(beside.size(), 1u);
  EXPECT_EQ(beside[0].rule, "fragmentation.max_alloc_failures");
  EXPECT_FALSE(beside[0].ok);
  unmarked.fragmentation.alloc_failures = 0;
  error.clear();
  // A leak check that did not run (too few events) found no leak, not 0 B of one.
  AnalysisResult tiny;
  tiny.checks.leaks = {CheckStatus::not_checked, "3 memory events: too few to tell a leak from a working set"};
  BudgetInputs with_tiny{nullptr, nullptr, &tiny, nullptr};
  EXPECT_TRUE(evaluate_budget(json::parse(R"({"leak": {"max_leaked_bytes": 0}})"), with_tiny, error).empty());
  EXPECT_NE(error.find("leak.max_leaked_bytes: the leak check did not run on this trace (3 memory events"),
            std::string::npos)
      << error;
}

TEST(Budget, KeysAndRegionsInAnyCaseAndLimitsAsSizes) {
  LinkerMap m = image();
  BudgetInputs in{&m, nullptr, nullptr, nullptr};
  std::string error;
  auto out = evaluate_budget(json::parse(R"({"Regions": {"ram": {"Max_Bytes": "16K", "max_percent": 50}}})"), in, error);
  ASSERT_TRUE(error.empty()) << error;
  const BudgetOutcome* bytes = find(out, "regions.RAM.max_bytes");  // the map's spelling
  ASSERT_NE(bytes, nullptr);
  EXPECT_FALSE(bytes->ok);  // 20,512 B used > 16 KiB
  EXPECT_EQ(bytes->unit, BudgetUnit::bytes);
  EXPECT_EQ(bytes->measured, 20512);
  EXPECT_EQ(bytes->limit, 16384);
  const BudgetOutcome* pct = find(out, "regions.RAM.max_percent");
  EXPECT_EQ(pct->unit, BudgetUnit::fraction);
  EXPECT_DOUBLE_EQ(pct->measured.get<double>(), 20512.0 / 65536);
  EXPECT_DOUBLE_EQ(pct->limit.get<double>(), 0.5);
}

}  // namespace
}  // namespace edgemem
