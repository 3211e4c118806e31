// The device library's [MEM] text lines (-DEDGEMEM_TEXT=1), built for the
// host and read back by edgemem's text-log decoder.
#include <string>

#include "target/device_capture.h"

extern "C" {
#include "edgemem_arena.h"
}

namespace edgemem::test {
namespace {

alignas(16) uint8_t memory_a[512 + EM_GUARD_BYTES], memory_b[512 + EM_GUARD_BYTES];

// Each arena's tail pool keeps its own name: with one shared buffer, the
// first arena's records were named after the second.
TEST(DeviceText, EachArenasTailPoolKeepsItsName) {
  DeviceCapture device;
  em_arena a, b;
  em_arena_init(&a, "model_a", memory_a, 512);
  em_arena_init(&b, "model_b", memory_b, 512);
  ASSERT_NE(em_arena_persistent(&a, 100, 4, 0), nullptr);
  ASSERT_NE(em_arena_persistent(&b, 40, 4, 0), nullptr);
  const std::string& text = device.drain();
  EXPECT_NE(text.find("size=100 align=4 offset=0 pool=model_a.persistent"), std::string::npos) << text;
  auto run = analyse(Format::log, text);
  const PoolSummary* tail_a = pool_named(run->result, "model_a.persistent");
  const PoolSummary* tail_b = pool_named(run->result, "model_b.persistent");
  ASSERT_TRUE(tail_a && tail_b);
  EXPECT_EQ(tail_a->peak_bytes, 100u);
  EXPECT_EQ(tail_b->peak_bytes, 40u);
}

// A pool past the name table (EM_MAX_POOLS, 8 here) has no name to send
// its lines under: without pool= the host counted a 9th pool's leak to the
// default heap. Its lines are dropped and counted instead.
TEST(DeviceText, APoolPastTheTableIsDroppedNotCountedToAnother) {
  DeviceCapture device;
  static const char* names[] = {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"};  // the device keeps the pointers
  uint8_t pools[9];
  for (int i = 0; i < 9; ++i) pools[i] = em_pool(names[i], EM_POOL_HEAP, 0, 65536, 8);
  const uint32_t dropped = em_dropped();
  em_alloc(pools[8], 0x1000, 100, 8, 0);
  em_alloc(pools[0], 0x2000, 50, 8, 0);
  EXPECT_EQ(em_dropped(), dropped + 1);
  auto run = analyse(Format::log, device.drain());
  ASSERT_TRUE(run);
  EXPECT_FALSE(pool_named(run->result, "heap"));
  EXPECT_FALSE(pool_named(run->result, "p8"));
  ASSERT_TRUE(pool_named(run->result, "p0"));
  EXPECT_EQ(pool_named(run->result, "p0")->peak_bytes, 50u);
}

// Lines that do not fit the ring are counted there and told to the host
// by a DROP line before the next one: they were lost silently.
TEST(DeviceText, LinesThatDoNotFitTheRingAreCountedAndTold) {
  DeviceCapture device(256);
  uint8_t pool = em_pool("heap", EM_POOL_HEAP, 0x20000000u, 4096, 8);
  for (uint32_t i = 0; i < 8; ++i) em_alloc(pool, 0x20000000u + 64 * i, 16, 8, 0);
  const uint32_t lost = em_dropped();
  ASSERT_GT(lost, 0u);
  EXPECT_EQ(device.ring().dropped, lost);
  device.drain();
  em_inference_begin(1);
  auto run = device.analyse(Format::log);
  EXPECT_EQ(run->stats.dropped_records, lost);
  EXPECT_EQ(run->stats.malformed_lines, 0u);
}

// A token ends at a space: unescaped, "model A" and "model B" were both
// pool "model" on the host, and "A" a stray word.
TEST(DeviceText, NamesAreEscaped) {
  DeviceCapture device;
  uint8_t a = em_pool("model A", EM_POOL_HEAP, 0x20000000u, 4096, 8);
  uint8_t b = em_pool("model B", EM_POOL_HEAP, 0x20010000u, 4096, 8);
  em_alloc(a, 0x20000000u, 100, 8, em_site_here("my file.c", 3));
  em_alloc(b, 0x20010000u, 40, 8, 0);
  em_counter("rate=%", 7);
  const std::string& text = device.drain();
  EXPECT_NE(text.find("POOL name=model%20A kind=heap"), std::string::npos) << text;
  EXPECT_NE(text.find(" site=my%20file.c:3 pool=model%20A\n"), std::string::npos) << text;
  EXPECT_NE(text.find("COUNTER name=rate%3D%25 value=7"), std::string::npos) << text;
  auto run = analyse(Format::log, text);
  EXPECT_EQ(run->stats.malformed_lines, 0u);
  ASSERT_EQ(run->result.pools.size(), 2u);
  ASSERT_TRUE(pool_named(run->result, "model A") && pool_named(run->result, "model B"));
  EXPECT_EQ(pool_named(run->result, "model A")->peak_bytes, 100u);
  EXPECT_EQ(pool_named(run->result, "model B")->peak_bytes, 40u);
  EXPECT_TRUE(run->context.sites.find("my file.c:3").has_value());
}

// Past EM_MAX_FILES site files a site has no file id: as "file 0" it read
// ":108" and joined every other file's sites of that line. No site instead.
TEST(DeviceText, ASiteFilePastTheTableIsNoSite) {
  DeviceCapture device;
  static const char* files[] = {"f0.c", "f1.c", "f2.c", "f3.c", "f4.c", "f5.c", "f6.c", "f7.c", "f8.c"};
  em_site last = 1;
  for (const char* f : files) last = em_site_here(f, 108);
  EXPECT_EQ(last, 0u);
  EXPECT_NE(em_site_here("f7.c", 108), 0u);
}

// A path longer than the 96 characters a line keeps of it keeps its end,
// the file's own name, as an emt STRING record does.
TEST(DeviceText, ALongFilePathKeepsItsFileName) {
  DeviceCapture device;
  const std::string dir = "/home/builder/workspace/firmware/third_party/tflite-micro/tensorflow/lite/micro/kernels/";
  const std::string file = dir + "depthwise_conv.c";  // 104 characters
  uint8_t pool = em_pool("heap", EM_POOL_HEAP, 0x20000000u, 4096, 8);
  em_alloc(pool, 0x20000000u, 16, 8, em_site_here(file.c_str(), 2));
  const std::string want = " site=..." + file.substr(file.size() - 93) + ":2 pool=heap\n";
  const std::string& text = device.drain();
  ASSERT_GE(text.size(), want.size());
  EXPECT_EQ(text.substr(text.size() - want.size()), want);
  // With spaces, whose escapes take three characters: the end is cut to
  // fit escaped, not before (it read "...conv.:2", the ".c" gone).
  const std::string spaced = "/home/my builds/fw with spaces/kernels and ops/" + std::string(40, 'k') + "/conv.c";
  em_alloc(pool, 0x20000100u, 16, 8, em_site_here(spaced.c_str(), 2));
  auto run = device.analyse(Format::log);
  bool whole_end = false;
  for (SiteId id = 0; id < run->context.sites.size(); ++id) {
    const std::string_view name = run->context.sites.name(id);
    whole_end |= name.ends_with("/conv.c:2") && name.starts_with("...");
  }
  EXPECT_TRUE(whole_end);
}

// Two strings of the longest kept (96 characters) in one line: the line
// is whole (its buffer overflowed at 200 characters; the ASan build shows it).
TEST(DeviceText, TheLongestLineFitsItsBuffer) {
  DeviceCapture device;
  const std::string pool_name(96, 'p'), file(96, 'f');
  uint8_t pool = em_pool(pool_name.c_str(), EM_POOL_HEAP, 0x20000000u, 4096, 8);
  em_realloc(pool, 0xFFFFFFFFu, 0xFFFFFFF0u, 0xFFFFFFFFu, em_site_here(file.c_str(), 0xFFFFF));
  const std::string& text = device.drain();
  const std::string want = " site=" + file + ":1048575 pool=" + pool_name + "\n";
  ASSERT_GE(text.size(), want.size());
  EXPECT_EQ(text.substr(text.size() - want.size()), want);
  EXPECT_NE(text.find("REALLOC old=4294967295 size=4294967295 addr=0xfffffff0"), std::string::npos) << text;
}

// A 64-bit build (the ONNX Runtime wrapper on Linux) wrote addresses and
// code-address sites cut to 32 bits: two blocks 4 GiB apart were one.
TEST(DeviceText, AddressesAndSitesKeepTheirHighBits) {
  if (sizeof(uintptr_t) < 8) GTEST_SKIP() << "a 32-bit build";
  DeviceCapture device;
  uint8_t pool = em_pool("heap", EM_POOL_HEAP, 0, 0, 8);
  const uintptr_t low = uintptr_t{0x7f12} << 32 | 0x1000, high = low + (uintptr_t{1} << 32);
  const em_site site = em_site{0x7f1200004242} << 1 | 1u;
  em_alloc(pool, low, 100, 8, site);
  em_alloc(pool, high, 28, 8, site);
  em_realloc(pool, high, high + 64, 40, site);
  em_free(pool, high + 64, site);
  const std::string& text = device.drain();
  EXPECT_NE(text.find("REALLOC old=" + std::to_string(high) + " size=40 addr=0x7f1300001040"), std::string::npos)
      << text;
  auto run = device.analyse(Format::log);
  EXPECT_EQ(run->result.counts.replaced_blocks, 0u);
  EXPECT_EQ(run->result.counts.unknown_frees, 0u);
  ASSERT_EQ(run->result.pools.size(), 1u);
  EXPECT_EQ(run->result.pools[0].final_bytes, 100u);
  EXPECT_TRUE(run->context.sites.find("0x7f1200004242").has_value());
}

// A board that reboots: each em_init writes BOOT, and the host resets the
// pools there instead of reading the second boot's blocks as lost frees.
TEST(DeviceText, ARebootIsSeenAsOne) {
  DeviceCapture device;
  for (int boot = 0; boot < 2; ++boot) {
    if (boot) {
      em_config c{};
      c.ring = &device.ring();
      em_init(&c);
    }
    uint8_t pool = em_pool("heap", EM_POOL_HEAP, 0x20000000u, 4096, 8);
    em_inference_begin(1);
    em_alloc(pool, 0x20000100u, 64, 8, 0);
  }
  auto run = device.analyse(Format::log);
  EXPECT_EQ(run->stats.device_restarts, 1u);
  EXPECT_EQ(run->result.counts.replaced_blocks, 0u);
  ASSERT_EQ(run->result.restarts.kept.size(), 1u);
  EXPECT_EQ(run->result.restarts.kept[0].bytes_in_use, 64u);
}

}  // namespace
}  // namespace edgemem::test
