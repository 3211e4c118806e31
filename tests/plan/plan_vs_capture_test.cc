// edgemem's plan beside real TFLite Micro captures (tests/data/tflm_captures,
// written by tools/tflm_oracle/capture.sh through target/). The truth is
// what each capture records, read here straight from its events; the
// comparison must report it as captured and call a tensor the same only
// when edgemem's plan puts it at that very offset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "analysis/tflm_capture.h"
#include "plan/plan_vs_capture.h"
#include "test_support.h"

namespace edgemem::plan {
namespace {

using edgemem::test::corpus;
using edgemem::test::read_file;

const char* const kModels[] = {"tflm_hello_world_float", "tflm_hello_world_int8", "tflm_keyword_scrambled",
                               "mlperftiny_kws_ref_model", "mlperftiny_ad01_int8"};

std::string capture_bytes(const std::string& model) {
  return read_file(std::string(EDGEMEM_TEST_DATA_DIR) + "/tflm_captures/" + model + ".emt");
}

std::optional<TflmCapture> read_capture(const std::string& bytes) {
  std::string error;
  auto c = read_tflm_capture({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "capture.emt", error);
  EXPECT_TRUE(c.has_value()) << error;
  return c;
}

// The tensor placements as the capture's raw events give them.
std::map<int32_t, uint64_t> placements_in(const std::string& bytes) {
  test::Recorder events;
  TraceContext context;
  auto decoder = make_decoder(Format::emt, context, events);
  decoder->feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  decoder->finish();
  std::map<int32_t, uint64_t> out;
  for (const Event& e : events.events) {
    const std::string site(context.sites.name(e.site));
    if (e.kind == EventKind::alloc && context.pools.at(e.pool).name == "tflm.tensors" && site.starts_with("tensor:"))
      out[std::stoi(site.substr(7))] = e.address;
  }
  return out;
}

TEST(PlanVsCapture, EachTensorIsReportedWhereTheCaptureShowsItAndSameOnlyAtThePlannedOffset) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    const std::string bytes = capture_bytes(model);
    const auto truth = placements_in(bytes);
    ASSERT_FALSE(truth.empty());
    auto capture = read_capture(bytes);
    ASSERT_TRUE(capture);
    const TfliteModel m = test::tflite_model(corpus("tflite/" + std::string(model) + ".tflite"));
    const PlanVsCapture c = compare_plan_with_capture(m, Target::x86_64, *capture);
    size_t seen = 0;
    for (const TensorComparison& t : c.tensors) {
      auto it = truth.find(t.tensor);
      if (t.region == TensorRegion::tail) {  // a variable tensor, placed in the tail
        EXPECT_NE(it, truth.end()) << "tensor " << t.tensor;
        EXPECT_FALSE(t.captured_offset);
        ++seen;
        continue;
      }
      ASSERT_EQ(t.captured_offset.has_value(), it != truth.end()) << "tensor " << t.tensor;
      if (!t.captured_offset) continue;
      ++seen;
      EXPECT_EQ(*t.captured_offset, it->second) << "tensor " << t.tensor;
      EXPECT_EQ(t.matches(), t.predicted_offset == it->second && t.predicted_bytes == t.captured_bytes);
    }
    EXPECT_EQ(seen, truth.size());
  }
}

// TFLite Micro's greedy planner, as edgemem reproduces it, put every tensor
// of these models where TFLM itself put it, and planned the same head.
TEST(PlanVsCapture, TflmGreedyPlanMatchesTheRealPlacementOfEveryTensor) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    auto capture = read_capture(capture_bytes(model));
    ASSERT_TRUE(capture);
    const PlanVsCapture c = compare_plan_with_capture(test::tflite_model(corpus("tflite/" + std::string(model) + ".tflite")), Target::x86_64, *capture);
    for (const TensorComparison& t : c.tensors) EXPECT_TRUE(t.matches()) << "tensor " << t.tensor;
    EXPECT_EQ(c.predicted_head_bytes, c.captured_head_bytes);
  }
}

// The tail too, structure by structure: with the kernels' op data at their
// sizeof (OpDataConv 72 B, not 80; LeakyReluOpData 24, not 32; PAD's 56,
// not 64; transpose_conv.cc's OpData 80, not 112) nothing is counted twice
// where the tail was left unaligned - 16 to 32 B too many before.
TEST(PlanVsCapture, EveryCaptureMatchesTheX8664PlanHeadTailAndTensors) {
  const std::filesystem::path dir = std::string(EDGEMEM_TEST_DATA_DIR) + "/tflm_captures";
  size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string model = entry.path().stem().string();
    SCOPED_TRACE(model);
    auto capture = read_capture(capture_bytes(model));
    ASSERT_TRUE(capture);
    const PlanVsCapture c = compare_plan_with_capture(test::tflite_model(corpus("tflite/" + std::string(model) + ".tflite")), Target::x86_64, *capture);
    EXPECT_TRUE(c.matches()) << testing::PrintToString(c.differences);
    ++checked;
  }
  EXPECT_EQ(checked, 29u);
}

// Moves tensor `tensor`'s placement in the capture to `offset`: the ALLOC32
// record in pool "tflm.tensors" whose site is "tensor:<tensor>".
std::string with_tensor_moved(std::string bytes, int32_t tensor, uint32_t offset) {
  const std::string name = "\x06tensor";
  const size_t string_record = bytes.find(name);
  EXPECT_NE(string_record, std::string::npos);
  const uint32_t file_id = static_cast<uint8_t>(bytes[string_record - 1]);
  const uint32_t site = ((file_id << 20) | static_cast<uint32_t>(tensor)) << 1;
  const std::string site_bytes(reinterpret_cast<const char*>(&site), 4);
  for (size_t at = bytes.find(site_bytes); at != std::string::npos; at = bytes.find(site_bytes, at + 1)) {
    // ALLOC32: tag, dt, pool 2 ("tflm.tensors", the third declared), align 16, address, size, site.
    if (at < 10 || bytes[at - 10] != 2 || bytes[at - 9] != 16) continue;
    std::memcpy(bytes.data() + at - 8, &offset, 4);
    return bytes;
  }
  ADD_FAILURE() << "no placement record for tensor " << tensor;
  return bytes;
}

TEST(PlanVsCapture, ATensorMovedInTheCaptureIsNamedAsADifference) {
  const std::string model = "tflm_keyword_scrambled";
  const TfliteModel m = test::tflite_model(corpus("tflite/" + std::string(model) + ".tflite"));
  auto original = read_capture(capture_bytes(model));
  ASSERT_TRUE(original);
  const CapturedTensor moved = original->tensors.at(original->tensors.size() / 2);
  std::optional<uint64_t> planned;
  for (const TensorComparison& t : compare_plan_with_capture(m, Target::x86_64, *original).tensors)
    if (t.tensor == moved.tensor) planned = t.predicted_offset;
  ASSERT_TRUE(planned);
  const uint32_t to = static_cast<uint32_t>(moved.offset + 64);
  auto edited = read_capture(with_tensor_moved(capture_bytes(model), moved.tensor, to));
  ASSERT_TRUE(edited);
  const PlanVsCapture c = compare_plan_with_capture(m, Target::x86_64, *edited);
  EXPECT_FALSE(c.matches());
  const std::string& name = m.tensors[static_cast<size_t>(moved.tensor)].name;
  const std::string expected = "tensor " + std::to_string(moved.tensor) + (name.empty() ? "" : " (" + name + ")") +
                               ": placed at offset " + std::to_string(to) + ", edgemem plans offset " +
                               std::to_string(*planned);
  EXPECT_NE(std::find(c.differences.begin(), c.differences.end(), expected), c.differences.end())
      << "differences: " << testing::PrintToString(c.differences);
}

TEST(PlanVsCapture, ATraceWithoutTheTflmPoolsIsRefusedWithWhatToRun) {
  const std::string emt = read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  std::string error;
  auto c = read_tflm_capture({reinterpret_cast<const uint8_t*>(emt.data()), emt.size()}, "kws_leak.emt", error);
  EXPECT_FALSE(c);
  EXPECT_NE(error.find("kws_leak.emt: not a TFLite Micro arena capture"), std::string::npos) << error;
  EXPECT_NE(error.find("capture.sh"), std::string::npos) << error;
}

}  // namespace
}  // namespace edgemem::plan
