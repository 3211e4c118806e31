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
  ~OtlpPusher();  // as close()
  void push(std::string json_body);
  // The last failure (HTTP status, connection error, no answer), once; empty when none since the last call.
  std::string take_error();
  // Sends what is pending and stops: waits for the push under way and the
  // last one, each up to the 5 s timeout; returns the failure not yet taken.
  std::string close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgemem::watch
