// Where `watch` sends its metrics at every status tick: a /metrics endpoint
// (--metrics-listen), a textfile (--metrics-file) and an OTLP collector
// (--otlp), any of them or none. A failing output is said once per distinct
// error, and never stops the watch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgemem/trace_session.h"
#include "report/watch_status.h"
#include "watch/metrics_server.h"
#include "watch/otlp_pusher.h"

namespace edgemem::watch {

struct MetricsTargets {
  std::string listen, file, otlp, device;
};

class MetricsOutputs {
 public:
  // Throws std::runtime_error / std::invalid_argument with a one-line reason
  // when the address cannot be listened on or the URL is malformed.
  explicit MetricsOutputs(MetricsTargets targets);
  // "serving metrics on URL" when listening, else empty.
  std::string announcement() const;
  // Publishes the run; `problem` receives each new failure ("--metrics-file PATH: ...").
  void publish(const TraceRun& run, const std::vector<TrendView>& trends,
               const std::function<void(const std::string&)>& problem);
  // At the end: the last OTLP push is sent (waited for, 5 s at most each for
  // the one under way and the last); a failure not said yet is returned.
  std::string finish();

 private:
  MetricsTargets targets_;
  std::unique_ptr<MetricsServer> server_;
  std::unique_ptr<OtlpPusher> otlp_;
  uint64_t start_ns_;
  std::string file_error_, otlp_error_;
};

}  // namespace edgemem::watch
