// Runs bytes through a decoder and the analyzer, as `edgemem analyze` does.
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "edgemem/analyzer.h"
#include "edgemem/decoder.h"
#include "plan/tflite_model.h"
#include "static/linker_map.h"

namespace edgemem::test {

struct Run {
  TraceContext context;
  DecodeStats stats;
  AnalysisResult result;
};

// Feeds `bytes` in chunks of `chunk` bytes (0 = all at once).
inline std::unique_ptr<Run> analyse(Format format, const std::string& bytes, AnalyzerOptions options = {},
                                    size_t chunk = 0) {
  auto run = std::make_unique<Run>();
  Analyzer analyzer(run->context, options);
  auto decoder = make_decoder(format, run->context, analyzer);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t step = chunk ? chunk : bytes.size();
  for (size_t i = 0; i < bytes.size(); i += step)
    decoder->feed({p + i, std::min(step, bytes.size() - i)});
  decoder->finish();
  run->stats = decoder->stats();
  run->result = analyzer.finish();
  return run;
}

// Collects events for decoder-level tests.
struct Recorder : EventSink {
  std::vector<Event> events;
  void on_event(const Event& e) override { events.push_back(e); }
};

// This test program's own directory for the files it writes: removed when
// its tests all passed, kept and named on stderr when one failed. Unique per
// run, so the release and sanitizer builds' tests never share one.
inline std::filesystem::path scratch_dir(const std::string& prefix) {
  struct RemoveWhenPassed : ::testing::Environment {
    std::filesystem::path dir;
    explicit RemoveWhenPassed(std::filesystem::path d) : dir(std::move(d)) {}
    void SetUp() override { std::filesystem::create_directories(dir); }  // again, under --gtest_repeat
    void TearDown() override {
      if (!::testing::UnitTest::GetInstance()->Passed()) {
        std::fprintf(stderr, "test files kept in %s\n", dir.c_str());
        return;
      }
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static std::map<std::string, std::filesystem::path> dirs;  // by prefix
  auto [at, made] = dirs.try_emplace(prefix);
  if (made) {
    std::string name = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!mkdtemp(name.data())) throw std::runtime_error("cannot make a scratch directory " + name);
    ::testing::AddGlobalTestEnvironment(new RemoveWhenPassed(name));
    at->second = name;
  }
  return at->second;
}

// A missing or unreadable test file is a broken checkout, not an empty
// input: throw so the test fails naming the path instead of passing on "".
inline std::string read_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("test data missing or unreadable: " + path);
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) throw std::runtime_error("test data could not be read: " + path);
  return out;
}

// The test data lives in the repository (tests/data/corpus, tests/data/realworld, tests/data/SOURCES.md).
inline std::string corpus(const std::string& name) { return std::string(EDGEMEM_TEST_DATA_DIR) + "/corpus/" + name; }
inline std::string realworld(const std::string& name) { return std::string(EDGEMEM_TEST_DATA_DIR) + "/realworld/" + name; }

// A .tflite file of the test data; one that does not parse fails the test.
inline plan::TfliteModel tflite_model(const std::string& path) {
  std::string bytes = read_file(path), error;
  auto model = plan::read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
  EXPECT_TRUE(model.has_value()) << path << ": " << error;
  return model.value_or(plan::TfliteModel{});
}

// A linker map file of the test data; one that does not parse fails the test.
inline LinkerMap linker_map(const std::string& path) {
  std::string text = read_file(path), error;
  auto map = parse_linker_map(text, error);
  EXPECT_TRUE(map.has_value()) << path << ": " << error;
  return map.value_or(LinkerMap{});
}

inline const MapRegion* map_region(const LinkerMap& m, const std::string& name) {
  for (const auto& r : m.regions)
    if (r.name == name) return &r;
  return nullptr;
}

// Bytes used over every region of this kind.
inline uint64_t region_used(const LinkerMap& m, RegionKind kind) {
  uint64_t sum = 0;
  for (const auto& r : m.regions)
    if (r.kind == kind && r.within.empty()) sum += r.used;  // a position inside another region counts there
  return sum;
}

// A [MEM] text log, a line per call, 100 cycles apart: log("ALLOC size={} align=4 offset={} site=x.cc:1", n, at).
struct MemLog {
  std::string text;
  uint64_t t = 0;
  template <typename... A>
  void operator()(fmt::format_string<A...> f, A&&... a) {
    text += fmt::format("[MEM][{}] ", t += 100);
    text += fmt::format(f, std::forward<A>(a)...);
    text += "\n";
  }
};

// Big-endian seed-binary records.
inline void be32(std::string& s, uint32_t v) {
  s += static_cast<char>(v >> 24);
  s += static_cast<char>(v >> 16);
  s += static_cast<char>(v >> 8);
  s += static_cast<char>(v);
}

}  // namespace edgemem::test
