// Runs every analysis over one event stream in a single pass.
#pragma once

#include <memory>
#include <optional>

#include "edgemem/analysis_result.h"
#include "edgemem/decoder.h"

namespace edgemem {

struct AnalyzerOptions {
  std::optional<double> clock_hz;  // turns cycle timestamps into seconds
  uint64_t default_pool_size = 0;  // --arena-size: for pools the trace does not size
};

class Analyzer final : public EventSink {
 public:
  Analyzer(TraceContext& context, AnalyzerOptions options = {});
  ~Analyzer() override;
  void on_event(const Event& event) override;
  // The trace's own clock, used unless the options named one.
  void set_trace_clock(std::optional<double> hz);
  // Call once after the last event; pool sizes may have been filled in by then.
  AnalysisResult finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Lost or unmatched events (ITM overflows, dropped records, skipped bytes,
// frees of unknown blocks, ...): `found` with what was lost, or `clean`.
Check data_loss_check(const DecodeStats& stats, const EventCounts& counts);

}  // namespace edgemem
