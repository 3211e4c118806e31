#include "watch/metrics_outputs.h"

#include <chrono>

#include "report/metrics_report.h"
#include "report/otlp_report.h"
#include "watch/atomic_file.h"

namespace edgemem::watch {
namespace {

uint64_t unix_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

MetricsOutputs::MetricsOutputs(MetricsTargets targets) : targets_(std::move(targets)), start_ns_(unix_ns()) {
  if (!targets_.listen.empty()) server_ = std::make_unique<MetricsServer>(targets_.listen);
  if (!targets_.otlp.empty()) otlp_ = std::make_unique<OtlpPusher>(targets_.otlp);
}

std::string MetricsOutputs::announcement() const { return server_ ? "serving metrics on " + server_->url() : ""; }

void MetricsOutputs::publish(const TraceRun& run, const std::vector<TrendView>& trends,
                             const std::function<void(const std::string&)>& problem) {
  MetricsInput metrics{&run.input, &run.result, targets_.device, trends, true};
  if (server_)
    server_->publish(metrics_report(metrics, MetricsFormat::prometheus), metrics_report(metrics, MetricsFormat::openmetrics));
  if (!targets_.file.empty()) {
    // node_exporter's textfile collector reads the 0.0.4 text format.
    std::string error = write_file_atomically(targets_.file, metrics_report(metrics, MetricsFormat::prometheus));
    if (!error.empty() && error != file_error_) problem("--metrics-file " + error);
    file_error_ = error;
  }
  if (otlp_) {
    // A name that is not UTF-8 (a device's bytes) becomes U+FFFD rather than ending the run.
    otlp_->push(otlp_metrics(metrics, unix_ns(), start_ns_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    std::string error = otlp_->take_error();
    if (!error.empty() && error != otlp_error_) problem("--otlp " + error);
    if (!error.empty()) otlp_error_ = error;
  }
}

std::string MetricsOutputs::finish() {
  if (!otlp_) return {};
  std::string error = otlp_->close();
  return !error.empty() && error != otlp_error_ ? "--otlp " + error : "";
}

}  // namespace edgemem::watch
