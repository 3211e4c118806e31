#include <gtest/gtest.h>

#include <random>

#include "edgemem/trace_session.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string le32(uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s += static_cast<char>(v >> (8 * i));
  return s;
}

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// What a refusal of `file` says, or "accepted" when the sniffer took it.
std::string refusal(const std::string& file) {
  SniffVerdict v = sniff_trace(bytes(file));
  return v.format ? "accepted as " + std::string(to_string(*v.format)) : v.refusal("FILE");
}

TEST(Sniffer, TellsEveryTraceFormatApart) {
  EXPECT_EQ(sniff_trace(bytes("boot\n[MEM][1] ALLOC size=1 offset=0\n")).format, Format::log);
  EXPECT_EQ(sniff_trace(bytes("\x1b[32m[MEM][1] ALLOC size=1 offset=0\x1b[0m\r\n")).format, Format::log);
  std::string bin;
  for (uint32_t i = 0; i < 64; ++i) {
    bin += '\xA2'; be32(bin, 16 + i); be32(bin, 0x20000000 + i * 64);
    bin += '\xF1'; be32(bin, 0x20000000 + i * 64);
  }
  EXPECT_EQ(sniff_trace(bytes(bin)).format, Format::seedbin);
  EXPECT_EQ(sniff_trace(bytes(read_file(corpus("itm/sigrok_stm32f105_itm_stream1.bin")))).format, Format::itm);
  EXPECT_EQ(sniff_trace(bytes(read_file(corpus("itm/sigrok_stm32f105_swo_tpiu.bin")))).format, Format::tpiu);
  EXPECT_EQ(sniff_trace(bytes(read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt"))).format,
            Format::emt);
  EXPECT_EQ(sniff_trace(bytes(read_file(std::string(EDGEMEM_SOURCE_DIR) + "/fuzz/corpus/seedbin/records.bin"))).format,
            Format::seedbin);
}

// What target/ writes over ITM without a probe's sync packets: emt on port 1.
TEST(Sniffer, EmtOnItmPortOneWithoutSyncPacketsIsItm) {
  std::string emt = read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  std::string itm;
  for (size_t i = 0; i < emt.size(); i += 4) {
    size_t n = std::min<size_t>(4, emt.size() - i);
    if (n < 4) n = 1;
    itm += static_cast<char>((1 << 3) | (n == 4 ? 3 : 1));
    itm += emt.substr(i, n);
    if (n == 1) i -= 3;  // the tail goes out a byte at a time
  }
  EXPECT_EQ(sniff_trace(bytes(itm)).format, Format::itm);
}

// ITM on TPIU source 5 (`--tpiu-stream 5`): the sniffer looks for ITM
// there, not on source 1 (it refused the capture as "stream 1 is not ITM").
TEST(Sniffer, ATpiuCaptureIsJudgedOnTheStreamItWasToldOf) {
  const std::string itm = read_file(corpus("itm/sigrok_stm32f105_itm_stream1.bin"));
  std::string tpiu("\xFF\xFF\xFF\x7F", 4);
  for (size_t at = 0; at < itm.size(); at += 14) {
    std::string frame(16, '\0');
    frame[0] = static_cast<char>(5 << 1 | 1);  // source 5 from the next byte on
    for (size_t k = 0; k < 14; ++k) {
      const uint8_t b = at + k < itm.size() ? static_cast<uint8_t>(itm[at + k]) : 0;
      const size_t pos = k + 1;
      if (pos % 2 == 0) {  // an even byte keeps its LSB in the aux byte
        frame[pos] = static_cast<char>(b & 0xFE);
        frame[15] = static_cast<char>(frame[15] | (b & 1) << (pos / 2));
      } else {
        frame[pos] = static_cast<char>(b);
      }
    }
    tpiu += frame;
  }
  EXPECT_EQ(sniff_trace(bytes(tpiu), 5).format, Format::tpiu);
  const SniffVerdict on_1 = sniff_trace(bytes(tpiu));
  EXPECT_FALSE(on_1.format);
  EXPECT_NE(on_1.looks_like.find("tpiu: no bytes for source 1"), std::string::npos) << on_1.looks_like;
}

// An OpenOCD capture (`tpiu config internal FILE uart off ...`) opens with
// the idle line: thousands of zero bytes before the first packet. They were
// counted as reserved bytes, so the capture was refused ("28 % of bytes
// start no ITM packet") and, forced, read as 4,395 corrupt bytes of lost
// data; and a short run of zeros before junk was placed at the junk.
TEST(Sniffer, AnIdleLineOfZerosIsNoDamageAndDamageIsPlacedAtItsFirstByte) {
  std::string emt = read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt");
  std::string itm;
  for (size_t i = 0; i + 4 <= emt.size(); i += 4) itm += static_cast<char>((1 << 3) | 3) + emt.substr(i, 4);
  for (size_t i = emt.size() / 4 * 4; i < emt.size(); ++i) itm += static_cast<char>((1 << 3) | 1) + emt.substr(i, 1);
  const std::string idle = std::string(4396, '\0') + itm;
  EXPECT_EQ(sniff_trace(bytes(idle)).format, Format::itm);
  auto plain = analyse(Format::itm, itm), padded = analyse(Format::itm, idle);
  EXPECT_EQ(padded->stats.corrupt_bytes, 0u);
  EXPECT_EQ(padded->stats.truncated_bytes, 0u);
  EXPECT_EQ(padded->result.counts.allocs, plain->result.counts.allocs);
  EXPECT_EQ(padded->result.leaks.size(), plain->result.leaks.size());
  // Three zeros, then a reserved byte: four corrupt bytes, the first at the first zero.
  const std::string damaged = itm.substr(0, 100) + std::string(3, '\0') + '\x64' + itm.substr(100);
  auto d = analyse(Format::itm, damaged);
  EXPECT_EQ(d->stats.corrupt_bytes, 4u);
  ASSERT_TRUE(d->stats.first_problem);
  EXPECT_EQ(d->stats.first_problem->offset, 100u);
}

// A capture of something else decodes, and is said to hold its packets,
// not that ITM packets were expected (rust-embedded/itm's example capture:
// 8 exception-trace packets, 10 local timestamps, 14 syncs, by an
// independent decoder of the protocol).
TEST(Sniffer, ACaptureWithoutMemoryRecordsSaysWhatItHolds) {
  const std::string path = realworld("itm/rtic_itm_example.bin");
  EXPECT_EQ(sniff_trace(bytes(read_file(path))).format, Format::itm);
  TraceOutcome o = analyse_trace_file(path, {});
  EXPECT_FALSE(o.run);
  ASSERT_EQ(o.notes.size(), 1u);
  EXPECT_NE(o.notes[0].find("no memory events in 139 bytes as --format itm: it holds packets (8 exception_trace, "
                            "10 local_timestamp, 14 sync) and not one memory event"),
            std::string::npos)
      << o.notes[0];
}

TEST(Sniffer, AnElfIsNotATrace) {
  std::string elf = std::string("\x7f" "ELF\x01\x01\x01", 7) + std::string(57, '\0');
  EXPECT_EQ(refusal(elf), "FILE: an ELF file, not a trace; for its sections and symbols run `edgemem map --elf FILE`");
  // The bundled firmware ELF: today it decodes as ITM into a 5.5 GB "peak".
  EXPECT_FALSE(sniff_trace(bytes(read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.elf"))).format);
  // A path that itself contains the placeholder is named once, not expanded forever.
  EXPECT_EQ(sniff_trace(bytes(elf)).refusal("{file}.elf"),
            "{file}.elf: an ELF file, not a trace; for its sections and symbols run `edgemem map --elf {file}.elf`");
  // Read from stdin or a TCP source: no file for the command to open.
  EXPECT_EQ(sniff_trace(bytes(elf)).refusal("tcp://127.0.0.1:3443"),
            "tcp://127.0.0.1:3443: an ELF file, not a trace; save it to a FILE, then for its sections and symbols run "
            "`edgemem map --elf FILE`");
  EXPECT_EQ(sniff_trace(bytes(elf)).refusal("-").rfind("-: an ELF file, not a trace; save it to a FILE, then", 0), 0u);
}

TEST(Sniffer, ATfliteModelIsNotATrace) {
  std::string model = le32(28) + "TFL3" + std::string(64, '\0');
  EXPECT_EQ(refusal(model), "FILE: a TFLite model, not a trace; for its tensor arena plan run `edgemem plan FILE`");
  std::string real = read_file(std::string(EDGEMEM_SOURCE_DIR) + "/fuzz/corpus/tflite/tflm_hello_world_int8.tflite");
  ASSERT_FALSE(real.empty());
  EXPECT_FALSE(sniff_trace(bytes(real)).format);
}

// What heaptrack writes (heaptrack 1.4, v 10400 3; a helper gave edgemem
// one after zstd): named, with the tool that reads it.
TEST(Sniffer, AHeaptrackRecordingIsNotATrace) {
  std::string recording = "v 10400 3\nX gzip -c data.txt\nI 1000 5e2938\ns d /usr/bin/gzip\n";
  EXPECT_EQ(refusal(recording), "FILE: a heaptrack recording, not a trace; read it with `heaptrack_print FILE`, or "
                                "record the program with `edgemem record -- PROG`");
}

TEST(Sniffer, FirmwareImagesAreNotTraces) {
  // ESP-IDF app image: E9, 5 segments, DIO, 4 MB @ 40 MHz, entry 0x40080ee4.
  std::string esp = std::string("\xE9\x05\x02\x20", 4) + le32(0x40080ee4) + std::string(16, '\0') + random_bytes(4096, 1);
  EXPECT_EQ(refusal(esp).substr(0, 48), "FILE: a firmware image (ESP app image, 5 segment");
  // A raw Cortex-M binary: initial SP at the top of SRAM, Thumb handlers.
  std::string cortex = le32(0x20020000) + le32(0x08000189) + le32(0x08000191) + le32(0x08000193) + random_bytes(4096, 2);
  EXPECT_NE(refusal(cortex).find("a firmware image (Cortex-M vector table: SP 0x20020000, reset 0x08000189)"),
            std::string::npos);
  std::string hex = ":020000040800F2\n:10000000000002208901000891010008930100082E\n:00000001FF\n";
  EXPECT_EQ(refusal(hex).substr(0, 49), "FILE: a firmware image (Intel HEX), not a trace; ");
}

TEST(Sniffer, LinkerMapsAndStackReportsAreNotTraces) {
  EXPECT_EQ(refusal("Archive member included to satisfy reference by file (symbol)\n\nlibc.a(memcpy.o)\n"),
            "FILE: a GNU ld linker map, not a trace; for its regions, sections and symbols run `edgemem map FILE`");
  EXPECT_EQ(refusal("\nMemory Configuration\n\nName Origin Length\n").substr(0, 23), "FILE: a GNU ld linker m");
  EXPECT_EQ(refusal("Component: ARM Compiler 5.06 Tool: armlink [4d3601]\n").substr(0, 29), "FILE: an armlink linker map, ");
  EXPECT_EQ(refusal("####\n#\n# IAR ELF Linker V9.20.1.315/W64 for ARM\n").substr(0, 25), "FILE: an IAR linker map, ");
  EXPECT_EQ(refusal("app.c:25:39:dense_s8\t24\tstatic\napp.c:36:38:argmax\t12\tdynamic,bounded\n"),
            "FILE: a GCC stack usage report (.su), not a trace; for worst-case stack depth run `edgemem stack FILE`");
  for (const char* map : {"map/own_cm4_O2.map", "map_armlink/badshun_minirtos_ac5_5.06u7.map",
                          "map_iar/tylerpedley_stm32f4_template_ewarm7.60.map", "su/own_O2_own_app.su"}) {
    std::string text = read_file(corpus(map)).substr(0, 64 * 1024);
    ASSERT_FALSE(text.empty()) << map;
    EXPECT_FALSE(sniff_trace(bytes(text)).format) << map;
  }
}

TEST(Sniffer, RandomBytesAndPlainTextAreRefusedNotGuessed) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SniffVerdict v = sniff_trace(bytes(random_bytes(100 * 1024, seed)));
    EXPECT_FALSE(v.format) << "seed " << seed << " taken as " << to_string(*v.format);
    EXPECT_TRUE(v.refusal("F").starts_with("F: not a trace edgemem can read (tried emt: ")) << v.refusal("F");
    EXPECT_TRUE(v.refusal("F").ends_with("; force a decoder with --format"));
  }
  EXPECT_FALSE(sniff_trace(bytes("hello\nworld\n")).format);
  EXPECT_FALSE(sniff_trace(bytes(std::string(4096, '\0'))).format);
}

// Boot messages can fill the window the format is judged on: the refusal
// says what to run when the [MEM] lines come later.
TEST(Sniffer, TextWithoutMemLinesInTheWindowPointsToFormatLog) {
  std::string boot;
  while (boot.size() < 64 * 1024) boot += "boot: init subsystem ok\n";
  boot.resize(64 * 1024);
  SniffVerdict v = sniff_trace(bytes(boot));
  EXPECT_FALSE(v.format);
  EXPECT_NE(v.refusal("F").find("log: text, but no [MEM] lines in its first 65,536 bytes"), std::string::npos)
      << v.refusal("F");
  EXPECT_TRUE(v.refusal("F").ends_with("; if its [MEM] lines come later, run with --format log; else force a decoder "
                                       "with --format"))
      << v.refusal("F");
}

// A packed recording damaged near its start: the decoder keeps what came
// before the damage and reports it; the sniffer no longer refused it as
// "most bytes are not emt records". A SYNC further in is not enough.
TEST(Sniffer, AFileThatOpensWithSyncIsEmtHoweverDamaged) {
  std::string damaged = "~emt!" + random_bytes(64 * 1024, 3);
  SniffVerdict v = sniff_trace(bytes(damaged));
  ASSERT_TRUE(v.format);
  EXPECT_EQ(*v.format, Format::emt);
  std::string inside = random_bytes(1000, 4) + damaged;
  EXPECT_FALSE(sniff_trace(bytes(inside)).format) << "a SYNC after noise may be chance";
}

TEST(Sniffer, RefusalIsOneLine) {
  for (const std::string& file : {std::string("\x7f" "ELF", 4), random_bytes(1000, 7), std::string()}) {
    SniffVerdict v = sniff_trace(bytes(file));
    ASSERT_FALSE(v.format);
    EXPECT_EQ(v.refusal("x").find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace edgemem::test
