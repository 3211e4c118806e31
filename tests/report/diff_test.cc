// edgemem diff: two builds of the corpus' own firmware (-O2 -> -O0) and two
// synthetic runs.
#include <gtest/gtest.h>

#include "report/diff.h"
#include "report/diff_report.h"
#include "test_support.h"

namespace edgemem {
namespace {

const DiffRow* row(const std::vector<DiffGroup>& groups, const std::string& group, const std::string& name) {
  for (const auto& g : groups)
    if (g.id == group)
      for (const auto& r : g.rows)
        if (r.name == name) return &r;
  return nullptr;
}

TEST(Diff, TwoBuildsOfTheSameFirmware) {
  std::string error;
  auto o2 = parse_linker_map(test::read_file(test::corpus("map/own_cm4_O2.map")), error);
  auto o0 = parse_linker_map(test::read_file(test::corpus("map/own_cm4_O0.map")), error);
  ASSERT_TRUE(o2 && o0) << error;
  auto groups = diff_maps(*o2, *o0);
  ASSERT_NE(row(groups, "regions", "FLASH"), nullptr);
  EXPECT_EQ(row(groups, "regions", "FLASH")->delta(), 3528 - 3292);  // ld's FLASH use of both builds
  EXPECT_EQ(row(groups, "sections", ".text")->delta(), 3456 - 3220);
  EXPECT_TRUE(row(groups, "symbols", "dot_s8")->added);  // inlined at -O2
  EXPECT_TRUE(row(groups, "symbols", "memset")->removed);
  // Biggest change first within each group.
  for (const auto& g : groups)
    for (size_t i = 1; i < g.rows.size(); ++i) EXPECT_GE(std::abs(g.rows[i - 1].delta()), std::abs(g.rows[i].delta()));
  // A map against itself changes nothing.
  for (const auto& g : diff_maps(*o2, *o2))
    for (const auto& r : g.rows) EXPECT_EQ(r.delta(), 0) << g.title << " " << r.name;
}

// Each LTO link writes its partitions to temporary files of new names: two
// builds' partitions were one [gone] and one [new] row in every diff.
TEST(Diff, LtoPartitionsAreComparedByPartition) {
  LinkerMap a, b;
  a.contributions = {{".text", "/tmp/ccvYTmV7.ltrans0.ltrans.o", 900}, {".text", "startup.o", 40}};
  b.contributions = {{".text", "/tmp/ccQ2x9Lp.ltrans0.ltrans.o", 964}, {".text", "startup.o", 40}};
  auto groups = diff_maps(a, b);
  const DiffRow* part = row(groups, "objects", "ltrans0.o (LTO partition)");
  ASSERT_NE(part, nullptr);
  EXPECT_FALSE(part->added || part->removed);
  EXPECT_EQ(part->delta(), 64);
}

// GNU ld lists an output section that received nothing at size 0; one that
// emptied between two builds is gone, as it is in maps of linkers that omit it.
TEST(Diff, AGnuSectionThatEmptiedIsGone) {
  auto image = [](uint64_t exidx) {
    LinkerMap m;
    m.sections = {{".text", 0x08000000, 100, std::nullopt, SectionKind::code, 0},
                  {".ARM.exidx", 0x08000064, exidx, std::nullopt, SectionKind::rodata, 0},
                  {".empty_in_both", 0x08000064, 0, std::nullopt, SectionKind::rodata, 0}};
    return m;
  };
  auto groups = diff_maps(image(8), image(0));
  ASSERT_NE(row(groups, "sections", ".ARM.exidx"), nullptr);
  EXPECT_TRUE(row(groups, "sections", ".ARM.exidx")->removed);
  EXPECT_EQ(row(groups, "sections", ".ARM.exidx")->delta(), -8);
  EXPECT_TRUE(row(diff_maps(image(0), image(8)), "sections", ".ARM.exidx")->added);
  EXPECT_EQ(row(groups, "sections", ".empty_in_both"), nullptr);
}

// Symbols that share a name (file-local statics) are rows of their own by
// object: in review one row per name kept the largest, and a.o's buf
// growing by 50 B, or two bufs swapping sizes, showed no change.
TEST(Diff, SymbolsThatShareANameAreToldApartByObject) {
  auto image = [](uint64_t a_buf, uint64_t b_buf) {
    LinkerMap m;
    m.symbols = {{"buf", ".bss", "o/a.o", 0x20000000, a_buf}, {"buf", ".bss", "o/b.o", 0x20001000, b_buf},
                 {"main", ".text", "o/a.o", 0x08000000, 40}};
    return m;
  };
  auto grown = diff_maps(image(100, 200), image(150, 200));
  ASSERT_NE(row(grown, "symbols", "buf (o/a.o)"), nullptr);
  EXPECT_EQ(row(grown, "symbols", "buf (o/a.o)")->delta(), 50);
  EXPECT_EQ(row(grown, "symbols", "buf (o/b.o)")->delta(), 0);
  EXPECT_EQ(row(grown, "symbols", "main")->delta(), 0);  // a name of one symbol stays bare
  auto swapped = diff_maps(image(100, 200), image(200, 100));
  EXPECT_EQ(row(swapped, "symbols", "buf (o/a.o)")->delta(), 100);
  EXPECT_EQ(row(swapped, "symbols", "buf (o/b.o)")->delta(), -100);
  // Shared in only one of the images: both are told apart alike.
  LinkerMap one = image(100, 200);
  one.symbols.erase(one.symbols.begin() + 1);
  auto added = diff_maps(one, image(100, 200));
  ASSERT_NE(row(added, "symbols", "buf (o/b.o)"), nullptr);
  EXPECT_TRUE(row(added, "symbols", "buf (o/b.o)")->added);
  EXPECT_EQ(row(added, "symbols", "buf (o/a.o)")->delta(), 0);
}

// A map symbol's size that is only a span to the next listed one grows
// with the statics inside it: a file-local array going from 32 B to 64 B
// read "g_model 3,048 B -> 3,080 B +32 B", as exact, where nm -S says
// g_model is 3,000 B in both builds (a stranger's audit). The row says so.
TEST(Diff, ASizeTheMapOnlyBoundsIsSaidToBeOne) {
  auto image = [](uint64_t span, bool bounded) {
    LinkerMap m;
    m.symbols = {{"g_model", ".rodata", "main.o", 0x08001000, span}, {"main", ".text", "main.o", 0x08000000, 40}};
    m.symbols[0].size_is_upper_bound = bounded;
    return m;
  };
  auto grown = diff_maps(image(3048, true), image(3080, true));
  ASSERT_NE(row(grown, "symbols", "g_model"), nullptr);
  EXPECT_TRUE(row(grown, "symbols", "g_model")->upper_bound);
  EXPECT_NE(diff_label(*row(grown, "symbols", "g_model")).find("size only bounded by the map"), std::string::npos);
  EXPECT_FALSE(row(grown, "symbols", "main")->upper_bound);
  EXPECT_TRUE(row(diff_maps(image(3000, false), image(3080, true)), "symbols", "g_model")->upper_bound);
  EXPECT_FALSE(row(diff_maps(image(3000, false), image(3000, false)), "symbols", "g_model")->upper_bound);
}

// Fragmentation over different pools is not compared: a trace whose heap
// lost its base measured the arena alone, and the diff read "band better
// (danger -> healthy)" for the same events (a stranger's audit).
TEST(Diff, FragmentationOverDifferentPoolsIsNotCompared) {
  auto run = [](bool heap_judged, double max) {
    AnalysisResult r;
    r.fragmentation.max_rate = max;
    r.fragmentation.final_rate = max;
    r.fragmentation.band = max > 0.4 ? Band::danger : Band::healthy;
    r.fragmentation.pools = {{"arena", true, 0, 0, 0, 0, {}}, {"heap", heap_judged, max, max, 0, 0, {}}};
    return r;
  };
  auto different = diff_traces(run(true, 0.5), run(false, 0.0));
  EXPECT_EQ(row(different, "run", "fragmentation_band"), nullptr);
  EXPECT_EQ(row(different, "run", "fragmentation_max_rate"), nullptr);
  // Said, not dropped in silence ("no change in run" read as the same band).
  EXPECT_EQ(different.front().note,
            "fragmentation not compared: measured over different pools of known extent (before: arena, heap; after: "
            "arena)");
  DiffReport report{"a.log", "b.log", "traces", different, "", ""};
  EXPECT_NE(diff_headline(report).text.find("fragmentation not compared"), std::string::npos);
  auto same = diff_traces(run(true, 0.5), run(true, 0.1));
  ASSERT_NE(row(same, "run", "fragmentation_max_rate"), nullptr);
  EXPECT_DOUBLE_EQ(row(same, "run", "fragmentation_max_rate")->delta(), 0.1 - 0.5);
}

// The change's share of its before value, never a bare 0.0 %: +1 B of
// 200,000 B once read "+0.00 %" (found in review).
TEST(Diff, ARatioTooSmallToShowSaysSo) {
  auto ratio = [](double before, double after) {
    return diff_ratio(DiffRow{"x", "", DiffUnit::bytes, before, after, false, false});
  };
  EXPECT_EQ(ratio(200000, 200001), "+<0.01 %");
  EXPECT_EQ(ratio(200001, 200000), "-<0.01 %");
  EXPECT_EQ(ratio(100000, 100070), "+0.07 %");
  EXPECT_EQ(ratio(1000, 1100), "+10.0 %");
  EXPECT_EQ(ratio(1000, 1000), "0 %");
  EXPECT_EQ(ratio(0, 10), "");  // no share of nothing
}

// A row is listed because its values differ: "+0.0 points" said they did not.
TEST(Diff, ASmallChangeKeepsTheDigitsThatShowIt) {
  EXPECT_EQ(diff_change(0.0004, DiffUnit::fraction), "+0.04 points");
  EXPECT_EQ(diff_change(-0.2, DiffUnit::fraction), "-20.0 points");
  EXPECT_EQ(diff_change(0.02, DiffUnit::bytes_per_inference), "+0.02 B/inference");
  EXPECT_EQ(diff_change(-1e-9, DiffUnit::bytes_per_inference), "-<0.00001 B/inference");
  EXPECT_EQ(diff_change(0, DiffUnit::bytes_per_inference), "+0.0 B/inference");
  EXPECT_EQ(diff_value(1.0 / 30, DiffUnit::bytes_per_inference), "0.03 B/inference");
  EXPECT_EQ(diff_value(0, DiffUnit::bytes_per_inference), "0.0 B/inference");
}

TEST(Diff, TwoRuns) {
  AnalysisResult a, b;
  a.peak_bytes = 1000;
  b.peak_bytes = 1500;
  a.inferences = b.inferences = 10;
  b.leak_rate_bytes_per_inference = 644;
  b.sites.push_back({"model.c:58", 10, 0, 6440, 6440, 10});
  auto groups = diff_traces(a, b);
  EXPECT_EQ(row(groups, "run", "peak_bytes")->delta(), 500);
  EXPECT_EQ(row(groups, "run", "leak_rate_bytes_per_inference")->after, 644);
  EXPECT_TRUE(row(groups, "site_live_bytes", "model.c:58")->added);
}

// Without inference markers a run has no leak rate per inference and no
// inference peak: they were compared as "0 B -> 0 B" (a helper's two logs).
TEST(Diff, PerInferenceNumbersAreComparedOnlyWhereBothRunsMarkInferences) {
  AnalysisResult unmarked, marked;
  unmarked.peak_bytes = 100;
  marked.inferences = 5;
  marked.peak.max_inference_peak = 700;
  for (const auto& [a, b] : {std::pair{unmarked, unmarked}, std::pair{unmarked, marked}, std::pair{marked, unmarked}}) {
    auto groups = diff_traces(a, b);
    EXPECT_EQ(row(groups, "run", "max_inference_peak_bytes"), nullptr);
    EXPECT_EQ(row(groups, "run", "leak_rate_bytes_per_inference"), nullptr);
    ASSERT_NE(row(groups, "run", "inferences"), nullptr);
  }
  EXPECT_EQ(row(diff_traces(marked, marked), "run", "max_inference_peak_bytes")->after, 700);
}

// Past its first 1,000 sites a run sums the rest: a site one run lists and
// the other leaves out is not "added" or "removed", it is not known.
TEST(Diff, ASiteOneRunLeftOutOfItsListIsNotComparedAsZero) {
  AnalysisResult a, b;
  a.sites.push_back({"both.c:1", 1, 0, 100, 100, 1});
  a.sites.push_back({"only_a.c:1", 1, 0, 50, 50, 1});
  a.sites_omitted = SitesOmitted{2000, 2000, 0, 4000, 4000, 2000};
  b.sites.push_back({"both.c:1", 1, 0, 300, 300, 1});
  b.sites.push_back({"only_b.c:1", 1, 0, 70, 70, 1});
  auto groups = diff_traces(a, b);
  EXPECT_EQ(row(groups, "site_live_bytes", "both.c:1")->delta(), 200);
  EXPECT_EQ(row(groups, "site_live_bytes", "only_b.c:1"), nullptr);  // maybe among a's 2,000 left out
  ASSERT_NE(row(groups, "site_live_bytes", "only_a.c:1"), nullptr);  // b lists every site: it held nothing
  EXPECT_TRUE(row(groups, "site_live_bytes", "only_a.c:1")->removed);
  // Left out, but said, with no bound on what a held there (its leaking sites are listed however small).
  const DiffGroup* sites = nullptr;
  for (const DiffGroup& g : groups)
    if (g.id == "site_live_bytes") sites = &g;
  ASSERT_NE(sites, nullptr);
  EXPECT_EQ(sites->note, "1 site listed after only, not compared (the before run lists only the sites holding most, "
                         "and its leaking ones): the largest, only_b.c:1, held 70 B after");
}

TEST(Diff, FragmentationIsAFractionAndEveryHeadlineHasAUnit) {
  AnalysisResult a, b;
  a.fragmentation.max_rate = 0.25;
  b.fragmentation.max_rate = 0.73;
  auto groups = diff_traces(a, b);
  const DiffRow* f = row(groups, "run", "fragmentation_max_rate");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->unit, DiffUnit::fraction);
  EXPECT_DOUBLE_EQ(f->after, 0.73);  // not 73 (percent)
  EXPECT_EQ(row(groups, "run", "inferences")->unit, DiffUnit::count);
  EXPECT_EQ(row(groups, "run", "peak_bytes")->unit, DiffUnit::bytes);
  // Measured in one run only: not compared, never "0 % -> 73 %".
  AnalysisResult unmeasured;
  EXPECT_EQ(row(diff_traces(unmeasured, b), "run", "fragmentation_max_rate"), nullptr);
}

// A check that did not run found nothing, not 0: "overflows -1 (1 -> 0)"
// once read as an improvement where the second run declared no arena size.
TEST(Diff, ChecksThatDidNotRunAreNotComparedAsZero) {
  AnalysisResult sized, unsized;
  sized.checks.overflow.status = CheckStatus::found;
  sized.overflow_count = 1;
  sized.checks.leaks.status = sized.checks.lifo.status = CheckStatus::clean;
  unsized.checks.leaks.status = CheckStatus::clean;
  auto groups = diff_traces(sized, unsized);
  EXPECT_EQ(row(groups, "run", "overflows"), nullptr);
  EXPECT_EQ(row(groups, "run", "lifo_stranded_bytes"), nullptr);
  ASSERT_NE(row(groups, "run", "leaked_bytes"), nullptr);
  EXPECT_EQ(row(diff_traces(sized, sized), "run", "overflows")->after, 1);
}

// Counts change by thousands in soak runs: grouped as the values beside them are.
TEST(Diff, CountChangesAreGroupedLikeTheirValues) {
  EXPECT_EQ(diff_change(12345, DiffUnit::count), "+12,345");
  EXPECT_EQ(diff_change(-8657, DiffUnit::count), "-8,657");
  EXPECT_EQ(diff_change(0, DiffUnit::count), "+0");
  EXPECT_EQ(diff_value(12345, DiffUnit::count), "12,345");
}

}  // namespace
}  // namespace edgemem
