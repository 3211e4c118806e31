// The plan and fit pages embed the numbers of the plan and the fit they
// draw: both planners' offsets, the recommended arena in parts that add up
// to it, the peak; fit's totals rounded as the text report rounds them.
// (The browser side is tests/report/html_plan_fit_test.sh.)
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "plan/fit.h"
#include "plan/lifetimes.h"
#include "plan/model_plan.h"
#include "plan/planners.h"
#include "report/fit_report.h"
#include "report/plan_report.h"
#include "report/units.h"
#include "static/linker_map.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

using nlohmann::json;

json data_of(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"edgemem-data\">";
  size_t begin = page.find(open);
  if (begin == std::string::npos) return nullptr;
  begin += open.size();
  return json::parse(page.substr(begin, page.find("</script>", begin) - begin));
}

plan::TfliteModel model_at(const std::string& path) {
  std::string bytes = read_file(path), error;
  auto model = plan::read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
  if (!model) throw std::runtime_error(path + ": " + error);
  return *model;
}

const std::string kVww = "tflite/mlperftiny_vww_96_int8.tflite";

TEST(PlanPage, EmbedsBothPlannersOffsetsAsTheLibraryPlansThem) {
  plan::TfliteModel model = model_at(corpus(kVww));
  plan::PlanReport r = plan::plan_model(model, "vww.tflite", {});
  json d = data_of(plan_html(r));
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["kind"], "plan");
  const json& p = d["plan"];
  EXPECT_EQ(p["recommended_arena_bytes"], r.budget.recommended_bytes);
  EXPECT_EQ(p["arena_bytes"], r.arena_bytes);
  EXPECT_EQ(p["tflm_greedy_bytes"], r.tflm_greedy_bytes);
  EXPECT_GT(r.tflm_greedy_bytes, r.arena_bytes);  // the model where the two plans differ

  // The offsets on the page are the two planners' own, tensor by tensor.
  std::vector<plan::Buffer> buffers = plan::planner_input(plan::planned_buffers(model));
  plan::Plan greedy = plan::tflm_greedy_plan(buffers), best = plan::best_plan(buffers);
  ASSERT_EQ(p["tensors"].size(), buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(p["tensors"][i]["tflm_offset"], greedy.offsets[i]) << i;
    EXPECT_EQ(p["tensors"][i]["offset"], best.offsets[i]) << i;
    EXPECT_EQ(p["tensors"][i]["aligned_bytes"], buffers[i].size) << i;
  }
  EXPECT_EQ(d["peak"]["op"], r.peak_op);
  EXPECT_EQ(d["peak"]["live_bytes"], r.peak_live_bytes);
  EXPECT_EQ(d["peak"]["tensors"], r.peak_tensors);
  EXPECT_EQ(d["operator_names"].size(), model.ops.size());
  EXPECT_EQ(d["verdict"][0], "recommended arena (kTensorArenaSize, cortex-m): " +
                                 units::bytes_human(r.budget.recommended_bytes));
}

// --planner greedy: the chosen plan is TFLite Micro's, so both offsets agree.
TEST(PlanPage, GreedyPlannerChosenGivesTheSameOffsetsTwice) {
  plan::PlanOptions options;
  options.planner = plan::Planner::tflm_greedy;
  plan::PlanReport r = plan::plan_model(model_at(corpus(kVww)), "vww.tflite", options);
  EXPECT_EQ(r.planner, "tflm-greedy");
  for (const auto& t : r.tensors) EXPECT_EQ(t.offset, t.tflm_offset);
}

// The stacked bar's parts add up to the recommendation on every corpus
// model, whichever phase of AllocateTensors() sets it.
TEST(PlanPage, ArenaPartsSumToTheRecommendedArena) {
  size_t models = 0, temporary = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus("tflite"))) {
    if (entry.path().extension() != ".tflite") continue;
    SCOPED_TRACE(entry.path().filename().string());
    plan::PlanReport r = plan::plan_model(model_at(entry.path().string()), "m.tflite", {});
    json d = data_of(plan_html(r));
    uint64_t sum = 0;
    for (const json& part : d["arena_parts"]) {
      EXPECT_GT(part["bytes"].get<uint64_t>(), 0u);
      sum += part["bytes"].get<uint64_t>();
      if (part["part"] == "temporary") ++temporary;
    }
    EXPECT_EQ(sum, r.budget.recommended_bytes);
    ++models;
  }
  EXPECT_GT(models, 20u);
  EXPECT_GT(temporary, 0u);  // some model is sized by its planning or prepare peak
}

TEST(PlanPage, AModelTfliteMicroCannotRunHasNoArenaToBreakDown) {
  plan::PlanReport r = plan::plan_model(
      model_at(std::string(EDGEMEM_TEST_DATA_DIR) + "/realworld/tflite/litert_multi_add_flex.tflite"), "flex.tflite", {});
  json d = data_of(plan_html(r));
  EXPECT_TRUE(d["plan"]["recommended_arena_bytes"].is_null());
  EXPECT_TRUE(d["arena_parts"].empty());
  EXPECT_EQ(d["plan"]["verdict"], "tflm_cannot_run");
  EXPECT_EQ(d["verdict"][0].get<std::string>().rfind("TFLite Micro cannot run this model: FlexAddV2", 0), 0u);
}

FitReport fit_on(const std::string& model_file, const std::string& mcu) {
  plan::TfliteModel model = model_at(corpus(model_file));
  std::string map_text = read_file(corpus("map/own_cm4_O2.map")), error;
  auto map = parse_linker_map(map_text, error);
  if (!map) throw std::runtime_error(error);
  std::optional<plan::Mcu> chip;
  for (const auto& m : plan::builtin_mcus())
    if (m.name == mcu) chip = m;
  if (!chip) throw std::runtime_error("no MCU " + mcu);
  FitReport rep;
  rep.model = model_file;
  rep.map = "own_cm4_O2.map";
  rep.toolchain = map->toolchain;
  rep.core = chip->core;
  rep.source = CapacitySource::mcu;
  rep.target = "cortex-m";
  rep.budget = plan::arena_budget(model, plan::Target::cortex_m);
  rep.result = plan::fit(rep.budget, read_file(corpus(model_file)).size(), *map, chip);
  return rep;
}

TEST(FitPage, EmbedsTheTotalsAndTheirSharesAsTheTextReportPrintsThem) {
  FitReport rep = fit_on("tflite/tflm_person_detect.tflite", "STM32F103C8");
  ASSERT_FALSE(rep.fits());
  json d = data_of(fit_html(rep));
  EXPECT_EQ(d["kind"], "fit");
  EXPECT_EQ(d["fit"]["verdict"], "does_not_fit");
  EXPECT_EQ(d["fit"]["ram"]["need_bytes"], rep.result.ram_need);
  EXPECT_EQ(d["fit"]["flash"]["need_bytes"], rep.result.flash_need);
  EXPECT_EQ(d["fit"]["arena"]["recommended_bytes"], rep.budget.recommended_bytes);
  // The map's tensor_arena is 16-byte aligned: the arena placed in its stead
  // needs no allowance, in the one block as in the RAM total (the page once
  // drew the recommendation there).
  EXPECT_EQ(d["fit"]["arena"]["placed_bytes"], rep.budget.recommended_bytes - rep.budget.alignment_bytes);
  EXPECT_EQ(d["verdict"][0], "DOES NOT FIT on STM32F103C8 (Cortex-M3)");
  // The page's shares are the very strings in the text report's totals.
  std::string text = fit_text(rep);
  for (const char* memory : {"flash", "ram"})
    EXPECT_NE(text.find("(" + d["shares"][memory].get<std::string>() + ")"), std::string::npos) << memory;
}

// Over by less than the rounding shows is never "100.0 %" beside SHORT.
TEST(FitPage, AShareOverCapacityByLessThanItsRoundingSaysSo) {
  EXPECT_EQ(fit_share(19504, 19503), "> 100.0 %");
  EXPECT_EQ(fit_share(19503, 19503), "100.0 %");
  EXPECT_EQ(fit_share(86852, 20480), "424.1 %");
}

// A load image the map cannot confirm is named in the headline only where
// the verdict rests on it: flash short by no more than it, all else fitting.
// It was said beside a RAM shortfall, where flash fitted either way.
TEST(FitPage, AnUnsureLoadImageIsBlamedOnlyWhenTheVerdictRestsOnIt) {
  FitReport rep;
  rep.model = "m.tflite";
  plan::FitResult& r = rep.result;
  r.flash_capacity = 65536;
  r.flash_need = 55785;
  r.flash_unsure = 40;
  r.flash_unsure_sections = {".ccmdata"};
  r.fits_flash = true;
  r.ram_capacity = 24576;
  r.ram_need = 31068;
  r.fits_ram = false;
  r.fits_block = true;
  const std::string blame = "counting a load image the map cannot confirm";
  EXPECT_EQ(fit_text(rep).find(blame), std::string::npos) << fit_text(rep);
  r.fits_ram = true;
  r.flash_need = 65550;  // short by 14 B, of which the 40 B may not be there
  r.fits_flash = false;
  EXPECT_NE(fit_text(rep).find(blame), std::string::npos) << fit_text(rep);
  r.fits_weights_block = false;  // the weights' block is short by the same bytes (a review found the blame gone)
  EXPECT_NE(fit_text(rep).find(blame), std::string::npos) << fit_text(rep);
  r.flash_need = 65600;  // short by 64 B: more than those 40 B
  EXPECT_EQ(fit_text(rep).find(blame), std::string::npos) << fit_text(rep);
}

TEST(FitPage, FittingModelSaysFitsFirst) {
  FitReport rep = fit_on("tflite/tflm_keyword_scrambled.tflite", "nRF52840");
  ASSERT_TRUE(rep.fits());
  json d = data_of(fit_html(rep));
  EXPECT_EQ(d["fit"]["verdict"], "fits");
  EXPECT_EQ(d["verdict"][0].get<std::string>().rfind("FITS on nRF52840", 0), 0u);
}

}  // namespace
}  // namespace edgemem::test
