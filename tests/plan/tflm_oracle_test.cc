// recommended_arena_bytes against TFLite Micro itself: the smallest arena on
// which its interpreter allocated and ran each corpus model on x86-64,
// measured by tools/tflm_oracle/measure.sh into tests/data/tflm_arena_measured.json.
// A complete estimate must cover that minimum and waste at most 10 % of it.
// Models listed with "edgemem_known_gap" must still miss, so that fixing one
// forces its note out of the data.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "plan/arena_budget.h"
#include "plan/lifetimes.h"
#include "plan/model_plan.h"
#include "test_support.h"

namespace edgemem::plan {
namespace {

using edgemem::test::corpus;
using edgemem::test::read_file;

nlohmann::json measured() {
  return nlohmann::json::parse(read_file(std::string(EDGEMEM_TEST_DATA_DIR) + "/tflm_arena_measured.json"));
}

TEST(TflmOracle, EveryCorpusModelWasMeasured) {
  const auto models = measured()["models"];
  for (const auto& entry : std::filesystem::directory_iterator(corpus("tflite"))) {
    if (entry.path().extension() != ".tflite") continue;
    EXPECT_TRUE(models.contains(entry.path().filename().string()))
        << entry.path().filename() << " is not in tflm_arena_measured.json: run tools/tflm_oracle/measure.sh";
  }
}

TEST(TflmOracle, CompleteEstimatesCoverTheMeasuredMinimumWithinTenPercent) {
  size_t checked = 0;
  const nlohmann::json models = measured()["models"];
  for (const auto& [file, m] : models.items()) {
    SCOPED_TRACE(file);
    if (m["status"] != "ok") {
      EXPECT_FALSE(m.contains("edgemem_known_gap")) << "a gap is only recorded for models TFLite Micro runs";
      continue;
    }
    const ArenaBudget b = arena_budget(test::tflite_model(corpus("tflite/" + std::string(file))), Target::x86_64);
    const uint64_t minimum = m["min_arena_bytes"];
    const bool covers = b.recommended_bytes >= minimum;
    const bool tight = static_cast<double>(b.recommended_bytes) <= 1.10 * static_cast<double>(minimum);
    if (m.contains("edgemem_known_gap")) {
      EXPECT_FALSE(b.complete && covers && tight)
          << "now within 0..10 % of TFLite Micro (" << b.recommended_bytes << " B for " << minimum
          << " B): remove its edgemem_known_gap";
      continue;
    }
    if (!b.complete) continue;
    ++checked;
    EXPECT_TRUE(covers) << "recommends " << b.recommended_bytes << " B, TFLite Micro needs " << minimum << " B";
    EXPECT_TRUE(tight) << "recommends " << b.recommended_bytes << " B, more than 1.10 x the " << minimum
                       << " B TFLite Micro needs";
    // Without the allowance for an unaligned arena, the estimate must still
    // fit an aligned one (measured sizes step by 16 B, hence the rounding).
    EXPECT_GE(align_up(b.recommended_bytes - b.alignment_bytes, 16), minimum);
    // TFLite Micro ran in its minimum (an aligned array): `plan --declared`
    // with it must not call it short.
    PlanReport declared;
    declared.budget = b;
    declared.declared = minimum;
    EXPECT_FALSE(declared.declared_short()) << "--declared " << minimum << " is called short";
  }
  EXPECT_GT(checked, 0u) << "no complete estimate was compared";
}

TEST(TflmOracle, LstmSignalAndTransposeConvModelsAreCostedAndCovered) {
  const auto models = measured()["models"];
  for (const char* file : {"tflm_micro_speech_lstm.tflite", "tflm_trained_lstm_int8.tflite",
                           "tflm_dtln_noise_suppression.tflite", "tflm_audio_preprocessor_int8.tflite",
                           "tflm_audio_preprocessor_float.tflite", "tflm_seanet_transpose_conv4.tflite"}) {
    SCOPED_TRACE(file);
    const ArenaBudget b = arena_budget(test::tflite_model(corpus("tflite/" + std::string(file))), Target::x86_64);
    EXPECT_TRUE(b.complete);
    EXPECT_GE(b.recommended_bytes, models[file]["min_arena_bytes"].get<uint64_t>());
  }
}

// Every model whose kernel TFLite Micro refused in Prepare (the oracle's
// "failed to prepare" status names the node) is refused by edgemem too, with
// that operator named and no arena recommended. (A model refused only for a
// missing registration, the Ethos-U op on a build without the NPU driver,
// runs on a build that has it.)
TEST(TflmOracle, ModelsWhoseKernelTfliteMicroRefusesGetNoRecommendation) {
  size_t checked = 0;
  const nlohmann::json models = measured()["models"];
  for (const auto& [file, m] : models.items()) {
    const std::string status = m["status"];
    const size_t node = status.find("Node ");
    if (status.find("failed to prepare") == std::string::npos || node == std::string::npos) continue;
    SCOPED_TRACE(file);
    ++checked;
    const std::string op = status.substr(node + 5, status.find(' ', node + 5) - node - 5);
    const ArenaBudget b = arena_budget(test::tflite_model(corpus("tflite/" + std::string(file))), Target::x86_64);
    EXPECT_FALSE(b.runnable());
    EXPECT_EQ(b.recommended_bytes, 0u);
    bool named = false;
    for (const std::string& why : b.blockers) named = named || why.starts_with(op + " ");
    EXPECT_TRUE(named) << "no blocker names " << op;
  }
  EXPECT_GT(checked, 0u);
}

// mlperftiny's float KWS model keeps int8 weights: conv_common.cc's
// ConvPrepare accepts float32 input only with float32 weights.
TEST(TflmOracle, FloatInputWithInt8WeightsIsRefusedForConv2d) {
  const ArenaBudget b = arena_budget(test::tflite_model(corpus("tflite/mlperftiny_kws_ref_model_float32.tflite")), Target::cortex_m);
  ASSERT_FALSE(b.blockers.empty());
  EXPECT_EQ(b.blockers.front().rfind("CONV_2D (float32 input with int8 weights", 0), 0u) << b.blockers.front();
  EXPECT_EQ(b.recommended_bytes, 0u);
}

// rfft.cc's op data holds a work-area pointer too: without it the audio
// preprocessors' estimate fitted only an arena that was not 16-byte aligned.
TEST(TflmOracle, AudioPreprocessorsFitAnAlignedArenaWithoutTheAlignmentAllowance) {
  const auto models = measured()["models"];
  for (const char* file : {"tflm_audio_preprocessor_int8.tflite", "tflm_audio_preprocessor_float.tflite"}) {
    SCOPED_TRACE(file);
    const ArenaBudget b = arena_budget(test::tflite_model(corpus("tflite/" + std::string(file))), Target::x86_64);
    EXPECT_GE(b.recommended_bytes - b.alignment_bytes, models[file]["min_arena_bytes"].get<uint64_t>());
  }
}

// hello_world int8: 1,760 B measured; every phase's peak added to the whole
// tail gave 2,096 B.
TEST(TflmOracle, SmallModelsAreNotChargedThePreparePeakBesideTheWholeTail) {
  const auto models = measured()["models"];
  for (const char* file : {"tflm_hello_world_int8.tflite", "tflm_hello_world_float.tflite"}) {
    SCOPED_TRACE(file);
    const ArenaBudget b = arena_budget(test::tflite_model(corpus("tflite/" + std::string(file))), Target::x86_64);
    EXPECT_LT(b.recommended_bytes, b.alignment_bytes + b.allocator_bytes + b.tail_bytes + b.prepare_bytes);
    EXPECT_LE(static_cast<double>(b.recommended_bytes), 1.02 * models[file]["min_arena_bytes"].get<double>());
  }
}

}  // namespace
}  // namespace edgemem::plan
