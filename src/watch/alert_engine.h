// Turns what a live trace shows into alerts, each raised once per cause
// (kind and pool), not at every status line. Leak trends and fragmentation
// come from the inference records as they end; overflow, guard corruption,
// failed allocations and data loss from the analysis snapshots, so they
// agree with what `analyze` would say.
//
// Fragmentation is judged like the leak: on the lowest rate at the ends of
// a window of 8 inferences, so a heap that is briefly cut up while an
// inference runs (and whole again at its end) raises nothing, and one that
// stays cut up across inferences does. Only pools of known extent are
// judged (the snapshots say which), as in `analyze`.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/leak_trend.h"
#include "edgemem/analyzer.h"
#include "edgemem/trace_session.h"

namespace edgemem::watch {

enum class AlertKind : uint8_t { leak, fragmentation, overflow, guard, alloc_failure, data_loss };
// Stable identifiers, as --on-alert hooks see them in EDGEMEM_ALERT.
std::string_view to_string(AlertKind kind);

struct Alert {
  AlertKind kind = AlertKind::leak;
  std::string pool;       // empty when the cause is not one pool's (data loss)
  uint64_t inference = 0;  // inferences completed when it was raised
  double value = 0;       // leak: bytes per inference; fragmentation: rate; others: count
  std::string message;    // one line a person reads
};

struct PoolTrend {
  std::string pool;
  TrendEstimate estimate;
  // False for a pool whose leak is confirmed by its filling up before a
  // trend could be fitted: `estimate` holds only `confirmed`.
  bool estimated = true;
};

class AlertEngine final : public InferenceObserver {
 public:
  void on_inference(const InferenceRecord& record) override;
  // The analysis so far, at a status tick and once at the end.
  void on_snapshot(const TraceRun& run);
  // Alerts raised since the last call, oldest first.
  std::vector<Alert> take();
  // Every alert of the run, oldest first (one per cause, so few).
  const std::vector<Alert>& history() const { return history_; }
  bool fired() const { return !raised_.empty(); }
  size_t raised() const { return raised_.size(); }
  uint64_t inferences() const { return inferences_; }
  // Each pool's latest leak-trend estimate, for the status line and metrics.
  std::vector<PoolTrend> trends() const;

 private:
  // `detail` separates causes of one kind in one pool (the band entered).
  void raise(AlertKind kind, std::string pool, double value, std::string message, std::string_view detail = {});
  void judge_fragmentation(const std::string& pool);
  // Over the last 8 inference ends, sliding: 14 fragmented ends in a row
  // that straddled two fixed windows of 8 raised nothing.
  struct FragmentationFloor {
    std::array<double, LeakTrend::kWindow> last{};  // rates at the latest ends, a ring
    uint64_t ends = 0;
    std::optional<double> worst_floor;  // highest lowest-of-8 so far
  };
  // A device restart starts every pool's trends and floors anew, as the
  // analysis does: the boot before's confirmed leak read on for the whole
  // new boot, and a leak of the new boot was never alerted.
  uint64_t boot_ = 1;
  std::map<std::string, TrendEstimate, std::less<>> trends_;  // the latest per pool
  // Pools whose leak was confirmed in this boot: the gauge stays 1 when the
  // pool fills up and its floor stops rising (it read 0 as requests failed).
  std::set<std::string, std::less<>> confirmed_;
  std::map<std::string, FragmentationFloor, std::less<>> fragmentation_;
  std::set<std::string, std::less<>> known_extent_;
  // Records were lost mid-trace: a lost allocation reads as a hole the heap
  // does not have, so fragmentation is not judged, as analyze leaves it.
  bool fragmentation_unjudged_ = false;
  std::vector<std::pair<std::tuple<AlertKind, std::string, std::string>, Alert>> held_;  // fragmentation, until a tick
  std::set<std::tuple<AlertKind, std::string, std::string>> raised_;
  std::vector<Alert> pending_, history_;
  uint64_t inferences_ = 0;
};

}  // namespace edgemem::watch
