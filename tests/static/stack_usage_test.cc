// Worst-case stack on the corpus' own firmware, against the values worked
// out by hand in tests/data/corpus/map/own_ground_truth.json.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <tuple>

#include <unistd.h>

#include "report/stack_report.h"
#include "static/elf_image.h"
#include "static/stack_usage.h"
#include "test_support.h"

namespace edgemem {
namespace {

std::vector<std::string> build_files(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(test::corpus("su")))
    if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path().string());
  return out;
}

const StackRoot* root(const StackReport& r, std::string_view name) {
  for (const auto& x : r.roots)
    if (x.function == name) return &x;
  return nullptr;
}

// util.c's call graph: a_entry (8 B) calls the static helper (80 B).
void write_util_ci(const std::filesystem::path& dir) {
  std::ofstream(dir / "util.ci")
      << "graph: { title: \"util.c\"\n"
         "node: { title: \"util.c:helper\" label: \"helper\\nutil.c:1:12\\n80 bytes (static)\" }\n"
         "node: { title: \"a_entry\" label: \"a_entry\\nutil.c:2:5\\n8 bytes (static)\" }\n"
         "edge: { sourcename: \"a_entry\" targetname: \"util.c:helper\" label: \"util.c:2:29\" }\n"
         "}\n";
}

TEST(Stack, O2WorstCaseIs136BytesWithTheDynamicFrameFlagged) {
  auto truth = nlohmann::json::parse(test::read_file(test::corpus("map/own_ground_truth.json")))["worst_case_stack_by_hand"]["O2"];
  std::string error;
  auto report = analyze_stack(build_files("own_O2_"), false, error);
  ASSERT_TRUE(report) << error;
  const StackRoot* reset = root(*report, "Reset_Handler");
  ASSERT_TRUE(reset);
  EXPECT_EQ(reset->worst_case_bytes, truth["bytes"].get<uint64_t>());
  EXPECT_EQ(reset->path, truth["deepest_static_path"].get<std::vector<std::string>>());
  EXPECT_TRUE(reset->unbounded);  // normalize_dynamic has a VLA; memcpy/memset have no .su
  EXPECT_NE(std::find(reset->reasons.begin(), reset->reasons.end(), "dynamic frame: normalize_dynamic"), reset->reasons.end());
  // GCC labels the builtins it emitted as calls __builtin_memcpy; the
  // function called, and named in the map, is memcpy.
  EXPECT_NE(std::find(reset->reasons.begin(), reset->reasons.end(), "no stack info: memcpy"), reset->reasons.end());
  // Frames as the .su files state them.
  auto su = nlohmann::json::parse(test::read_file(test::corpus("map/own_ground_truth.json")))["stack_usage_su"]["O2"];
  size_t checked = 0;
  for (const auto& f : report->functions) {
    if (su.contains(f.name)) {
      EXPECT_EQ(f.frame_bytes, su[f.name][0].get<uint64_t>()) << f.name;
      ++checked;
    }
  }
  EXPECT_GE(checked, 8u);
}

TEST(Stack, O0RecursionAndIndirectCallAreUnboundedNotInvented) {
  auto truth = nlohmann::json::parse(test::read_file(test::corpus("map/own_ground_truth.json")))["worst_case_stack_by_hand"]["O0"];
  std::string error;
  auto report = analyze_stack(build_files("own_O0_"), false, error);
  ASSERT_TRUE(report) << error;
  const StackRoot* reset = root(*report, "Reset_Handler");
  ASSERT_TRUE(reset);
  EXPECT_EQ(reset->worst_case_bytes, truth["bytes"].get<uint64_t>());
  EXPECT_EQ(reset->path, truth["deepest_static_path_without_recursion"].get<std::vector<std::string>>());
  EXPECT_TRUE(reset->unbounded);
  auto has = [&](const std::string& why) {
    return std::find(reset->reasons.begin(), reset->reasons.end(), why) != reset->reasons.end();
  };
  EXPECT_TRUE(has("recursion: checksum_recursive"));
  EXPECT_TRUE(has("indirect call in run_post"));
}

TEST(Stack, ReadsARealProjectsSuFilesAndRejectsOtherText) {
  std::string error;
  auto report = analyze_stack({test::corpus("su/kennykang_nucleo_l432kc_release")}, false, error);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->files, 28u);
  bool main_found = false;
  for (const auto& f : report->functions)
    if (f.name == "main") main_found = f.frame_bytes == 344;  // includes the 128 B X-CUBE-AI activations
  EXPECT_TRUE(main_found);
  EXPECT_TRUE(report->roots.empty());  // no .ci: no call graph to walk

  auto dir = std::filesystem::temp_directory_path() / "edgemem_bad_su";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "x.su") << "not a stack usage line\n";
  }
  EXPECT_FALSE(analyze_stack({dir.string()}, false, error));
  EXPECT_NE(error.find("x.su: line 1: "), std::string::npos);
  {  // a qualifier GCC never writes
    std::ofstream(dir / "x.su") << "a.c:1:1:f\t16\tstatic\na.c:2:1:g\t16\tbogus\n";
  }
  EXPECT_FALSE(analyze_stack({dir.string()}, false, error));
  EXPECT_NE(error.find("x.su: line 2: expected static, dynamic or dynamic,bounded"), std::string::npos) << error;
  {
    std::ofstream(dir / "x.su") << "a.c:1:1:f\t16\tdynamic,bounded\na.c:2:1:g\t8\tstatic,ignoring_inline_asm\n";
  }
  EXPECT_TRUE(analyze_stack({dir.string()}, false, error)) << error;
  {  // GCC writes an empty .su for a file without functions: found, not missing
    std::ofstream(dir / "x.su", std::ios::trunc).flush();
  }
  EXPECT_FALSE(analyze_stack({dir.string()}, false, error));
  EXPECT_NE(error.find("1 .su/.ci file found, and no function in it"), std::string::npos) << error;
  // A Charm++ interface file (.ci too) beside the .su files of a directory:
  // left out and said; once it refused the whole run. Named itself, refused.
  {
    std::ofstream(dir / "x.su", std::ios::trunc) << "a.c:1:1:f\t16\tstatic\n";
    std::ofstream(dir / "fft1d.ci") << "mainmodule fft1d {\n  readonly CProxy_Main mainProxy;\n};\n";
  }
  report = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->files, 1u);
  ASSERT_EQ(report->notes.size(), 1u);
  EXPECT_NE(report->notes[0].find("1 .ci file left out: not a GCC call graph"), std::string::npos) << report->notes[0];
  EXPECT_FALSE(analyze_stack({(dir / "fft1d.ci").string()}, false, error));
  EXPECT_NE(error.find("fft1d.ci: line 1: expected \"graph: {\""), std::string::npos) << error;
  std::filesystem::remove_all(dir);
}

// Clang (14, -fstack-usage) writes "file:line:function" with no column, and
// C++ names mangled; it writes no call graph. These are its lines for the
// corpus' own firmware (Cortex-M4, -O2) and a C++ file, as it wrote them.
TEST(Stack, ClangSuFilesGiveTheirFramesUnderReadableNames) {
  std::string error;
  auto dir = std::filesystem::temp_directory_path() / "edgemem_clang_su";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "own_app.su") << "/src/own_app.c:44:normalize_dynamic\t40\tdynamic\n"
                                         "/src/own_app.c:76:main\t72\tstatic\n";
    std::ofstream(dir / "a.su") << "a.cc:1:_ZN2ns1gEi\t4\tstatic\n"
                                   "C:\\fw\\b.cc:3:cf\t4\tstatic\n"
                                   "a.cc:5:main\t8\tstatic\n";  // a host program's, read first
  }
  auto report = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->source, "Clang");
  EXPECT_TRUE(report->roots.empty());
  std::map<std::string, std::tuple<uint64_t, std::string, std::string>> got;
  for (const auto& f : report->functions) got[f.name] = {f.frame_bytes, f.qualifier, f.file};
  using T = std::tuple<uint64_t, std::string, std::string>;
  EXPECT_EQ(got["normalize_dynamic"], T(40, "dynamic", "/src/own_app.c:44"));
  EXPECT_EQ(got["ns::g(int)"], T(4, "static", "a.cc:1"));
  EXPECT_EQ(got["cf"], T(4, "static", "C:\\fw\\b.cc:3"));
  EXPECT_EQ(got.size(), 4u);
  // Two mains of two source files: each listed with its own frame, and a note.
  std::set<std::pair<uint64_t, std::string>> mains;
  for (const auto& f : report->functions)
    if (f.name == "main") mains.emplace(f.frame_bytes, f.file);
  EXPECT_EQ(mains, (std::set<std::pair<uint64_t, std::string>>{{72, "/src/own_app.c:76"}, {8, "a.cc:5"}}));
  ASSERT_EQ(report->notes.size(), 1u);
  EXPECT_NE(report->notes[0].find("main is defined by 2 source files in .su files"), std::string::npos) << report->notes[0];
  // GCC's form still wins where both could be read: the column is a column.
  {
    std::ofstream(dir / "a.su", std::ios::trunc) << "a.c:1:7:f\t16\tstatic\n";
    std::filesystem::remove(dir / "own_app.su");
  }
  report = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->source, "GCC");
  ASSERT_EQ(report->functions.size(), 1u);
  EXPECT_EQ(report->functions[0].name, "f");
  EXPECT_EQ(report->functions[0].file, "a.c:1:7");
  std::filesystem::remove_all(dir);
}

// g++ names every function with its return type and parameters, an
// extern "C" interrupt handler too ("void SysTick_Handler()"): it was no
// handler, and the main stack read 400 B for 552 B (an audit's build).
TEST(Stack, CxxHandlersAreHandlersAndRootsAnswerToTheirBareNames) {
  std::string error;
  auto dir = std::filesystem::temp_directory_path() / "edgemem_cxx_su";
  std::filesystem::create_directories(dir);
  {  // the lines g++ 12 (-fstack-usage -fcallgraph-info=su,da) wrote for two extern "C" functions
    std::ofstream(dir / "app.su") << "app.cpp:26:17:void SysTick_Handler()\t120\tstatic\n"
                                     "app.cpp:27:17:void vInferenceTask(void*)\t400\tstatic\n";
    std::ofstream(dir / "app.ci")
        << "graph: { title: \"app.cpp\"\n"
           "node: { title: \"SysTick_Handler\" label: \"void SysTick_Handler()\\napp.cpp:26:17\\n120 bytes (static)\\n0 "
           "dynamic objects\" }\n"
           "node: { title: \"vInferenceTask\" label: \"void vInferenceTask(void*)\\napp.cpp:27:17\\n400 bytes "
           "(static)\\n0 dynamic objects\" }\n"
           "}\n";
  }
  auto report = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->interrupts.handlers, 1u);
  EXPECT_EQ(report->interrupts.one_level_bytes, 400u + 120u + 36u);
  EXPECT_EQ(bare_function_name("void SysTick_Handler()"), "SysTick_Handler");
  EXPECT_EQ(bare_function_name("virtual int drv::uart::Sim::write(const uint8_t*, size_t)"), "write");
  EXPECT_EQ(bare_function_name("SysTick_Handler"), "SysTick_Handler");
  std::filesystem::remove_all(dir);
}

TEST(Stack, KeilReportsGiveKeilsOwnMaximumAndEveryStatedDepth) {
  struct Case {
    const char* file;
    uint64_t max;
    const char* first_of_chain;
  } cases[] = {{"badshun_minirtos_ac5_5.06u7.htm", 96, "main"},
               {"bairu_nuedc2024h_mspm0g3507_ac6_6.22.htm", 640, "__rt_entry_main"},
               {"stm32deployai_cmsisnn_mnist_f407_ac5_5.06u6.htm", 208, "__rt_entry_main"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    std::string error;
    auto report = analyze_stack({test::corpus(std::string("stack_keil/") + c.file)}, false, error);
    ASSERT_TRUE(report) << error;
    EXPECT_EQ(report->source, "Keil");
    ASSERT_TRUE(report->stated_max_bytes);
    EXPECT_EQ(*report->stated_max_bytes, c.max);
    ASSERT_FALSE(report->roots.empty());
    // edgemem's own walk of the graph reaches Keil's number along Keil's chain.
    EXPECT_EQ(report->roots[0].worst_case_bytes, c.max);
    EXPECT_EQ(report->roots[0].function, c.first_of_chain);
    ASSERT_GE(report->roots[0].path.size(), report->stated_chain.size());
    EXPECT_TRUE(std::equal(report->stated_chain.begin(), report->stated_chain.end(), report->roots[0].path.begin()));
    size_t stated = 0;
    for (const auto& r : report->roots)
      if (r.stated_bytes) {
        EXPECT_EQ(r.worst_case_bytes, *r.stated_bytes) << r.function;
        ++stated;
      }
    EXPECT_GE(stated, 5u);
  }
}

// Keil names a handler whose stack it does not know (the RTOS context
// switch, written in assembly) and lists no calls: it is still a root the
// hardware enters, unbounded, and counted among the handlers.
TEST(Stack, AKeilHandlerOfUnknownStackIsAnUnboundedRoot) {
  std::string error;
  auto r = analyze_stack({test::corpus("stack_keil/badshun_minirtos_ac5_5.06u7.htm")}, false, error);
  ASSERT_TRUE(r) << error;
  const StackRoot* pendsv = root(*r, "PendSV_Handler");
  ASSERT_TRUE(pendsv);
  EXPECT_TRUE(pendsv->interrupt);
  EXPECT_TRUE(pendsv->unbounded);
  EXPECT_EQ(pendsv->reasons, (std::vector<std::string>{"no stack info: PendSV_Handler"}));
  // 43 of the report's 52 handlers are 0-byte labels on the startup's one
  // default `B .` (its weak IRQ exports; Keil lists the branch as
  // ADC1_2_IRQHandler calling itself): one code, counted once, not 43
  // nested frames (a reviewer's F407 report read 3,480 B that way).
  EXPECT_EQ(r->interrupts.handlers, 10u);
  EXPECT_EQ(root(*r, "WWDG_IRQHandler"), nullptr);
  ASSERT_TRUE(root(*r, "ADC1_2_IRQHandler"));
  EXPECT_TRUE(root(*r, "ADC1_2_IRQHandler")->interrupt);
  // TI's MSPM0 startup: the code is Default_Handler's, which Keil marks
  // UNUSED, and every IRQ is a 0-byte label on it: one of them stands for
  // it, counted once (dropping them all read 1,168 B for 1,204 B).
  auto ti = analyze_stack({test::corpus("stack_keil/bairu_nuedc2024h_mspm0g3507_ac6_6.22.htm")}, false, error);
  ASSERT_TRUE(ti) << error;
  EXPECT_EQ(ti->interrupts.all_nested_bytes, 1'204u);
}

TEST(Stack, InterruptHandlersStackOnTopOfThreadCode) {
  std::string error;
  auto report = analyze_stack({test::corpus("stack_keil/bairu_nuedc2024h_mspm0g3507_ac6_6.22.htm")}, true, error);
  ASSERT_TRUE(report) << error;
  const InterruptBudget& irq = report->interrupts;
  EXPECT_EQ(irq.thread_bytes, 640u);
  EXPECT_EQ(irq.frame_bytes, 108u);  // FPU context and the alignment pad
  EXPECT_EQ(irq.one_level_bytes, 640u + 80u + 108u);  // TIMA0_IRQHandler is the deepest handler
  EXPECT_GT(irq.all_nested_bytes, irq.one_level_bytes);
  std::string not_html = "<html>nothing</html>";
  EXPECT_FALSE(parse_keil_callgraph(not_html, false, error));
  EXPECT_NE(error.find("Static Call Graph"), std::string::npos);
}

void add_node(std::map<std::string, CallNode>& g, const std::string& name, uint64_t bytes, std::vector<std::string> callees) {
  CallNode& n = g[name];
  n.fn.name = name;
  n.fn.frame_bytes = bytes;
  n.fn.qualifier = "static";
  n.has_frame = true;
  n.callees = std::move(callees);
}

std::map<std::string, CallNode> graph(std::initializer_list<std::tuple<std::string, uint64_t, std::vector<std::string>>> fns) {
  std::map<std::string, CallNode> g;
  for (const auto& [name, bytes, callees] : fns) add_node(g, name, bytes, callees);
  return g;
}

// A loop entered at two places (the shape of a printf calling back into a
// logger): each root's bound is the deepest chain that calls no function
// twice, whichever root is walked first. A result cut short at the loop was
// once reused for the other root (1,632 B instead of 1,640 B here; on a real
// mongoose build 40 of 124 roots were low, _reset 888 B for 932 B).
TEST(Stack, EveryRootIntoALoopGetsItsDeepestChainWhicheverIsWalkedFirst) {
  auto g = graph({{"one", 8, {"b"}}, {"two", 16, {"a"}},
                  {"a", 408, {"b"}}, {"b", 208, {"c"}}, {"c", 1008, {"a"}}});
  StackReport r = worst_case_stacks(g, false);
  ASSERT_TRUE(root(r, "one") && root(r, "two"));
  EXPECT_EQ(root(r, "two")->worst_case_bytes, 16u + 408 + 208 + 1008);
  EXPECT_EQ(root(r, "two")->path, (std::vector<std::string>{"two", "a", "b", "c"}));
  EXPECT_EQ(root(r, "one")->worst_case_bytes, 8u + 208 + 1008 + 408);
  EXPECT_TRUE(root(r, "one")->unbounded);
  EXPECT_EQ(r.interrupts.thread_bytes, 1640u);
}

// A call chain 60,000 functions deep, with a loop and an unknown callee at
// its bottom: no recursion as deep as the graph (50,000 overflowed the
// stack, exit 139), and the bottom's reasons reach the root.
TEST(Stack, AChainTensOfThousandsDeepIsWalkedWithoutRecursion) {
  std::map<std::string, CallNode> g;
  constexpr int kDepth = 60000;
  for (int i = 0; i < kDepth; ++i)
    add_node(g, fmt::format("f{}", i), 8, {i + 1 < kDepth ? fmt::format("f{}", i + 1) : std::string("loop_a")});
  add_node(g, "loop_a", 16, {"loop_b", "mystery"});
  add_node(g, "loop_b", 16, {"loop_a", "mystery"});
  StackReport r = worst_case_stacks(g, false);
  ASSERT_TRUE(root(r, "f0"));
  EXPECT_EQ(root(r, "f0")->worst_case_bytes, 8u * kDepth + 32);
  EXPECT_EQ(root(r, "f0")->path.size(), size_t{kDepth} + 2);
  EXPECT_EQ(root(r, "f0")->path.back(), "loop_b");
  const auto& why = root(r, "f0")->reasons;
  EXPECT_NE(std::find(why.begin(), why.end(), "no stack info: mystery"), why.end());
  EXPECT_NE(std::find(why.begin(), why.end(), "recursion: loop_a, loop_b"), why.end());
}

// A loop of 100,000 functions: its path-by-path search is as deep, and
// needs its own stack too (a ring this size crashed with SIGSEGV).
TEST(Stack, ALoopOfAHundredThousandFunctionsIsSearchedWithoutRecursion) {
  std::map<std::string, CallNode> g;
  constexpr int kRing = 100000;
  for (int i = 0; i < kRing; ++i) add_node(g, fmt::format("r{}", i), 4, {fmt::format("r{}", (i + 1) % kRing)});
  add_node(g, "main", 16, {"r0"});
  StackReport r = worst_case_stacks(g, false);
  ASSERT_TRUE(root(r, "main"));
  EXPECT_EQ(root(r, "main")->worst_case_bytes, 16u + 4u * kRing);
  EXPECT_EQ(root(r, "main")->path.size(), size_t{kRing} + 1);
  EXPECT_TRUE(root(r, "main")->unbounded);
}

// Below a loop, a memoised result must not bring back a function already on
// the path: x > a > b > a is not a chain.
TEST(Stack, NoFunctionAppearsTwiceOnAPath) {
  auto g = graph({{"x", 1, {"a"}}, {"y", 2, {"b"}}, {"a", 100, {"b", "leaf"}}, {"b", 10, {"a"}}, {"leaf", 5, {}}});
  StackReport r = worst_case_stacks(g, false);
  for (const StackRoot& x : r.roots) {
    std::set<std::string> seen(x.path.begin(), x.path.end());
    EXPECT_EQ(seen.size(), x.path.size()) << x.function;
  }
  EXPECT_EQ(root(r, "x")->worst_case_bytes, 1u + 100 + 10);      // x > a > b (b's a is the loop)
  EXPECT_EQ(root(r, "y")->worst_case_bytes, 2u + 10 + 100 + 5);  // y > b > a > leaf
}

// A loop with more paths than can be searched: the bound given is a real
// chain (the deepest found), and the root says the search stopped.
TEST(Stack, ALoopTooBigToSearchSaysItsBoundIsTheDeepestFound) {
  std::map<std::string, CallNode> g;
  auto add = [&](const std::string& name, uint64_t bytes, std::vector<std::string> callees) {
    CallNode& n = g[name];
    n.fn = StackFunction{name, "x.c:1:1", bytes, "static"};
    n.has_frame = true;
    n.callees = std::move(callees);
  };
  // 14 functions that all call each other, through a hub to 30 dead ends
  // that call only the hub back: every ordering of the 14 is a path, and no
  // path holds more than one dead end, so the frames left never prune.
  std::vector<std::string> ring, ends;
  for (int i = 0; i < 14; ++i) ring.push_back(fmt::format("r{}", i));
  for (int i = 0; i < 30; ++i) ends.push_back(fmt::format("e{}", i));
  for (const auto& r : ring) {
    std::vector<std::string> c;
    for (const auto& o : ring)
      if (o != r) c.push_back(o);
    c.push_back("hub");
    add(r, 8, c);
  }
  std::vector<std::string> hub = ends;
  hub.push_back("r0");
  add("hub", 8, hub);
  for (const auto& e : ends) add(e, 100, {"hub"});
  add("main", 4, {"r0"});
  StackReport r = worst_case_stacks(g, false);
  const StackRoot* m = root(r, "main");
  ASSERT_TRUE(m);
  std::set<std::string> seen(m->path.begin(), m->path.end());
  EXPECT_EQ(seen.size(), m->path.size());
  uint64_t sum = 0;
  for (uint64_t b : m->path_frame_bytes) sum += b;
  EXPECT_EQ(m->worst_case_bytes, sum);
  EXPECT_GE(m->worst_case_bytes, 4u + 8 + 8 + 100);  // main > r0 > hub > e0 at least
  bool said = false;
  for (const auto& why : m->reasons) said = said || why.find("the bound is the deepest found") != std::string::npos;
  EXPECT_TRUE(said);
}

// Recursion into itself only: nobody else calls it, so it is still a root.
// GCC's files for one translation unit, written into `dir`.
void write_unit(const std::filesystem::path& dir, const std::string& stem, const std::string& ci, const std::string& su) {
  std::filesystem::create_directories(dir);
  if (!ci.empty()) std::ofstream(dir / (stem + ".ci")) << ci;
  std::ofstream(dir / (stem + ".su")) << su;
}

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("edgemem_stack_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

const std::string kMainCi =
    "graph: { title: \"m.c\"\n"
    "node: { title: \"deep\" label: \"deep\\nm.c:4:8\\n904 bytes (static)\" }\n"
    "node: { title: \"main\" label: \"main\\nm.c:5:5\\n32 bytes (static)\" }\n"
    "node: { title: \"u1\" label: \"u1\\nm.c:3:5\" shape : ellipse }\n"
    "edge: { sourcename: \"main\" targetname: \"u1\" label: \"m.c:5:40\" }\n"
    "node: { title: \"u2\" label: \"u2\\nm.c:3:18\" shape : ellipse }\n"
    "edge: { sourcename: \"main\" targetname: \"u2\" label: \"m.c:5:49\" }\n"
    "node: { title: \"sink\" label: \"sink\\nm.c:6:6\\n8 bytes (static)\" }\n"
    "}\n";
const std::string kMainSu = "m.c:4:8:deep\t904\tstatic\nm.c:5:5:main\t32\tstatic\nm.c:6:6:sink\t8\tstatic\n";

// util.c of one directory: a static helper of `bytes` called by `caller`, calling `callees`.
std::string util_ci(const std::string& caller, int bytes, const std::vector<std::string>& callees) {
  std::string ci = "graph: { title: \"util.c\"\n";
  ci += fmt::format("node: {{ title: \"util.c:helper\" label: \"helper\\nutil.c:3:15\\n{} bytes (static)\" }}\n", bytes);
  for (const auto& c : callees)
    ci += fmt::format("node: {{ title: \"{0}\" label: \"{0}\\nutil.c:2:13\" shape : ellipse }}\n"
                      "edge: {{ sourcename: \"util.c:helper\" targetname: \"{0}\" label: \"util.c:3:68\" }}\n", c);
  ci += fmt::format("node: {{ title: \"{0}\" label: \"{0}\\nutil.c:4:5\\n16 bytes (static)\" }}\n"
                    "edge: {{ sourcename: \"{0}\" targetname: \"util.c:helper\" label: \"util.c:4:24\" }}\n}}\n", caller);
  return ci;
}

// Two util.c in two directories, each with its own static helper: GCC
// titles both "util.c:helper". Merged, d2's 336 B helper (the one that
// calls deep) was lost and the worst case read 1,080 B for a true 1,288 B.
TEST(Stack, StaticFunctionsOfSameNamedFilesInTwoDirectoriesStayApart) {
  auto dir = fresh_dir("same_named");
  write_unit(dir, "m", kMainCi, kMainSu);
  write_unit(dir / "d1", "util", util_ci("u1", 128, {"sink"}), "util.c:3:15:helper\t128\tstatic\nutil.c:4:5:u1\t16\tstatic\n");
  write_unit(dir / "d2", "util", util_ci("u2", 336, {"sink", "deep"}), "util.c:3:15:helper\t336\tstatic\nutil.c:4:5:u2\t16\tstatic\n");
  std::string error;
  auto r = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(r) << error;
  ASSERT_TRUE(root(*r, "main"));
  EXPECT_EQ(root(*r, "main")->worst_case_bytes, 32u + 16 + 336 + 904);
  EXPECT_EQ(root(*r, "main")->path, (std::vector<std::string>{"main", "u2", "helper", "deep"}));
  EXPECT_EQ(r->functions.size(), 7u);
  EXPECT_TRUE(r->notes.empty());
  std::filesystem::remove_all(dir);
}

// Two builds of one program in one tree: the same global defined twice is
// counted with its larger frame (and said to be), not the first one read.
TEST(Stack, AGlobalDefinedInTwoCallGraphsCountsItsLargerFrame) {
  auto dir = fresh_dir("two_builds");
  auto unit = [](int bytes) {
    return fmt::format("graph: {{ title: \"init.c\"\nnode: {{ title: \"init\" label: \"init\\ninit.c:1:6\\n{} bytes (static)\" }}\n}}\n", bytes);
  };
  const std::string main_ci =
      "graph: { title: \"main.c\"\nnode: { title: \"main\" label: \"main\\nmain.c:2:5\\n8 bytes (static)\" }\n"
      "node: { title: \"init\" label: \"init\\nmain.c:1:6\" shape : ellipse }\n"
      "edge: { sourcename: \"main\" targetname: \"init\" label: \"main.c:2:20\" }\n}\n";
  write_unit(dir / "Debug", "init", unit(112), "init.c:1:6:init\t112\tstatic\n");
  write_unit(dir / "Debug", "main", main_ci, "main.c:2:5:main\t8\tstatic\n");
  write_unit(dir / "Release", "init", unit(912), "init.c:1:6:init\t912\tstatic\n");
  write_unit(dir / "Release", "main", main_ci, "main.c:2:5:main\t8\tstatic\n");
  std::string error;
  auto r = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(r) << error;
  ASSERT_TRUE(root(*r, "main"));
  EXPECT_EQ(root(*r, "main")->worst_case_bytes, 920u);
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes[0].find("init is defined in 2 call graphs"), std::string::npos) << r->notes[0];
  std::filesystem::remove_all(dir);
}

// A .su whose .ci is missing gives frames but not calls: its functions
// are not leaves. main > fb > (b.c, no .ci) helper read 200 B, bounded.
TEST(Stack, ASuFileWithoutItsCallGraphMakesItsCallersUnbounded) {
  auto dir = fresh_dir("no_ci");
  write_unit(dir, "m",
             "graph: { title: \"m.c\"\nnode: { title: \"main\" label: \"main\\nm.c:5:5\\n48 bytes (static)\" }\n"
             "node: { title: \"fb\" label: \"fb\\nm.c:3:5\" shape : ellipse }\n"
             "edge: { sourcename: \"main\" targetname: \"fb\" label: \"m.c:5:40\" }\n}\n",
             "m.c:5:5:main\t48\tstatic\n");
  write_unit(dir, "b", "", "b.c:3:5:fb\t16\tstatic\nb.c:2:13:helper\t320\tstatic\n");
  std::string error;
  auto r = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(r) << error;
  ASSERT_TRUE(root(*r, "main"));
  EXPECT_EQ(root(*r, "main")->worst_case_bytes, 64u);
  EXPECT_TRUE(root(*r, "main")->unbounded);
  EXPECT_EQ(root(*r, "main")->reasons, (std::vector<std::string>{"calls not known (no .ci beside its .su): fb"}));
  std::filesystem::remove_all(dir);
}

// A call graph cut at a line boundary ends with a node's '}', not the
// graph's own line: it was read as complete, its missing calls as none.
TEST(Stack, ACallGraphCutBetweenLinesOrEmptyIsRefused) {
  auto dir = fresh_dir("cut_ci");
  std::string cut = kMainCi.substr(0, kMainCi.find("node: { title: \"u1\""));
  write_unit(dir, "m", cut, kMainSu);
  std::string error;
  EXPECT_FALSE(analyze_stack({dir.string()}, false, error));
  EXPECT_NE(error.find("m.ci: line 4: the file ends inside a line or before the graph's closing '}'"), std::string::npos) << error;
  std::ofstream(dir / "m.ci", std::ios::trunc).flush();
  EXPECT_FALSE(analyze_stack({dir.string()}, false, error));
  EXPECT_NE(error.find("m.ci: line 1: the file is empty"), std::string::npos) << error;
  std::filesystem::remove_all(dir);
  // A directory named like a call graph is not one (it threw from the read).
  write_unit(dir, "m", kMainCi, kMainSu);
  std::filesystem::create_directories(dir / "odd.ci");
  auto r = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(root(*r, "main")->worst_case_bytes, 32u);
  std::filesystem::remove_all(dir);
}

// Sums of frames near 2^64 wrapped to a few bytes: such a frame is damage.
TEST(Stack, AFrameOfFourGibibytesOrMoreIsRefusedNotSummed) {
  auto dir = fresh_dir("huge_frame");
  std::string huge_su = kMainSu;
  huge_su.replace(huge_su.find("904"), 3, "18446744073709551600");
  write_unit(dir, "m", kMainCi, huge_su);
  std::string error;
  EXPECT_FALSE(analyze_stack({(dir / "m.su").string()}, false, error));
  EXPECT_NE(error.find("m.su: line 1: a frame of 18446744073709551600 bytes for deep: expected less than 4 GiB"),
            std::string::npos) << error;
  std::string huge_ci = kMainCi;
  huge_ci.replace(huge_ci.find("32 bytes"), 2, "4294967296");
  write_unit(dir, "m", huge_ci, kMainSu);
  EXPECT_FALSE(analyze_stack({dir.string()}, false, error));
  EXPECT_NE(error.find("m.ci: line 3: a frame of 4294967296 bytes for main: expected less than 4 GiB"), std::string::npos)
      << error;
  // Past 2^64 it is not 0 bytes either.
  huge_ci = kMainCi;
  huge_ci.replace(huge_ci.find("32 bytes"), 2, "99999999999999999999");
  write_unit(dir, "m", huge_ci, kMainSu);
  EXPECT_FALSE(analyze_stack({dir.string()}, false, error));
  EXPECT_NE(error.find("m.ci: line 3: a frame of 99999999999999999999 bytes for main"), std::string::npos) << error;
  // One byte less is a frame (absurd, but summed without wrapping).
  huge_ci = kMainCi;
  huge_ci.replace(huge_ci.find("32 bytes"), 2, "4294967295");
  write_unit(dir, "m", huge_ci, kMainSu);
  auto r = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(root(*r, "main")->worst_case_bytes, 4294967295u);
  std::filesystem::remove_all(dir);

  std::ifstream in(test::corpus("stack_keil/badshun_minirtos_ac5_5.06u7.htm"), std::ios::binary);
  std::string keil((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = keil.find("Stack size ");
  ASSERT_NE(at, std::string::npos);
  const size_t digits = at + 11, end = keil.find(' ', digits);
  keil.replace(digits, end - digits, "18446744073709551615");
  const size_t line = static_cast<size_t>(std::count(keil.begin(), keil.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1;
  EXPECT_FALSE(parse_keil_callgraph(keil, false, error));
  EXPECT_EQ(error, fmt::format("line {}: Stack size 18446744073709551615 bytes: expected less than 4 GiB (the report is "
                               "damaged)", line));
  keil.replace(digits, 20, "1844674407370955161600000");  // past 2^64: not "unknown", refused as well
  EXPECT_FALSE(parse_keil_callgraph(keil, false, error));
  EXPECT_EQ(error, fmt::format("line {}: Stack size 2^64 or more bytes: expected less than 4 GiB (the report is "
                               "damaged)", line));
}

TEST(Stack, AFunctionThatOnlyCallsItselfIsARoot) {
  auto g = graph({{"walk", 48, {"walk", "leaf"}}, {"leaf", 16, {}}});
  StackReport r = worst_case_stacks(g, false);
  ASSERT_TRUE(root(r, "walk"));
  EXPECT_EQ(root(r, "walk")->worst_case_bytes, 64u);
  EXPECT_TRUE(root(r, "walk")->unbounded);
}

std::string stack_data(const std::string& dir) { return std::string(EDGEMEM_TEST_DATA_DIR) + "/stack/" + dir; }

// STM32 HAL's pattern: a weak HAL_UART_RxCpltCallback called from
// HAL_UART_IRQHandler in its own file, which GCC titles by that file; the
// linker binds the call to app.c's strong 544 B callback. Read as written
// USART1_IRQHandler needed 8 B, the main stack 584 B, and a budget of 700 B
// passed a firmware that needs 876 B (tests/data/stack). The graph titles a
// static alike, so both are said: as written, and were it weak.
TEST(Stack, AFilesOwnDefinitionBesideAGlobalIsCountedBothWays) {
  std::string error;
  auto report = analyze_stack({stack_data("weak_callback")}, false, error);
  ASSERT_TRUE(report) << error;
  const StackRoot* usart = root(*report, "USART1_IRQHandler");
  ASSERT_TRUE(usart);
  EXPECT_EQ(usart->worst_case_bytes, 8u);
  ASSERT_TRUE(usart->if_weak_bytes);
  EXPECT_EQ(*usart->if_weak_bytes, 552u);
  EXPECT_FALSE(usart->unbounded);
  EXPECT_EQ(report->weak_or_static, std::vector<std::string>{"HAL_UART_RxCpltCallback"});
  ASSERT_TRUE(report->interrupts_if_weak);
  EXPECT_EQ(report->interrupts_if_weak->one_level_bytes, 288u + 552u + 36u);
  EXPECT_EQ(report->interrupts.one_level_bytes, 544u + 8u + 36u);
  EXPECT_TRUE(std::any_of(report->notes.begin(), report->notes.end(), [](const std::string& n) {
    return n.find("were it weak (a HAL callback, a default handler), the linker binds them to the global: "
                  "USART1_IRQHandler 552 B, main stack 876 B") != std::string::npos;
  }));
}

// The linked image settles it: weak.elf (tests/data/stack/README.md) holds
// app.c's global and no local of the name, so the HAL file's definition was
// weak and its call runs the 544 B callback.
TEST(Stack, TheElfSettlesAWeakDefinitionReplacedByTheGlobal) {
  std::string error;
  auto elf = read_elf_image(stack_data("weak_callback/weak.elf"), error);
  ASSERT_TRUE(elf) << error;
  auto report = analyze_stack({stack_data("weak_callback")}, false, error, {"weak.elf", &*elf});
  ASSERT_TRUE(report) << error;
  const StackRoot* usart = root(*report, "USART1_IRQHandler");
  ASSERT_TRUE(usart);
  EXPECT_EQ(usart->worst_case_bytes, 552u);
  EXPECT_EQ(usart->path, (std::vector<std::string>{"USART1_IRQHandler", "HAL_UART_IRQHandler", "HAL_UART_RxCpltCallback"}));
  EXPECT_FALSE(usart->if_weak_bytes);
  EXPECT_TRUE(report->weak_or_static.empty());
  EXPECT_FALSE(report->interrupts_if_weak);
  EXPECT_EQ(report->interrupts.one_level_bytes, 288u + 552u + 36u);
  // The replaced default is not in the image: not a root of its own.
  EXPECT_EQ(report->not_linked, std::vector<std::string>{"HAL_UART_RxCpltCallback (hal_uart.c)"});
  EXPECT_EQ(report->elf, "weak.elf");
}

// The same call graph shape with a static callback (GCC titles it as it
// titles the weak one), built with -ffunction-sections and linked with
// --gc-sections: static.elf holds hal_uart.c's local, and not the unused
// HAL_UART_DeInit (1,024 B), which read as the thread's worst root.
// Truth by objdump: main `sub sp, #288`, the handlers push nothing and the
// static callback is a tail call: 288 + 0 + 36 = 324 B.
TEST(Stack, TheElfSettlesAStaticDefinitionAndLeavesOutWhatTheLinkerRemoved) {
  std::string error;
  auto as_written = analyze_stack({stack_data("static_callback")}, false, error);
  ASSERT_TRUE(as_written) << error;
  EXPECT_EQ(as_written->interrupts.thread_bytes, 1024u);
  EXPECT_FALSE(as_written->weak_or_static.empty());
  auto elf = read_elf_image(stack_data("static_callback/static.elf"), error);
  ASSERT_TRUE(elf) << error;
  auto report = analyze_stack({stack_data("static_callback")}, false, error, {"static.elf", &*elf});
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->interrupts.thread_bytes, 288u);
  EXPECT_EQ(report->interrupts.one_level_bytes, 324u);
  ASSERT_TRUE(root(*report, "USART1_IRQHandler"));
  EXPECT_EQ(root(*report, "USART1_IRQHandler")->worst_case_bytes, 0u);
  EXPECT_FALSE(root(*report, "USART1_IRQHandler")->if_weak_bytes);
  EXPECT_FALSE(root(*report, "HAL_UART_DeInit"));
  EXPECT_TRUE(report->weak_or_static.empty());
  EXPECT_EQ(report->not_linked,
            (std::vector<std::string>{"HAL_UART_DeInit", "HAL_UART_RxCpltCallback", "consume"}));
}

// An image that cannot say a file's static is gone (its locals discarded by
// ld --discard-all, or an LTO ltrans unit the STT_FILE symbols do not
// name) left out the static root sensor_task: 616 B for 912 (a reviewer's
// builds, tests/data/stack/README.md).
TEST(Stack, AnElfThatCannotTellLeavesNoRootOut) {
  for (const char* image : {"discarded_locals/fw.elf", "discarded_locals/strip_x.elf", "lto/fw.elf"}) {
    SCOPED_TRACE(image);
    const std::string dir = std::string(image).substr(0, std::string(image).find('/'));
    std::string error;
    auto elf = read_elf_image(stack_data(image), error);
    ASSERT_TRUE(elf) << error;
    auto report = analyze_stack({stack_data(dir)}, false, error, {"fw.elf", &*elf});
    ASSERT_TRUE(report) << error;
    EXPECT_EQ(report->interrupts.thread_bytes, 912u);
    EXPECT_TRUE(report->not_linked.empty());
  }
}

// a/util.c's weak cb and b/util.c's static cb are both "util.c" to the
// image: b's local made a's replaced weak read as kept, 2,064 B settled
// for 2,756 (a reviewer's build). Neither is settled; the doubt stays.
TEST(Stack, UnitsOfOneBaseNameAreNotSettledByTheElf) {
  std::string error;
  auto elf = read_elf_image(stack_data("same_basename/fw.elf"), error);
  ASSERT_TRUE(elf) << error;
  auto report = analyze_stack({stack_data("same_basename")}, false, error, {"fw.elf", &*elf});
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->weak_or_static, std::vector<std::string>{"cb"});
  ASSERT_TRUE(report->interrupts_if_weak);
  EXPECT_EQ(report->interrupts_if_weak->one_level_bytes, 2756u);
}

// libopencm3 names SysTick's handler sys_tick_handler: by its name it was a
// thread root, even with the image, whose vector table lists it, and the
// main stack read 1,656 B where SysTick took 1,816 B (a tester's Cortex-M3
// firmware under QEMU). tests/data/stack/vector_table: the table in its own
// .isr_vector section, and at the start of .text (CMSIS's gcc_arm.ld).
TEST(Stack, TheElfsVectorTableSaysWhichFunctionsAreHandlers) {
  for (const char* image : {"vector_table/isr_vector.elf", "vector_table/vectors_in_text.elf"}) {
    SCOPED_TRACE(image);
    std::string error;
    auto elf = read_elf_image(stack_data(image), error);
    ASSERT_TRUE(elf) << error;
    auto report = analyze_stack({stack_data("vector_table")}, false, error, {"fw.elf", &*elf});
    ASSERT_TRUE(report) << error;
    const StackRoot* systick = root(*report, "sys_tick_handler");
    ASSERT_TRUE(systick);
    EXPECT_TRUE(systick->interrupt);
    EXPECT_EQ(systick->worst_case_bytes, 200u);
    EXPECT_FALSE(root(*report, "Reset_Handler")->interrupt);
    const InterruptBudget& irq = report->interrupts;
    EXPECT_EQ(irq.one_level_bytes, irq.thread_bytes + 200 + irq.frame_bytes);
    EXPECT_TRUE(std::any_of(report->notes.begin(), report->notes.end(), [](const std::string& n) {
      return n == "by fw.elf's vector table, sys_tick_handler is an exception handler, though not named as one";
    }));
  }
  // Without the image nothing says so: a thread root, as its name reads.
  std::string error;
  auto report = analyze_stack({stack_data("vector_table")}, false, error);
  ASSERT_TRUE(report) << error;
  ASSERT_TRUE(root(*report, "sys_tick_handler"));
  EXPECT_FALSE(root(*report, "sys_tick_handler")->interrupt);
}

// An image without a vector table (linked -e main) says so: handlers are
// then known by their names.
TEST(Stack, AnElfWithoutAVectorTableSaysHandlersAreKnownByName) {
  std::string error;
  auto elf = read_elf_image(stack_data("weak_callback/weak.elf"), error);
  ASSERT_TRUE(elf) << error;
  auto report = analyze_stack({stack_data("weak_callback")}, false, error, {"weak.elf", &*elf});
  ASSERT_TRUE(report) << error;
  EXPECT_TRUE(std::any_of(report->notes.begin(), report->notes.end(), [](const std::string& n) {
    return n.starts_with("weak.elf holds no Cortex-M vector table");
  }));
}

// main calls PendSV_Handler when it polls (tests/data/stack/vector_table).
// Called, it was no root, and what it needs on top of the deepest thread
// point was lost (a tester's build: every handler nested 1,928 B said,
// 2,136 B measured). A handler is a root, with or without the image; one
// known by its name only that another handler calls is that one's callee.
TEST(Stack, AHandlerThreadCodeAlsoCallsIsStillARoot) {
  std::string error;
  auto elf = read_elf_image(stack_data("vector_table/isr_vector.elf"), error);
  ASSERT_TRUE(elf) << error;
  for (const bool with_elf : {false, true}) {
    SCOPED_TRACE(with_elf);
    auto report = analyze_stack({stack_data("vector_table")}, false, error,
                                with_elf ? LinkedImage{"fw.elf", &*elf} : LinkedImage{});
    ASSERT_TRUE(report) << error;
    const StackRoot* pendsv = root(*report, "PendSV_Handler");
    ASSERT_TRUE(pendsv);
    EXPECT_TRUE(pendsv->interrupt);
    EXPECT_EQ(pendsv->worst_case_bytes, 120u);
    EXPECT_EQ(root(*report, "Reset_Handler")->worst_case_bytes, 8u + 312 + 120);
    EXPECT_EQ(report->interrupts.thread_bytes, 440u);
  }
  auto g = graph({{"USART1_IRQHandler", 8, {"HAL_UART_IRQHandler"}},
                  {"HAL_UART_IRQHandler", 16, {}},
                  {"main", 100, {"SysTick_Handler"}},
                  {"SysTick_Handler", 40, {}}});
  StackReport r = worst_case_stacks(g, false);
  EXPECT_FALSE(root(r, "HAL_UART_IRQHandler"));
  ASSERT_TRUE(root(r, "SysTick_Handler"));
  EXPECT_TRUE(root(r, "SysTick_Handler")->interrupt);
  EXPECT_EQ(r.interrupts.handlers, 2u);
  EXPECT_EQ(r.interrupts.one_level_bytes, 140 + 40 + r.interrupts.frame_bytes);
  EXPECT_EQ(r.interrupts.all_nested_bytes, 140 + 40 + 24 + 2 * r.interrupts.frame_bytes);
  // main polls USART1_IRQHandler too: HAL_UART_IRQHandler stays its callee
  // (a reviewer's graph read it as a root of its own, nested 1,490 B for 1,054 B).
  auto polled = graph({{"main", 100, {"USART1_IRQHandler"}},
                       {"USART1_IRQHandler", 16, {"HAL_UART_IRQHandler"}},
                       {"HAL_UART_IRQHandler", 400, {}},
                       {"SysTick_Handler", 50, {}}});
  StackReport p = worst_case_stacks(polled, false);
  EXPECT_FALSE(root(p, "HAL_UART_IRQHandler"));
  ASSERT_TRUE(root(p, "USART1_IRQHandler"));
  EXPECT_TRUE(root(p, "USART1_IRQHandler")->interrupt);
  EXPECT_EQ(p.interrupts.handlers, 2u);
  EXPECT_EQ(p.interrupts.all_nested_bytes, 516u + 416 + 50 + 2 * p.interrupts.frame_bytes);
}

// With CCR.STKALIGN (set out of reset on the M3 r2p0 and later, M4, M7)
// the core pads a frame to align it to 8 B: 36 B when the interrupted SP is
// 4 mod 8 (a tester measured 36 B under QEMU, stacked xPSR bit 9 set: the
// stack went 2,000 B deep where 32 B frames said 1,996 B); 108 B with the
// FPU context.
TEST(Stack, AnExceptionFrameIsCountedWithItsAlignmentPad) {
  auto g = graph({{"main", 100, {}}, {"SysTick_Handler", 40, {}}, {"PendSV_Handler", 8, {}}});
  const InterruptBudget plain = worst_case_stacks(g, false).interrupts, fpu = worst_case_stacks(g, true).interrupts;
  EXPECT_EQ(plain.frame_bytes, 36u);
  EXPECT_EQ(plain.one_level_bytes, 100u + 40 + 36);
  EXPECT_EQ(plain.all_nested_bytes, 100u + 40 + 8 + 2 * 36);
  EXPECT_EQ(fpu.frame_bytes, 108u);
  EXPECT_EQ(fpu.one_level_bytes, 100u + 40 + 108);
}

// recurse calls only itself and --gc-sections removed it (tests/data/stack/
// vector_table): with the image it still stood as an unbounded root, and a
// budget that allows none broke on code the firmware does not hold.
TEST(Stack, ARecursiveFunctionTheLinkerRemovedIsNoRoot) {
  std::string error;
  auto as_written = analyze_stack({stack_data("vector_table")}, false, error);
  ASSERT_TRUE(as_written) << error;
  ASSERT_TRUE(root(*as_written, "recurse"));
  EXPECT_TRUE(root(*as_written, "recurse")->unbounded);
  auto elf = read_elf_image(stack_data("vector_table/isr_vector.elf"), error);
  ASSERT_TRUE(elf) << error;
  auto report = analyze_stack({stack_data("vector_table")}, false, error, {"fw.elf", &*elf});
  ASSERT_TRUE(report) << error;
  EXPECT_FALSE(root(*report, "recurse"));
  EXPECT_EQ(report->not_linked, std::vector<std::string>{"recurse"});
  EXPECT_TRUE(std::none_of(report->roots.begin(), report->roots.end(), [](const StackRoot& r) { return r.unbounded; }));
}

// main -> run -> fatal -> main, entered from an assembly Reset_Handler with
// no call graph (tests/data/stack/cycle_without_entry): every function had a
// caller, none was a root, and the main stack read 68 B with no UNBOUNDED
// line where main alone needs 208 + 512 + 24 = 744 B, and more for the
// recursion. Without the handler no root was left at all, and the report
// said there was no call graph. ping and pong only call each other and
// --gc-sections removed them: with the image they are no roots.
TEST(Stack, ACycleNothingOutsideCallsIsAnUnboundedRoot) {
  std::string error;
  auto as_written = analyze_stack({stack_data("cycle_without_entry")}, false, error);
  ASSERT_TRUE(as_written) << error;
  const StackRoot* main = root(*as_written, "main");
  ASSERT_TRUE(main);
  EXPECT_EQ(main->worst_case_bytes, 744u);
  EXPECT_EQ(main->path, (std::vector<std::string>{"main", "run", "fatal"}));
  EXPECT_TRUE(main->unbounded);
  EXPECT_EQ(main->reasons, std::vector<std::string>{"recursion: fatal, main, run"});
  EXPECT_FALSE(root(*as_written, "run") || root(*as_written, "fatal"));
  EXPECT_EQ(as_written->interrupts.thread_bytes, 744u);
  EXPECT_EQ(as_written->interrupts.all_nested_bytes, 744u + 32 + 36);
  ASSERT_TRUE(root(*as_written, "ping"));
  EXPECT_TRUE(root(*as_written, "ping")->unbounded);
  auto elf = read_elf_image(stack_data("cycle_without_entry/fw.elf"), error);
  ASSERT_TRUE(elf) << error;
  auto report = analyze_stack({stack_data("cycle_without_entry")}, false, error, {"fw.elf", &*elf});
  ASSERT_TRUE(report) << error;
  ASSERT_TRUE(root(*report, "main"));
  EXPECT_EQ(root(*report, "main")->worst_case_bytes, 744u);
  EXPECT_TRUE(root(*report, "main")->unbounded);
  EXPECT_FALSE(root(*report, "ping") || root(*report, "pong"));
  EXPECT_EQ(report->not_linked, (std::vector<std::string>{"ping", "pong"}));
  // No handler, no other function: the cycle is the only root.
  StackReport alone = worst_case_stacks(graph({{"main", 208, {"run"}}, {"run", 512, {"fatal"}}, {"fatal", 24, {"main"}}}), false);
  ASSERT_EQ(alone.roots.size(), 1u);
  EXPECT_EQ(alone.roots[0].function, "main");
  EXPECT_EQ(alone.roots[0].worst_case_bytes, 744u);
  EXPECT_TRUE(alone.roots[0].unbounded);
}

// With -flto the ltrans unit titles every function by a /tmp object
// ("/tmp/cc….ltrans0.o:uart_isr"), every one is local in the image and its
// STT_FILE names are empty (tests/data/stack/lto_vector_handler): the
// vector table's uart_isr matched no function of the graph and counted as
// the thread root, 636 B for 872. Matched by name, with a note that says so.
TEST(Stack, AnLtoUnitsHandlerIsFoundInTheVectorTableByName) {
  std::string error;
  auto elf = read_elf_image(stack_data("lto_vector_handler/fw.elf"), error);
  ASSERT_TRUE(elf) << error;
  auto report = analyze_stack({stack_data("lto_vector_handler")}, false, error, {"fw.elf", &*elf});
  ASSERT_TRUE(report) << error;
  ASSERT_TRUE(root(*report, "uart_isr"));
  EXPECT_TRUE(root(*report, "uart_isr")->interrupt);
  EXPECT_EQ(report->interrupts.thread_bytes, 200u);
  EXPECT_EQ(report->interrupts.handlers, 2u);  // uart_isr and Default_Handler
  EXPECT_EQ(report->interrupts.all_nested_bytes, 200u + 600 + 36 + 0 + 36);
  EXPECT_TRUE(std::find(report->notes.begin(), report->notes.end(),
                        "uart_isr matched to fw.elf's vector table by name alone: the image does not name its unit "
                        "(LTO's ltrans units), and a function of the same name elsewhere would count as a handler "
                        "too") != report->notes.end())
      << fmt::format("{}", fmt::join(report->notes, "\n"));
}

// b.c's static work (3,016 B) is in a .su with no .ci beside it; a.c's
// call graph has a static work of its own (tests/data/stack/
// static_in_su_without_ci). a.c's node stood for b.c's, and b.c's frame,
// the largest, was counted nowhere: the main stack read 84 B. Without the
// call graph the two were merged into one row, said to be of two programs.
TEST(Stack, AStaticOfASuFileWithoutItsCallGraphIsItsFilesOwn) {
  const std::string dir = stack_data("static_in_su_without_ci");
  std::string error;
  auto report = analyze_stack({dir + "/a.su", dir + "/a.ci", dir + "/b.su"}, false, error);
  ASSERT_TRUE(report) << error;
  std::multimap<std::string, uint64_t> frames;
  for (const auto& f : report->functions) frames.emplace(f.file, f.frame_bytes);
  EXPECT_EQ(frames, (std::multimap<std::string, uint64_t>{
                        {"a.c:2:12", 32}, {"a.c:3:6", 8}, {"b.c:2:12", 3016}, {"b.c:3:6", 8}}));
  // b.c's work is called by what b.c's unknown calls: a root of its own, unbounded.
  ASSERT_TRUE(root(*report, "work"));
  EXPECT_EQ(root(*report, "work")->worst_case_bytes, 3016u);
  EXPECT_TRUE(root(*report, "work")->unbounded);
  EXPECT_EQ(report->interrupts.thread_bytes, 3016u);
  ASSERT_TRUE(root(*report, "Reset_Handler"));
  EXPECT_EQ(root(*report, "Reset_Handler")->worst_case_bytes, 8u + 32);
  // A .su does not say static: b.c's work may be a global that a weak one
  // of a.c's gives way to, and that doubt is said (it errs high).
  EXPECT_EQ(report->weak_or_static, std::vector<std::string>{"work"});
  // Frames only: both listed, each with its file.
  auto frames_only = analyze_stack({dir + "/a.su", dir + "/b.su"}, false, error);
  ASSERT_TRUE(frames_only) << error;
  frames.clear();
  for (const auto& f : frames_only->functions) frames.emplace(f.file, f.frame_bytes);
  EXPECT_EQ(frames, (std::multimap<std::string, uint64_t>{
                        {"a.c:2:12", 32}, {"a.c:3:6", 8}, {"b.c:2:12", 3016}, {"b.c:3:6", 8}}));
  const std::string note =
            fmt::format("work is defined by 2 source files in .su files ({0}/a.su: a.c, {0}/b.su: b.c): listed apart, "
                        "as statics of their files; if these are two programs, give one's files",
                        dir);
  EXPECT_TRUE(std::find(frames_only->notes.begin(), frames_only->notes.end(), note) != frames_only->notes.end())
      << fmt::format("{}", fmt::join(frames_only->notes, "\n"));
}

// A weak default handler in startup.c and the strong one in app.c are two
// roots (GCC titles the weak one by its file): the root table printed two
// rows named SysTick_Handler with nothing to tell them apart.
TEST(Stack, RootsThatShareANameAreNamedWithTheirFiles) {
  auto dir = test::scratch_dir("edgemem_same_named_roots");
  std::ofstream(dir / "startup.ci")
      << "graph: { title: \"startup.c\"\n"
         "node: { title: \"startup.c:SysTick_Handler\" label: \"SysTick_Handler\\nstartup.c:8:27\\n64 bytes (static)\" }\n"
         "}\n";
  std::ofstream(dir / "app.ci") << "graph: { title: \"app.c\"\n"
                                   "node: { title: \"SysTick_Handler\" label: \"SysTick_Handler\\napp.c:9:6\\n32 bytes (static)\" }\n"
                                   "node: { title: \"main\" label: \"main\\napp.c:10:5\\n16 bytes (static)\" }\n"
                                   "}\n";
  std::string error;
  auto report = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(report) << error;
  const std::string text = stack_text(*report, 10);
  // The name column widens to the longest name, so the numbers stay in one column.
  EXPECT_NE(text.find("\nroot                        worst case  path\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nSysTick_Handler (startup.c)       64 B  SysTick_Handler\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nSysTick_Handler (app.c)           32 B  SysTick_Handler\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nmain                              16 B  main\n"), std::string::npos) << text;  // one of its name
  // The JSON names every root's file, so its readers can tell them apart too.
  nlohmann::json j = nlohmann::json::parse(stack_json(*report));
  std::multiset<std::string> roots;
  for (const auto& root : j["roots"]) roots.insert(root["function"].get<std::string>() + " in " + root["file"].get<std::string>());
  EXPECT_EQ(roots, (std::multiset<std::string>{"SysTick_Handler in startup.c", "SysTick_Handler in app.c", "main in app.c"}))
      << j["roots"].dump(1);
}

// m.ci: main calls work; c.su frames a work of 2,000 B (global), b.su one
// of 16 B (static); neither has a .ci. A .su cannot say which is global, so
// both were listed apart as statics and main's call reached neither: "main
// 16 B + unbounded, no stack info: work" where it is 16 + 2,000 = 2,016 B.
// The call goes to the largest, with a note.
TEST(Stack, ACallByPlainNameReachesTheLargestSuDefinition) {
  auto dir = std::filesystem::temp_directory_path() / "edgemem_plain_call";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "m.ci") << "graph: { title: \"m.c\"\n"
                                 "node: { title: \"main\" label: \"main\\nm.c:1:5\\n16 bytes (static)\" }\n"
                                 "node: { title: \"work\" label: \"work\\nm.c:0:6\" shape : ellipse }\n"
                                 "edge: { sourcename: \"main\" targetname: \"work\" label: \"m.c:1:40\" }\n}\n";
  std::ofstream(dir / "m.su") << "m.c:1:5:main\t16\tstatic\n";
  std::ofstream(dir / "b.su") << "b.c:2:13:work\t16\tstatic\nb.c:3:6:other\t8\tstatic\n";
  std::ofstream(dir / "c.su") << "c.c:2:6:work\t2000\tstatic\n";
  std::string error;
  auto report = analyze_stack({dir.string()}, false, error);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(report) << error;
  const StackRoot* main = root(*report, "main");
  ASSERT_TRUE(main);
  EXPECT_EQ(main->worst_case_bytes, 2016u);
  EXPECT_TRUE(std::none_of(main->reasons.begin(), main->reasons.end(),
                           [](const std::string& r) { return r.starts_with("no stack info"); }));
  EXPECT_EQ(report->interrupts.thread_bytes, 2016u);
  EXPECT_TRUE(std::any_of(report->notes.begin(), report->notes.end(), [](const std::string& n) {
    return n.find("calls by plain name to work (2000 B, c.c)") != std::string::npos;
  }));
}

// A cycle with a handler in it is entered by the hardware through the
// handler, a root already: SysTick_Handler <-> helper made helper a thread
// root too, thread 432 B and a worst case of 900 B where it is 16 + 432 +
// 36 = 484 B; USART1_IRQHandler > foo > bar > USART1_IRQHandler made bar
// one, 780 B for 16 + 372 + 36 = 424 B.
TEST(Stack, ACycleThroughAHandlerHasNoThreadRoot) {
  StackReport two = worst_case_stacks(
      graph({{"main", 16, {}}, {"SysTick_Handler", 32, {"helper"}}, {"helper", 400, {"SysTick_Handler"}}}), false);
  EXPECT_FALSE(root(two, "helper"));
  ASSERT_TRUE(root(two, "SysTick_Handler"));
  EXPECT_EQ(root(two, "SysTick_Handler")->worst_case_bytes, 432u);
  EXPECT_TRUE(root(two, "SysTick_Handler")->unbounded);
  EXPECT_EQ(two.interrupts.thread_bytes, 16u);
  EXPECT_EQ(two.interrupts.all_nested_bytes, 484u);
  StackReport three = worst_case_stacks(graph({{"main", 16, {}},
                                               {"USART1_IRQHandler", 32, {"foo"}},
                                               {"foo", 300, {"bar"}},
                                               {"bar", 40, {"USART1_IRQHandler"}}}),
                                        false);
  EXPECT_FALSE(root(three, "bar") || root(three, "foo"));
  ASSERT_TRUE(root(three, "USART1_IRQHandler"));
  EXPECT_EQ(root(three, "USART1_IRQHandler")->worst_case_bytes, 372u);
  EXPECT_EQ(three.interrupts.thread_bytes, 16u);
  EXPECT_EQ(three.interrupts.all_nested_bytes, 424u);
}

// A stray .su of another build in a tree of .su/.ci files (an -O0 chains.su
// renamed chains_O0.su, with no .ci): its larger frames were dropped in
// silence, helper counted 416 B where the -O0 file says 448 B. They count,
// with a note; a static of another file that shares the name is another
// function.
TEST(Stack, AStraySuFileWithoutItsCallGraphCountsItsLargerFramesWithANote) {
  auto dir = test::scratch_dir("edgemem_stray_su");
  std::ofstream(dir / "util.su") << "util.c:1:12:helper\t80\tstatic\nutil.c:2:5:a_entry\t8\tstatic\n";
  write_util_ci(dir);
  std::ofstream(dir / "util_O0.su") << "util.c:1:12:helper\t104\tstatic\nutil.c:2:5:a_entry\t16\tstatic\n";
  std::ofstream(dir / "other.su") << "other.c:1:12:helper\t900\tstatic\n";
  std::string error;
  auto report = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(report) << error;
  const StackRoot* entry = root(*report, "a_entry");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->worst_case_bytes, 16u + 104);
  const std::string note = fmt::format("2 functions of the call graphs framed differently by a .su file with no .ci "
                                       "beside it, counted with the larger (a file of another build? give one "
                                       "build's files): helper (104 B in {0}/util_O0.su, 80 B in {0}/util.ci); "
                                       "a_entry (16 B in {0}/util_O0.su, 8 B in {0}/util.ci)",
                                       dir.string());
  EXPECT_TRUE(std::find(report->notes.begin(), report->notes.end(), note) != report->notes.end())
      << fmt::format("{}", fmt::join(report->notes, "\n"));
}

TEST(Stack, AnElfOfAnotherBuildOrStrippedIsRefused) {
  std::string error;
  auto other = read_elf_image(stack_data("weak_callback/weak.elf"), error);
  ASSERT_TRUE(other) << error;
  EXPECT_FALSE(analyze_stack({stack_data("cxx_ctor_alias")}, false, error, {"other.elf", &*other}));
  EXPECT_NE(error.find("other.elf: holds none of the functions of the call graphs"), std::string::npos) << error;
  // A real stripped image (Zephyr's, tests/data/realworld).
  auto stripped = read_elf_image(test::realworld("elf/phyphox_satellite_zephyr_arm.elf"), error);
  ASSERT_TRUE(stripped) << error;
  EXPECT_FALSE(analyze_stack({stack_data("weak_callback")}, false, error, {"s.elf", &*stripped}));
  EXPECT_NE(error.find("s.elf: no symbol table (stripped?)"), std::string::npos) << error;
}

// A static beside another file's global of the same name: its calls are its
// own. Reaching the global too, a reviewer's build read 472 B for 232 B, and
// a static format() beside a global one that calls back invented recursion.
TEST(Stack, AStaticBesideAGlobalOfItsNameKeepsItsOwnCalls) {
  auto dir = test::scratch_dir("edgemem_static_beside_global");
  std::ofstream(dir / "a.ci") << "graph: { title: \"a.c\"\n"
                                 "node: { title: \"a.c:format\" label: \"format\\na.c:1:12\\n16 bytes (static)\" }\n"
                                 "node: { title: \"log_value\" label: \"log_value\\na.c:2:6\\n8 bytes (static)\" }\n"
                                 "edge: { sourcename: \"log_value\" targetname: \"a.c:format\" label: \"a.c:2:30\" }\n"
                                 "node: { title: \"main\" label: \"main\\na.c:3:5\\n32 bytes (static)\" }\n"
                                 "edge: { sourcename: \"main\" targetname: \"log_value\" label: \"a.c:3:20\" }\n}\n";
  std::ofstream(dir / "b.ci") << "graph: { title: \"b.c\"\n"
                                 "node: { title: \"format\" label: \"format\\nb.c:1:5\\n400 bytes (static)\" }\n"
                                 "node: { title: \"log_value\" label: \"log_value\\na.c:2:6\" shape : ellipse }\n"
                                 "edge: { sourcename: \"format\" targetname: \"log_value\" label: \"b.c:1:40\" }\n}\n";
  std::string error;
  auto report = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(report) << error;
  const StackRoot* main_root = root(*report, "main");
  ASSERT_TRUE(main_root);
  EXPECT_EQ(main_root->worst_case_bytes, 32u + 8 + 16);
  EXPECT_FALSE(main_root->unbounded) << fmt::format("{}", fmt::join(main_root->reasons, "; "));
}

// -fcallgraph-info without =su: the graph has no frames, and a static's
// node is titled "g.c:mid" while its .su line says "mid". The frame was
// not joined: vTask read "408 B + unbounded, no stack info: mid" beside a
// root "mid 48 B"; truth 8 + 48 + 400 = 456 B, bounded.
TEST(Stack, AStaticsFrameJoinsItsUnitsNodeWhenTheGraphHasNoFrames) {
  std::string error;
  auto report = analyze_stack({stack_data("callgraph_without_su")}, false, error);
  ASSERT_TRUE(report) << error;
  const StackRoot* task = root(*report, "vTask");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->worst_case_bytes, 456u);
  EXPECT_FALSE(task->unbounded) << fmt::format("{}", fmt::join(task->reasons, "; "));
  EXPECT_FALSE(root(*report, "mid"));
}

// g++ -O0 calls a constructor by its complete-object symbol (C1), an alias
// of the base-object one (C2) that has the node: "no stack info:
// _ZN4RingC1Ev" made the task unbounded, and Ring::Ring() was a root.
TEST(Stack, AConstructorCalledByItsAliasIsTheConstructor) {
  std::string error;
  auto report = analyze_stack({stack_data("cxx_ctor_alias")}, false, error);
  ASSERT_TRUE(report) << error;
  const StackRoot* task = root(*report, "void vSensorTask(void*)");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->worst_case_bytes, 176u);
  EXPECT_FALSE(task->unbounded) << fmt::format("{}", fmt::join(task->reasons, "; "));
  EXPECT_FALSE(root(*report, "Ring::Ring()"));
}

// A .su and the .ci beside it that disagree are files of two builds (one
// compiled again): the graph's 80 B stood for the .su's 800 B in silence.
TEST(Stack, AFrameItsSuAndCiGiveDifferentlyCountsTheLargerWithANote) {
  auto dir = test::scratch_dir("edgemem_stale_su");
  std::ofstream(dir / "util.su") << "util.c:1:12:helper\t800\tstatic\nutil.c:2:5:a_entry\t8\tstatic\n";
  write_util_ci(dir);
  std::string error;
  auto report = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(report) << error;
  const StackRoot* entry = root(*report, "a_entry");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->worst_case_bytes, 808u);
  ASSERT_EQ(report->notes.size(), 1u);
  EXPECT_NE(report->notes[0].find("helper (800 B in"), std::string::npos) << report->notes[0];
}

// FreeRTOS's GCC demos put the port's own handlers in the vector table
// (vPortSVCHandler, xPortPendSVHandler, xPortSysTickHandler), as the Pico
// SDK does its isr_* and TivaWare its *IntHandler: they were thread roots,
// and "every handler nested" was short by their frames. A callee with no
// frame is named as a person reads it, not by edgemem's key for it.
TEST(Stack, RtosAndVendorHandlerNamesAreHandlers) {
  auto dir = test::scratch_dir("edgemem_rtos_handlers");
  std::ofstream(dir / "port.ci")
      << "graph: { title: \"port.c\"\n"
         "node: { title: \"xPortPendSVHandler\" label: \"xPortPendSVHandler\\nport.c:1:6\\n8 bytes (static)\" }\n"
         "node: { title: \"xPortSysTickHandler\" label: \"xPortSysTickHandler\\nport.c:2:6\\n16 bytes (static)\" }\n"
         "node: { title: \"vPortSVCHandler\" label: \"vPortSVCHandler\\nport.c:3:6\\n0 bytes (static)\" }\n"
         "node: { title: \"isr_systick\" label: \"isr_systick\\nport.c:4:6\\n24 bytes (static)\" }\n"
         "node: { title: \"UARTIntHandler\" label: \"UARTIntHandler\\nport.c:5:6\\n40 bytes (static)\" }\n"
         "node: { title: \"main\" label: \"main\\nport.c:6:5\\n100 bytes (static)\" }\n"
         "node: { title: \"port.c:prvTick\" label: \"prvTick\\nport.c:7:13\\n8 bytes (static)\" }\n"
         "edge: { sourcename: \"main\" targetname: \"port.c:prvTick\" label: \"port.c:6:20\" }\n"
         "edge: { sourcename: \"port.c:prvTick\" targetname: \"port.c:undefinedStatic\" label: \"port.c:7:30\" }\n"
         "}\n";
  std::string error;
  auto report = analyze_stack({dir.string()}, false, error);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->interrupts.handlers, 5u);
  EXPECT_EQ(report->interrupts.thread_bytes, 108u);
  EXPECT_EQ(report->interrupts.all_nested_bytes, 108u + 8 + 16 + 0 + 24 + 40 + 5 * 36);
  const StackRoot* main_root = root(*report, "main");
  ASSERT_TRUE(main_root);
  EXPECT_EQ(main_root->reasons, std::vector<std::string>{"no stack info: undefinedStatic (port.c)"});
}

}  // namespace
}  // namespace edgemem
