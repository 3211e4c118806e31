// --metrics-listen: serves the latest metrics on GET /metrics (Prometheus
// text or OpenMetrics, by the scraper's Accept header) from a thread of its
// own, so a scrape never waits on the trace and the trace never on a scrape.
#pragma once

#include <memory>
#include <string>

namespace edgemem::watch {

class MetricsServer {
 public:
  // ADDR: "HOST:PORT", ":PORT" or "PORT" (all interfaces); port 0 picks a free one.
  // Throws std::runtime_error with a one-line reason when it cannot listen.
  explicit MetricsServer(const std::string& addr);
  ~MetricsServer();
  // "http://HOST:PORT/metrics", with the port actually bound.
  std::string url() const;
  // The texts answered from now on.
  void publish(std::string prometheus_text, std::string openmetrics_text);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgemem::watch
