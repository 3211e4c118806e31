// The device library built for the host writes into a RAM ring; these
// helpers drain it and read it back with edgemem's own decoders.
#pragma once

#include <cstdint>
#include <string>

#include "test_support.h"

extern "C" {
#include "edgemem.h"
}

namespace edgemem::test {

class DeviceCapture {
 public:
  explicit DeviceCapture(uint32_t ring_bytes = 1u << 16) : storage_(ring_bytes, 0) {
    em_ring_init(&ring_, storage_.data(), ring_bytes);
    em_config c{};
    c.ring = &ring_;
    em_init(&c);
  }
  em_ring& ring() { return ring_; }
  // Everything the ring holds now, appended to what was drained before.
  const std::string& drain() {
    uint8_t buf[256];
    while (uint32_t n = em_ring_read(&ring_, buf, sizeof buf)) bytes_.append(reinterpret_cast<char*>(buf), n);
    return bytes_;
  }
  std::unique_ptr<Run> analyse(Format format = Format::emt) { return test::analyse(format, drain()); }

 private:
  std::basic_string<uint8_t> storage_;
  em_ring ring_{};
  std::string bytes_;
};

inline const PoolSummary* pool_named(const AnalysisResult& r, std::string_view name) {
  for (const PoolSummary& p : r.pools)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace edgemem::test
