#include "watch/otlp_pusher.h"

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace edgemem::watch {

// httplib's timeouts bound each read and write, not a request: a collector
// that answers a byte a second held the watch's exit for 75 s. close()
// waits 10 s at most for the push under way and the last one (the docs' 5 s
// each, as one deadline), then stops the socket.
constexpr auto kCloseDeadline = std::chrono::seconds(10);

struct OtlpPusher::Impl {
  std::string base, path;
  std::unique_ptr<httplib::Client> client;
  std::mutex mutex;
  std::condition_variable wake, done;
  std::optional<std::string> pending;
  std::string error;
  bool closing = false, abandoned = false, finished = false;
  std::thread thread;

  void run() {
    std::unique_lock lock(mutex);
    loop(lock);
    finished = true;
    done.notify_all();
  }

  void loop(std::unique_lock<std::mutex>& lock) {
    for (;;) {
      wake.wait(lock, [&] { return pending || closing; });
      if (!pending || abandoned) return;
      std::string body = std::move(*pending);
      pending.reset();
      lock.unlock();
      auto result = client->Post(path, body, "application/json");
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
  // No fragment: "http://host:4318#x" once became the host "host:4318#x".
  static const std::regex form(R"(^(http://[^/\s?#]+)(/[^\s#]*)?$)");
  if (!std::regex_match(url, m, form))
    throw std::invalid_argument(fmt::format("--otlp {}: expected http://HOST:PORT[/PATH], e.g. http://127.0.0.1:4318", url));
  impl_->base = m[1];
  impl_->path = m[2].matched && m[2].length() > 1 ? std::string(m[2]) : "/v1/metrics";
  impl_->client = std::make_unique<httplib::Client>(impl_->base);
  impl_->client->set_connection_timeout(5);
  impl_->client->set_read_timeout(5);
  impl_->client->set_write_timeout(5);
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
  std::unique_lock lock(impl_->mutex);
  if (!impl_->done.wait_for(lock, kCloseDeadline, [&] { return impl_->finished; })) {
    impl_->abandoned = true;
    impl_->error = fmt::format("{}{}: the collector did not answer within {} s; the last push was abandoned",
                               impl_->base, impl_->path, kCloseDeadline.count());
    const std::string abandoned = impl_->error;
    // stop() shuts the socket of the request under way; retried, as the
    // request may not have reached the socket yet.
    do {
      lock.unlock();
      impl_->client->stop();
      lock.lock();
    } while (!impl_->done.wait_for(lock, std::chrono::milliseconds(100), [&] { return impl_->finished; }));
    impl_->error = abandoned;  // not the failure the stop itself caused
  }
  lock.unlock();
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
