#include "watch/otlp_pusher.h"

#include <httplib.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <regex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace edgemem::watch {

struct OtlpPusher::Impl {
  std::string base, path;
  std::mutex mutex;
  std::condition_variable wake;
  std::optional<std::string> pending;
  std::string error;
  bool closing = false;
  std::thread thread;

  void run() {
    httplib::Client client(base);
    client.set_connection_timeout(5);
    client.set_read_timeout(5);
    client.set_write_timeout(5);
    std::unique_lock lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return pending || closing; });
      if (!pending) return;
      std::string body = std::move(*pending);
      pending.reset();
      lock.unlock();
      auto result = client.Post(path, body, "application/json");
      // httplib names its errors in one word ("Connection"): say it as a sentence.
      const httplib::Error why = result.error();
      std::string failure = !result ? fmt::format("{}{}: {}", base, path,
                                                  why == httplib::Error::Connection
                                                      ? std::string("cannot connect (is the OTLP collector listening?)")
                                                  : why == httplib::Error::Read || why == httplib::Error::Write ||
                                                          why == httplib::Error::ConnectionTimeout
                                                      ? std::string("no answer within 5 s (is the OTLP collector up?)")
                                                      : "failed: " + httplib::to_string(why))
                            : result->status / 100 != 2
                                ? fmt::format("{}{}: HTTP {} {}", base, path, result->status, result->body.substr(0, 200))
                                : "";
      lock.lock();
      if (!failure.empty()) error = failure;
    }
  }
};

OtlpPusher::OtlpPusher(const std::string& url) : impl_(std::make_unique<Impl>()) {
  std::smatch m;
  if (url.starts_with("https://"))
    throw std::invalid_argument(fmt::format("--otlp {}: edgemem pushes plain HTTP only; give the http:// endpoint of a "
                                            "collector near it (an OpenTelemetry Collector can forward over TLS)",
                                            url));
  static const std::regex form(R"(^(http://[^/\s]+)(/\S*)?$)");
  if (!std::regex_match(url, m, form))
    throw std::invalid_argument(fmt::format("--otlp {}: expected http://HOST:PORT[/PATH], e.g. http://127.0.0.1:4318", url));
  impl_->base = m[1];
  impl_->path = m[2].matched && m[2].length() > 1 ? std::string(m[2]) : "/v1/metrics";
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

OtlpPusher::~OtlpPusher() { close(); }

std::string OtlpPusher::close() {
  if (!impl_->thread.joinable()) return {};
  {
    std::lock_guard lock(impl_->mutex);
    impl_->closing = true;
  }
  impl_->wake.notify_one();
  impl_->thread.join();
  return take_error();
}

void OtlpPusher::push(std::string json_body) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->pending = std::move(json_body);
  }
  impl_->wake.notify_one();
}

std::string OtlpPusher::take_error() {
  std::lock_guard lock(impl_->mutex);
  return std::exchange(impl_->error, {});
}

}  // namespace edgemem::watch
