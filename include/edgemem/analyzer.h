// Runs every analysis over one event stream in a single pass.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "edgemem/analysis_result.h"
#include "edgemem/decoder.h"

namespace edgemem {

struct AnalyzerOptions {
  std::optional<double> clock_hz;  // turns cycle timestamps into seconds
  uint64_t default_pool_size = 0;  // --arena-size: for pools the trace does not size
  // watch --warm-up: inference ends left out of the leak trend (a cache
  // filling at start climbs as a leak does until it stops).
  uint64_t warm_up_inferences = 0;
};

// One pool as an inference left it.
struct PoolInferenceUsage {
  std::string_view pool;  // valid during the on_inference call
  uint64_t used_bytes = 0;  // at the end marker (heap: live bytes; arena: top)
  uint64_t peak_bytes = 0;  // highest usage between the begin and end markers
  uint64_t live_blocks = 0;
  std::optional<double> fragmentation_rate;  // 1 - largest free / total free; unset until measured
  bool known_extent = false;  // the pool's extent is known, so its rate is judged (bands, alerts)
  // The floor trend `watch` alerts on and `analyze` judges summary-mode pools by; unset until 10 windows.
  std::optional<TrendEstimate> leak_trend;
};

// What one inference left behind, handed to observers at its end marker.
struct InferenceRecord {
  uint64_t number = 0;  // the device's number; unnumbered markers count from 1
  uint64_t boot = 1;    // the device's boot: 1, plus the restarts before it
  uint64_t time = 0;    // of the end marker, in the trace's time base
  std::vector<PoolInferenceUsage> pools;  // in PoolTable order
  uint64_t failed_allocations = 0;  // refused requests since the begin marker
};

class InferenceObserver {
 public:
  virtual ~InferenceObserver() = default;
  virtual void on_inference(const InferenceRecord& record) = 0;
};

class Analyzer final : public EventSink {
 public:
  Analyzer(TraceContext& context, AnalyzerOptions options = {});
  ~Analyzer() override;
  void on_event(const Event& event) override;
  // The trace's own clock, used unless the options named one.
  void set_trace_clock(std::optional<double> hz);
  // Called at every inference end marker; the observer must outlive the analyzer's use.
  void add_observer(InferenceObserver& observer);
  // The result over the events so far; the analysis goes on as if it was not asked.
  AnalysisResult snapshot();
  // The result after the last event; pool sizes may have been filled in by then.
  AnalysisResult finish() { return snapshot(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Lost or unmatched events (ITM overflows, dropped records, skipped bytes,
// frees of unknown blocks, ...): `found` with what was lost, or `clean`.
Check data_loss_check(const DecodeStats& stats, const EventCounts& counts);

// Once records were lost mid-trace, the free space between the blocks that
// arrived is not the device's (a lost allocation reads as a hole): the
// fragmentation check is not judged, and lost_mid_trace says why.
void judge_after_data_loss(const DecodeStats& stats, AnalysisResult& result);

}  // namespace edgemem
