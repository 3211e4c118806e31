// The device library's full emt trace, built for the host: what it records
// must be what the allocators did, read back by edgemem's decoder.
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "target/device_capture.h"
#include "target/fake_c_library.h"

extern "C" {
#include "edgemem_arena.h"
#include "edgemem_ort.h"
}

namespace edgemem::test {
namespace {

alignas(64) uint8_t arena_memory[4096 + EM_GUARD_BYTES];

TEST(DeviceArena, MoreThan32LiveTemporariesAreNeverHandedOutAgain) {
  DeviceCapture device;
  em_arena a;
  em_arena_init(&a, "arena", arena_memory, 1024);
  uint8_t* blocks[33];
  for (auto& b : blocks) b = static_cast<uint8_t*>(em_arena_temp(&a, 16, 16, 0));
  em_arena_free_temp(&a, blocks[31], 0);  // block 33 above it is still live
  auto* next = static_cast<uint8_t*>(em_arena_temp(&a, 32, 16, 0));
  ASSERT_NE(next, nullptr);
  EXPECT_GE(next, blocks[32] + 16);
  auto run = device.analyse();
  EXPECT_EQ(run->result.counts.allocs, 34u);
  EXPECT_EQ(run->result.counts.replaced_blocks, 0u);
  EXPECT_EQ(run->result.overflow_count, 0u);
  em_arena_reset_temp(&a);  // then the head is reclaimed again
  EXPECT_EQ(em_arena_temp(&a, 16, 16, 0), a.base);
}

// TFLite Micro asks for 0 bytes for an empty tensor: that block shares its
// offset with the next one, and freeing it must not free that one too.
TEST(DeviceArena, FreeingAZeroByteTemporaryKeepsTheBlockAtItsOffsetLive) {
  DeviceCapture device;
  em_arena a;
  em_arena_init(&a, "arena", arena_memory, 1024);
  auto* empty = static_cast<uint8_t*>(em_arena_temp(&a, 0, 16, 0));
  auto* live = static_cast<uint8_t*>(em_arena_temp(&a, 256, 16, 0));
  ASSERT_EQ(empty, live);
  em_arena_free_temp(&a, empty, 0);
  auto* next = static_cast<uint8_t*>(em_arena_temp(&a, 128, 16, 0));
  EXPECT_GE(next, live + 256);
  em_arena_free_temp(&a, next, 0);
  em_arena_free_temp(&a, live, 0);  // now both blocks at the offset are free
  EXPECT_EQ(a.head, 0u);
}

TEST(DeviceArena, ARequestLargerThanTheArenaFailsInsteadOfWrapping) {
  DeviceCapture device;
  em_arena a;
  em_arena_init(&a, "arena", arena_memory, 1024);
  EXPECT_EQ(em_arena_persistent(&a, 0xFFFFFFF8u, 16, 0), nullptr);
  ASSERT_NE(em_arena_temp(&a, 32, 16, 0), nullptr);
  EXPECT_EQ(em_arena_temp(&a, 0xFFFFFFF0u, 16, 0), nullptr);
  EXPECT_EQ(em_arena_temp(&a, 1024 - 32 + 1, 1, 0), nullptr);
  EXPECT_NE(em_arena_temp(&a, 1024 - 32, 1, 0), nullptr);  // exactly what is left
  EXPECT_EQ(a.head, 1024u);
  EXPECT_EQ(a.tail, 0u);
  auto run = device.analyse();
  EXPECT_EQ(run->result.counts.failed, 3u);
  EXPECT_EQ(run->result.overflow_count, 0u);
}

// TFLite Micro aligns a tail block's start down and a head block's start
// up, on an arena whose start it aligned (single_arena_buffer_allocator.cc,
// micro_allocator.cc): a block must be aligned as asked, and the tail pool's
// top on the host is the tail the device used.
TEST(DeviceArena, BlocksAreAlignedAsAskedAndTheTailTopIsTheTail) {
  DeviceCapture device;
  em_arena a;
  em_arena_init(&a, "arena", arena_memory, 1024);
  auto* p1 = static_cast<uint8_t*>(em_arena_persistent(&a, 4, 4, 0));
  auto* p2 = static_cast<uint8_t*>(em_arena_persistent(&a, 8, 16, 0));
  EXPECT_EQ(arena_memory + 1024 - p1, 4);
  EXPECT_EQ(arena_memory + 1024 - p2, 16);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p2) % 16, 0u);
  EXPECT_EQ(a.tail, 16u);
  auto run = device.analyse();
  const PoolSummary* tail = pool_named(run->result, "arena.persistent");
  ASSERT_NE(tail, nullptr);
  EXPECT_EQ(tail->peak_bytes, 16u);

  DeviceCapture again;
  em_arena b;
  em_arena_init(&b, "unaligned", arena_memory + 4, 1000);
  EXPECT_EQ(b.size, 1000u - 12);
  auto* q = static_cast<uint8_t*>(em_arena_temp(&b, 16, 16, 0));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 16, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(em_arena_persistent(&b, 24, 64, 0)) % 64, 0u);
}

// A POOL record holds 40 characters of a name and the tail's name is built
// from 20: two arenas whose names share a longer prefix must stay four pools.
TEST(DeviceArena, ArenasWhoseNamesShareALongPrefixStayDistinctPools) {
  DeviceCapture device;
  em_arena a, b, c, d;
  em_arena_init(&a, "keyword_spotting_model_A", arena_memory, 1024);
  em_arena_init(&b, "keyword_spotting_model_B", arena_memory + 1024, 1024);
  em_arena_init(&c, "an_arena_with_a_name_longer_than_forty_characters_1", arena_memory + 2048, 512);
  em_arena_init(&d, "an_arena_with_a_name_longer_than_forty_characters_2", arena_memory + 2560, 512);
  for (em_arena* x : {&a, &b, &c, &d}) {
    em_arena_persistent(x, 64, 16, 0);
    em_arena_temp(x, 128, 16, 0);
  }
  auto run = device.analyse();
  ASSERT_EQ(run->result.pools.size(), 8u);
  std::set<std::string> names;
  for (const PoolSummary& p : run->result.pools) {
    names.insert(p.name);
    EXPECT_EQ(p.peak_bytes, p.name.find("persistent") != std::string::npos ? 64u : 128u) << p.name;
  }
  EXPECT_EQ(names.size(), 8u);
  EXPECT_NE(pool_named(run->result, "keyword_spotting_model_A"), nullptr);
  EXPECT_STREQ(a.tail_name, "keyword_spo~1958862b.persistent");  // as docs/device.md shows
}

// CMake passes __FILE__ as an absolute path: a STRING record that kept
// the path's start lost the file name and merged two files' sites.
TEST(DeviceSites, ALongFilePathKeepsItsFileName) {
  DeviceCapture device;
  const std::string dir = "/home/builder/workspace/firmware/third_party/tflite-micro/tensorflow/lite/micro/kernels/";
  const std::string conv = dir + "conv.c", lstm = dir + "lstm.c";
  uint8_t pool = em_pool("heap", EM_POOL_HEAP, 0x20000000u, 4096, 8);
  em_alloc(pool, 0x20000000u, 16, 8, em_site_here(conv.c_str(), 2));
  em_alloc(pool, 0x20000010u, 16, 8, em_site_here(lstm.c_str(), 2));
  auto run = device.analyse();
  const std::string kept = dir.substr(dir.size() - (64 - 8 - 3 - 6));
  EXPECT_TRUE(run->context.sites.find("..." + kept + "conv.c:2").has_value());
  EXPECT_TRUE(run->context.sites.find("..." + kept + "lstm.c:2").has_value());
}

// A 64-bit build (the ONNX Runtime wrapper on a host): ALLOC32/FREE32 kept
// the low 32 bits of addresses and return addresses, so blocks 4 GiB apart
// were one (a leak missed) and code addresses were cut.
TEST(DeviceWide, AddressesAndSitesKeepTheirHighBits) {
  if (sizeof(uintptr_t) < 8) GTEST_SKIP() << "a 32-bit build";
  DeviceCapture device;
  uint8_t pool = em_pool("heap", EM_POOL_HEAP, 0, 0, 8);
  const uintptr_t low = uintptr_t{0x7f12} << 32 | 0x1000, high = low + (uintptr_t{1} << 32);
  uint64_t site = uint64_t{0x7f1200004242} << 1 | 1u;  // an em_site of 32 bits cut it
  em_alloc(pool, low, 100, 8, site);
  em_alloc(pool, high, 28, 8, site);
  em_free(pool, high, site);
  auto run = device.analyse();
  EXPECT_EQ(run->result.counts.replaced_blocks, 0u);
  EXPECT_EQ(run->result.counts.unknown_frees, 0u);
  ASSERT_EQ(run->result.pools.size(), 1u);
  EXPECT_EQ(run->result.pools[0].final_bytes, 100u);
  EXPECT_TRUE(run->context.sites.find("0x7f1200004242").has_value());
  // A heap's base past 32 bits, in a POOL record of the longest name a
  // 64-bit build sends whole (the base was cut to 32 bits).
  DeviceCapture placed;
  const std::string name(35, 'h');
  uint8_t heap = em_pool(name.c_str(), EM_POOL_HEAP, low, 4096, 8);
  em_alloc(heap, low + 4000, 96, 8, site);
  auto based = placed.analyse();
  ASSERT_EQ(based->result.pools.size(), 1u);
  EXPECT_EQ(based->result.pools[0].name, name);
  EXPECT_EQ(based->result.pools[0].final_bytes, 96u);
  EXPECT_EQ(based->result.overflow_count, 0u);
  EXPECT_EQ(based->stats.corrupt_bytes, 0u);
}

// The device says how many records it lost since the last DROP it sent:
// two episodes of one lost record are two, not 1 + 2.
TEST(DeviceRing, DropsAreCountedOnceEach) {
  DeviceCapture device(128);
  uint8_t pool = em_pool("heap", EM_POOL_HEAP, 0x20000000u, 4096, 8);
  for (uint32_t episode = 1; episode <= 2; ++episode) {
    for (uint32_t i = 0; em_dropped() < episode && i < 100; ++i) em_alloc(pool, 0x20000000u + 64 * i, 16, 8, 0);
    ASSERT_EQ(em_dropped(), episode);
    device.drain();
    em_inference_begin(episode);  // goes out with SYNC and DROP
  }
  auto run = device.analyse();
  EXPECT_EQ(run->stats.dropped_records, 2u);
}

// With ITM on a core that has none (the host, ARMv6-M), or with ITM or its
// port off, a record cannot go out: counted, not silently lost.
TEST(DeviceItm, ARecordThatCannotGoOutIsCountedAsDropped) {
  em_config c{};
  c.itm = 1;
  em_init(&c);
  EXPECT_EQ(em_dropped(), 1u);  // the HEADER
  em_inference_begin(1);
  EXPECT_EQ(em_dropped(), 2u);
}

TEST(DeviceMallocWrap, ReallocToZeroIsTheFreeItWas) {
  DeviceCapture device;
  em_malloc_wrap_pool(em_pool("heap", EM_POOL_HEAP, 0, 0, 8));
  void* p = __wrap_malloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(__wrap_realloc(p, 0), nullptr);
  void* q = __wrap_malloc(100);  // may reuse p's address
  __wrap_free(q);
  auto run = device.analyse();
  EXPECT_EQ(run->result.counts.unknown_frees, 0u);
  EXPECT_EQ(run->result.counts.replaced_blocks, 0u);
  EXPECT_EQ(run->result.counts.failed, 0u);
  ASSERT_EQ(run->result.pools.size(), 1u);
  EXPECT_EQ(run->result.pools[0].final_bytes, 0u);
}

TEST(DeviceMallocWrap, ACallocPastTheAddressSpaceIsRecordedAsTheLargestRequest) {
  DeviceCapture device;
  em_malloc_wrap_pool(em_pool("heap", EM_POOL_HEAP, 0, 0, 8));
  const size_t half = size_t{1} << (sizeof(size_t) * 4);  // n * size = 2^(bits of size_t): wraps to 0
  EXPECT_EQ(__wrap_calloc(half, half), nullptr);
  auto run = device.analyse();
  ASSERT_EQ(run->result.fragmentation.failures.size(), 1u);
  EXPECT_EQ(run->result.fragmentation.failures[0].size, 0xFFFFFFFFu);
}

// OrtAllocator as onnxruntime_c_api.h declares it up to API version 23.
struct OrtAllocatorV23 {
  uint32_t version;
  void* (*Alloc)(OrtAllocatorV23*, size_t);
  void (*Free)(OrtAllocatorV23*, void*);
  const void* (*Info)(const OrtAllocatorV23*);
  void* (*Reserve)(OrtAllocatorV23*, size_t);                // since 18
  void* (*GetStats)(const OrtAllocatorV23*, void**);         // since 23 (OrtStatus*)
  void* (*AllocOnStream)(OrtAllocatorV23*, size_t, void*);  // since 23
};
static_assert(offsetof(em_ort_allocator, Reserve) == offsetof(OrtAllocatorV23, Reserve));
static_assert(offsetof(em_ort_allocator, GetStats) == offsetof(OrtAllocatorV23, GetStats));
static_assert(offsetof(em_ort_allocator, AllocOnStream) == offsetof(OrtAllocatorV23, AllocOnStream));

alignas(16) uint8_t ort_block[256];
int reserves = 0;

OrtAllocatorV23 inner_allocator(uint32_t version) {
  OrtAllocatorV23 inner{};
  inner.version = version;
  inner.Alloc = [](OrtAllocatorV23*, size_t) -> void* { return ort_block; };
  inner.Free = [](OrtAllocatorV23*, void*) {};
  inner.Info = [](const OrtAllocatorV23*) -> const void* { return nullptr; };
  inner.Reserve = [](OrtAllocatorV23*, size_t) -> void* {
    ++reserves;
    return ort_block + 128;
  };
  return inner;
}

TEST(DeviceOrt, TheWrapperHasOrtsLayoutAndOnlyTheMembersItsVersionHas) {
  DeviceCapture device;
  uint8_t pool = em_pool("ort", EM_POOL_HEAP, 0, 0, 64);
  OrtAllocatorV23 inner = inner_allocator(25);  // a newer ORT: the wrapper states 23, the layout it has
  em_ort_allocator wrapped;
  em_ort_wrap(&wrapped, &inner, pool);
  auto* as_ort = reinterpret_cast<OrtAllocatorV23*>(&wrapped);
  EXPECT_EQ(as_ort->version, 23u);
  ASSERT_NE(as_ort->Reserve, nullptr);
  EXPECT_EQ(as_ort->GetStats, nullptr);       // the inner one has none
  EXPECT_EQ(as_ort->AllocOnStream, nullptr);  // ORT falls back to Alloc
  reserves = 0;
  void* r = as_ort->Reserve(as_ort, 96);  // as ORT calls it for initializers
  EXPECT_EQ(r, ort_block + 128);
  EXPECT_EQ(reserves, 1);
  void* p = as_ort->Alloc(as_ort, 64);
  as_ort->Free(as_ort, p);
  auto run = device.analyse();
  EXPECT_EQ(run->result.counts.allocs, 2u);
  EXPECT_EQ(run->result.counts.frees, 1u);
  ASSERT_EQ(run->result.pools.size(), 1u);
  EXPECT_EQ(run->result.pools[0].final_bytes, 96u);

  OrtAllocatorV23 old = inner_allocator(17);  // before Reserve existed
  em_ort_wrap(&wrapped, &old, pool);
  EXPECT_EQ(as_ort->version, 17u);
  EXPECT_EQ(as_ort->Reserve, nullptr);
}

}  // namespace
}  // namespace edgemem::test
