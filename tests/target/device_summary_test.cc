// The device library in summary mode (-DEDGEMEM_SUMMARY=1), built for the
// host: per-pool numbers must follow what the allocators did.
#include <cstdlib>

#include "target/device_capture.h"
#include "target/fake_c_library.h"

extern "C" {
uint8_t em_freertos_pool;
#include "edgemem_freertos.h"
}

namespace edgemem::test {
namespace {

// heap_4 as FreeRTOS V11.2+ calls the hooks: the same block size on both sides.
TEST(DeviceSummary, AFreeRtosHeapThatFreesEverythingDoesNotLeak) {
  DeviceCapture device;
  em_freertos_pool = em_pool("freertos", EM_POOL_HEAP, 0x20000000u, 16384, 8);
  for (uint32_t i = 1; i <= 5; ++i) {
    em_inference_begin(i);
    traceMALLOC(reinterpret_cast<void*>(0x20000100u), 24);
    traceMALLOC(reinterpret_cast<void*>(0x20000200u), 112);
    traceFREE(reinterpret_cast<void*>(0x20000100u), 24);
    traceFREE(reinterpret_cast<void*>(0x20000200u), 112);
    em_inference_end(i);
  }
  auto run = device.analyse();
  EXPECT_EQ(run->result.counts.summaries, 5u);
  EXPECT_TRUE(run->result.leaks.empty());
  EXPECT_DOUBLE_EQ(run->result.leak_rate_bytes_per_inference, 0.0);
  ASSERT_EQ(run->result.pools.size(), 1u);
  EXPECT_EQ(run->result.pools[0].final_bytes, 0u);
  EXPECT_EQ(run->result.pools[0].peak_bytes, 136u);
}

TEST(DeviceSummary, ReallocToZeroLowersTheHeapsUsedBytes) {
  DeviceCapture device;
  em_malloc_wrap_pool(em_pool("heap", EM_POOL_HEAP, 0, 0, 8));
  em_inference_begin(1);
  void* p = __wrap_malloc(200);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(__wrap_realloc(p, 0), nullptr);
  em_inference_end(1);
  auto run = device.analyse();
  ASSERT_EQ(run->result.pools.size(), 1u);
  EXPECT_GE(run->result.pools[0].peak_bytes, 200u);
  EXPECT_EQ(run->result.pools[0].final_bytes, 0u);
}

// A pool past EM_MAX_POOLS (8 here) has no counters: its events are lost,
// and the host must hear it at the next record, not at the SYNC 256 records on.
TEST(DeviceSummary, APoolPastTheTableIsToldAsLostAtOnce) {
  DeviceCapture device;
  static const char* names[] = {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"};
  uint8_t pools[9];
  for (int i = 0; i < 9; ++i) pools[i] = em_pool(names[i], EM_POOL_HEAP, 0, 65536, 8);
  em_inference_begin(1);
  em_alloc(pools[8], 0x1000, 100, 8, 0);
  em_inference_end(1);
  EXPECT_EQ(em_dropped(), 1u);
  auto run = device.analyse();
  EXPECT_EQ(run->stats.dropped_records, 1u);
}

}  // namespace
}  // namespace edgemem::test
