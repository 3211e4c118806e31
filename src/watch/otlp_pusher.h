// --otlp URL: pushes each status tick's metrics as OTLP/HTTP JSON to an
// OpenTelemetry collector, from a thread of its own, so a slow or absent
// collector never holds up the trace. Only the newest payload is kept: a
// collector that was away gets the current numbers, not a backlog.
#pragma once

#include <memory>
#include <string>

namespace edgemem::watch {

class OtlpPusher {
 public:
  // URL: http(s)://HOST[:PORT][/PATH]; without a path, /v1/metrics.
  // Throws std::invalid_argument with a one-line reason for a malformed URL.
  explicit OtlpPusher(const std::string& url);
  ~OtlpPusher();  // sends what is pending (waits up to the 5 s timeout)
  void push(std::string json_body);
  // The last failure (HTTP status or connection error), once; empty when none since the last call.
  std::string take_error();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgemem::watch
