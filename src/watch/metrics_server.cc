#include "watch/metrics_server.h"

#include <netdb.h>

#include <httplib.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "report/metrics_report.h"

namespace edgemem::watch {

struct MetricsServer::Impl {
  httplib::Server server;
  std::thread thread;
  std::string host;
  int port = 0;
  std::mutex mutex;
  // Until the first status tick: valid, empty expositions.
  std::string prometheus, openmetrics = "# EOF\n";
};

MetricsServer::MetricsServer(const std::string& addr) : impl_(std::make_unique<Impl>()) {
  size_t colon = addr.rfind(':');
  std::string host = colon == std::string::npos ? "" : addr.substr(0, colon);
  std::string port = colon == std::string::npos ? addr : addr.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
    throw std::runtime_error(fmt::format("--metrics-listen {}: expected HOST:PORT, :PORT or PORT, e.g. :9464", addr));
  impl_->host = host.empty() ? "0.0.0.0" : host;
  Impl* impl = impl_.get();
  // A client that connects and says nothing holds a worker for the read
  // timeout, and stop() waits for it: 1 s, not the library's 5 s, at Ctrl-C.
  impl->server.set_read_timeout(1, 0);
  impl->server.set_keep_alive_timeout(1);
  impl->server.Get("/metrics", [impl](const httplib::Request& request, httplib::Response& response) {
    MetricsFormat format = negotiate_metrics_format(request.get_header_value("Accept"));
    std::lock_guard lock(impl->mutex);
    response.set_content(format == MetricsFormat::openmetrics ? impl->openmetrics : impl->prometheus,
                         std::string(metrics_content_type(format)).c_str());
  });
  // /metrics is read, not written: any other method is 405, as Prometheus's own exporters answer.
  const httplib::Server::Handler refuse = [](const httplib::Request&, httplib::Response& response) {
    response.status = 405;
    response.set_header("Allow", "GET, HEAD");
  };
  impl->server.Post("/metrics", refuse).Put("/metrics", refuse).Delete("/metrics", refuse).Patch("/metrics", refuse);
  // A name that does not resolve fails inside the HTTP library with no errno of its own.
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  if (int rc = ::getaddrinfo(impl->host.c_str(), nullptr, &hints, &found); rc != 0)
    throw std::runtime_error(fmt::format("--metrics-listen {}: cannot resolve {} ({}); give an address of this machine, "
                                         "or :PORT for all of them", addr, impl->host, ::gai_strerror(rc)));
  ::freeaddrinfo(found);
  int wanted = std::stoi(port);
  errno = 0;
  if (wanted == 0) {
    impl->port = impl->server.bind_to_any_port(impl->host.c_str());
  } else if (impl->server.bind_to_port(impl->host.c_str(), wanted)) {
    impl->port = wanted;
  } else {
    impl->port = -1;
  }
  if (impl->port <= 0)
    throw std::runtime_error(fmt::format("--metrics-listen {}: cannot listen there ({}); pick another port, or :0 for "
                                         "any free one", addr, errno ? std::strerror(errno) : "not an address of this machine"));
  impl->thread = std::thread([impl] { impl->server.listen_after_bind(); });
}

MetricsServer::~MetricsServer() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string MetricsServer::url() const {
  std::string host = impl_->host == "0.0.0.0" ? "127.0.0.1" : impl_->host;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return fmt::format("http://{}:{}/metrics", host, impl_->port);
}

void MetricsServer::publish(std::string prometheus_text, std::string openmetrics_text) {
  std::lock_guard lock(impl_->mutex);
  impl_->prometheus = std::move(prometheus_text);
  impl_->openmetrics = std::move(openmetrics_text);
}

}  // namespace edgemem::watch
