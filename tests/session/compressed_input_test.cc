// A trace kept compressed as a whole (device.log.gz, .xz, .zst) reads as the
// plain trace does, however its bytes arrive; a cut or damaged one keeps
// what came before and says where it stopped.
#include <gtest/gtest.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <optional>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgemem/analyzer.h"
#include "edgemem/trace_session.h"
#include "session/decompressor.h"

namespace edgemem {
namespace {

using nlohmann::json;

std::span<const uint8_t> packed_span(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// Inferences with temporaries and a 644 B leak every 3rd: enough lines that
// the compressed stream spans many reads.
std::string device_log(int inferences, int first = 1) {
  std::string log;
  uint64_t t = static_cast<uint64_t>(first) * 100;
  for (int i = first; i < first + inferences; ++i) {
    log += fmt::format("[MEM][{}] INFER begin {}\n", ++t, i);
    for (int k = 0; k < 4; ++k, t += 2)
      log += fmt::format("[MEM][{}] ALLOC addr=0x{:x} size={} site=conv.cc:{}\n[MEM][{}] FREE addr=0x{:x}\n", t + 1,
                         0x20001000 + k * 256, 64 + k * 32, 10 + k, t + 2, 0x20001000 + k * 256);
    if (i % 3 == 0) log += fmt::format("[MEM][{}] ALLOC addr=0x{:x} size=644 site=lstm.cc:88\n", ++t, 0x20010000 + i * 700);
    log += fmt::format("[MEM][{}] INFER end {}\n", ++t, i);
  }
  return log;
}

std::string gzip(const std::string& in) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, in.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string xz(const std::string& in) {
  std::string out(lzma_stream_buffer_bound(in.size()), '\0');
  size_t used = 0;
  EXPECT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, packed_span(in).data(), in.size(),
                                    reinterpret_cast<uint8_t*>(out.data()), &used, out.size()),
            LZMA_OK);
  out.resize(used);
  return out;
}

// With a content checksum, as the zstd tool writes by default.
std::string zstd(const std::string& in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  const size_t n = ZSTD_compress2(c, out.data(), out.size(), in.data(), in.size());
  ZSTD_freeCCtx(c);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

using Compress = std::string (*)(const std::string&);
const std::pair<const char*, Compress> kCompressions[] = {{"gzip", gzip}, {"xz", xz}, {"zstd", zstd}};

TraceOutcome push_packed(const std::string& bytes, const std::vector<size_t>& chunks) {
  TraceSession session("t.log", {});
  size_t at = 0;
  for (size_t i = 0; at < bytes.size(); ++i) {
    const size_t n = std::min(chunks[i % chunks.size()], bytes.size() - at);
    session.feed(packed_span(bytes).subspan(at, n));
    at += n;
  }
  return session.finish();
}

// The report less what only the compressed input has.
json report_of(const TraceOutcome& out) {
  EXPECT_TRUE(out.run);
  if (!out.run) return {};
  json j = json::parse(json_report(out.run->input, out.run->result));
  j["input"].erase("compression");
  return j;
}

TEST(CompressedInput, EachCompressionInAnySplitGivesThePlainTracesAnswer) {
  const std::string plain = device_log(3000);
  ASSERT_GT(plain.size(), 200u * 1024);  // past the sniff window and many 64 KiB output buffers
  const json expected = report_of(push_packed(plain, {plain.size()}));
  std::mt19937 random(7);
  std::vector<size_t> jagged;
  for (int i = 0; i < 64; ++i) jagged.push_back(1 + random() % 5000);
  for (const auto& [name, compress] : kCompressions) {
    const std::string packed = compress(plain);
    for (const auto& chunks : std::vector<std::vector<size_t>>{{packed.size()}, {1}, {5}, {4093}, jagged}) {
      TraceOutcome out = push_packed(packed, chunks);
      EXPECT_TRUE(out.notes.empty()) << name << ": " << (out.notes.empty() ? "" : out.notes[0]);
      ASSERT_TRUE(out.run) << name;
      EXPECT_EQ(out.run->input.stats.compression, name);
      EXPECT_EQ(out.run->input.stats.compressed_bytes, packed.size()) << name;
      EXPECT_TRUE(out.run->input.stats.compression_problem.empty()) << name;
      EXPECT_EQ(report_of(out), expected) << name << " in chunks of " << chunks[0];
    }
  }
}

TEST(CompressedInput, ConcatenatedMembersReadAsOneStreamAsGzipDReadsThem) {
  const std::string first = device_log(1000), second = device_log(1000, 1001);
  const json expected = report_of(push_packed(first + second, {1 << 20}));
  for (const auto& [name, compress] : kCompressions) {
    TraceOutcome out = push_packed(compress(first) + compress(second), {3000});
    EXPECT_TRUE(out.notes.empty()) << name;
    EXPECT_EQ(report_of(out), expected) << name;
  }
}

TEST(CompressedInput, ACutFileKeepsWhatCameBeforeAndSaysItWasCut) {
  const std::string plain = device_log(3000);
  for (const auto& [name, compress] : kCompressions) {
    const std::string packed = compress(plain);
    uint64_t before = 0;
    for (size_t percent : {30, 60, 90}) {
      const size_t cut = packed.size() * percent / 100;
      TraceOutcome out = push_packed(packed.substr(0, cut), {4096});
      ASSERT_TRUE(out.run) << name << " cut at " << cut;
      const DecodeStats& s = out.run->input.stats;
      EXPECT_GT(s.events, before) << name << ": a later cut keeps more";
      before = s.events;
      EXPECT_NE(s.compression_problem.find("ends early"), std::string::npos) << name << ": " << s.compression_problem;
      EXPECT_EQ(data_loss_check(out.run->input.stats, out.run->result.counts).status, CheckStatus::found) << name;
      ASSERT_FALSE(out.notes.empty()) << name;
      EXPECT_EQ(out.notes[0].rfind(fmt::format("t.log: compressed offset {}: the {} stream ends early", cut, name), 0), 0u)
          << out.notes[0];
    }
  }
}

// Ctrl-C or a watch limit stops the reading mid-stream: the stream is
// unfinished because nobody read on, not because the file was cut.
TEST(CompressedInput, ReadingStoppedMidStreamIsNotCalledACutFile) {
  const std::string plain = device_log(3000);
  for (const auto& [name, compress] : kCompressions) {
    const std::string packed = compress(plain);
    TraceSession session("t.log", {});
    session.feed(packed_span(packed).first(packed.size() / 2));
    session.stopped();
    TraceOutcome out = session.finish();
    ASSERT_TRUE(out.run) << name;
    const DecodeStats& s = out.run->input.stats;
    EXPECT_GT(s.events, 0u) << name;
    EXPECT_EQ(s.compression, name);
    EXPECT_EQ(s.compression_problem, "") << name;
    for (const std::string& note : out.notes) EXPECT_EQ(note.find("ends early"), std::string::npos) << name << ": " << note;
  }
}

TEST(CompressedInput, DamageIsNamedWithItsOffsetAndNothingAfterItIsRead) {
  const std::string plain = device_log(3000);
  for (const auto& [name, compress] : kCompressions) {
    std::string packed = compress(plain);
    const size_t at = packed.size() / 2;
    for (size_t i = at; i < at + 64; ++i) packed[i] = static_cast<char>(packed[i] ^ 0x5a);
    TraceOutcome out = push_packed(packed, {4096});
    ASSERT_FALSE(out.notes.empty()) << name;
    const std::string& note = out.notes[0];
    EXPECT_NE(note.find(fmt::format("damaged {} data", name)), std::string::npos) << note;
    ASSERT_TRUE(out.run) << name << ": " << note;  // what came before is analysed
    const DecodeStats& s = out.run->input.stats;
    EXPECT_FALSE(s.compression_problem.empty());
    EXPECT_EQ(data_loss_check(out.run->input.stats, out.run->result.counts).status, CheckStatus::found) << name;
    EXPECT_GT(s.events, 0u) << name;
    // The damage is named where it was found, at or after the first damaged
    // byte (a checksum only at its block's end; zstd judges a block whole).
    const uint64_t damage_at = s.compressed_bytes - s.compressed_bytes_unread;
    EXPECT_GE(damage_at, at) << name << ": " << note;
    EXPECT_LE(damage_at, at + 64 + (128u << 10) + 3) << name << ": " << note;
  }
}

// Damage reads the same whatever the reads: the decompressor is given the
// input in pieces at fixed offsets, so the data before the damage, the offset
// it is named at and what is said of it do not move. Before that, zlib's
// and liblzma's read-ahead moved the offset by a byte or two, and zstd's by
// the part of a checksum that came in the earlier read.
TEST(CompressedInput, DamageReadsTheSameHoweverTheBytesArrive) {
  const std::string plain = device_log(6000);
  std::mt19937 random(11);
  std::vector<size_t> jagged;
  for (int i = 0; i < 64; ++i) jagged.push_back(1 + random() % 9000);
  for (const auto& [name, compress] : kCompressions) {
    const std::string good = compress(plain);
    // A run of damage in the middle; the last byte (in the checksum or size
    // the format ends with).
    for (const auto& [from, length] : {std::pair{good.size() / 2, size_t{64}}, std::pair{good.size() - 1, size_t{1}}}) {
      std::string packed = good;
      for (size_t i = from; i < from + length; ++i) packed[i] = static_cast<char>(packed[i] ^ 0x5a);
      std::optional<std::pair<json, std::vector<std::string>>> first;
      for (const auto& chunks : std::vector<std::vector<size_t>>{
               {packed.size()}, {65536}, {4096}, {4095}, {7}, {packed.size() - 1, 1}, {packed.size() - 3, 3}, jagged}) {
        TraceOutcome out = push_packed(packed, chunks);
        ASSERT_TRUE(out.run) << name;
        const DecodeStats& s = out.run->input.stats;
        ASSERT_FALSE(s.compression_problem.empty()) << name << " damaged at " << from;
        const uint64_t damage_at = s.compressed_bytes - s.compressed_bytes_unread;
        EXPECT_GE(damage_at + (128 << 10), from) << name << " in chunks of " << chunks[0];
        EXPECT_LE(damage_at, from + length + (128 << 10)) << name << " in chunks of " << chunks[0];
        const std::pair<json, std::vector<std::string>> seen{json::parse(json_report(out.run->input, out.run->result)),
                                                             out.notes};
        if (!first) first = seen;
        EXPECT_EQ(seen.first, first->first) << name << " damaged at " << from << ", in chunks of " << chunks[0];
        EXPECT_EQ(seen.second, first->second) << name << " damaged at " << from << ", in chunks of " << chunks[0];
      }
    }
  }
}

// Where each block of a one-frame zstd file starts (RFC 8878, 3.1.1).
std::vector<size_t> zstd_block_offsets(const std::string& frame) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(frame[i]); };
  const uint8_t fhd = byte(4);
  const bool single_segment = fhd & 0x20;
  const size_t dict_id[] = {0, 1, 2, 4}, content_size[] = {single_segment ? 1u : 0u, 2, 4, 8};
  size_t at = 5 + (single_segment ? 0 : 1) + dict_id[fhd & 3] + content_size[fhd >> 6];
  std::vector<size_t> blocks;
  for (bool last = false; !last;) {
    blocks.push_back(at);
    const uint32_t header = byte(at) | byte(at + 1) << 8 | byte(at + 2) << 16;
    last = header & 1;
    at += 3 + ((header >> 1 & 3) == 1 ? 1 : header >> 3);  // an RLE block holds one byte
  }
  return blocks;
}

// A damaged block header loses only what comes after it: the blocks before
// it come out whole, however the bytes arrive. It once lost the block just
// before it, decoded in the same call to zstd as the header (and that call's
// output is not counted when it fails), and, with more than the output
// buffer in that block, the part still to be flushed.
TEST(CompressedInput, ADamagedZstdBlockHeaderLosesNoBlockBeforeIt) {
  const std::string plain = device_log(9000);
  const std::string good = zstd(plain);
  const std::vector<size_t> blocks = zstd_block_offsets(good);
  ASSERT_GE(blocks.size(), 4u);
  for (size_t k = 1; k < 4; ++k) {
    std::string packed = good;
    packed[blocks[k]] = static_cast<char>(packed[blocks[k]] | 0x06);  // block type 3: reserved
    for (const size_t read : {size_t{1}, size_t{4096}, size_t{7000}, packed.size()}) {
      auto unpack = Decompressor::make(Compression::zstd);
      std::string out;
      auto append = [&](std::span<const uint8_t> piece) { out.append(reinterpret_cast<const char*>(piece.data()), piece.size()); };
      std::string error;
      for (size_t at = 0; at < packed.size() && error.empty(); at += read)
        error = unpack->feed(packed_span(packed).subspan(at, std::min(read, packed.size() - at)), append);
      if (error.empty()) error = unpack->drain(append);
      EXPECT_NE(error.find("damaged zstd data"), std::string::npos) << error;
      // Every block before it holds 128 KiB of the log (ZSTD_BLOCKSIZE_MAX).
      EXPECT_EQ(out.size(), k * ZSTD_BLOCKSIZE_MAX) << "header of block " << k << " damaged, read in " << read;
      EXPECT_EQ(out, plain.substr(0, out.size()));
      EXPECT_EQ(unpack->consumed(), blocks[k] + 3) << "named at the damaged header's end";
    }
  }
}

TEST(CompressedInput, WhatGzipDIgnoresAfterTheLastMemberIsNoDamage) {
  const std::string plain = device_log(500);
  const json expected = report_of(push_packed(plain, {1 << 20}));
  TraceOutcome padded = push_packed(gzip(plain) + std::string(512, '\0'), {100});
  EXPECT_TRUE(padded.notes.empty()) << padded.notes[0];
  EXPECT_EQ(report_of(padded), expected);
  TraceOutcome garbage = push_packed(gzip(plain) + "\n", {100});
  ASSERT_EQ(garbage.notes.size(), 1u);
  EXPECT_EQ(garbage.notes[0], "warning: t.log: 1 byte after the end of the gzip data ignored, as gzip -d ignores them");
  EXPECT_EQ(report_of(garbage), expected);
}

TEST(CompressedInput, AZstdFileThatOpensWithASkippableFrameIsRead) {
  const std::string plain = device_log(500);
  const std::string skippable = std::string("\x50\x2a\x4d\x18\x04\x00\x00\x00", 8) + "pzst";
  TraceOutcome out = push_packed(skippable + zstd(plain), {333});
  EXPECT_TRUE(out.notes.empty());
  EXPECT_EQ(report_of(out), report_of(push_packed(plain, {1 << 20})));
}

TEST(CompressedInput, ACompressedFileThatIsNoTraceIsRefusedAsDecompressedAndNotCalledCut) {
  std::string elf = std::string("\x7f" "ELF\x02\x01\x01", 7) + std::string(3 << 20, '\x11');
  TraceOutcome out = push_packed(gzip(elf), {1 << 20});
  EXPECT_FALSE(out.run);
  ASSERT_EQ(out.notes.size(), 1u) << out.notes[1];
  EXPECT_EQ(out.notes[0].rfind("t.log (after gzip decompression): an ELF file, not a trace", 0), 0u) << out.notes[0];
  EXPECT_NE(out.notes[0].find("gzip -dc t.log > FILE"), std::string::npos) << out.notes[0];
}

TEST(CompressedInput, Bzip2AndLz4AreRefusedWithTheCommandThatReadsThem) {
  for (const auto& [head, tool] : {std::pair<std::string, std::string>{std::string("BZh91AY&SY", 10), "bzcat"},
                                   {std::string("\x04\x22\x4d\x18\x64\x40\xa7", 7), "lz4cat"}}) {
    TraceOutcome out = push_packed(head + std::string(100000, 'x'), {4096});
    EXPECT_FALSE(out.run);
    ASSERT_EQ(out.notes.size(), 1u);
    EXPECT_NE(out.notes[0].find(tool + " t.log | edgemem analyze -"), std::string::npos) << out.notes[0];
  }
}

TEST(CompressedInput, InputShorterThanAMagicNumberIsReadAsItIs) {
  for (const std::string& tiny : {std::string("\x1f"), std::string("[MEM]")}) {
    TraceOutcome out = push_packed(tiny, {1});
    EXPECT_FALSE(out.run);
    ASSERT_FALSE(out.notes.empty());
    EXPECT_EQ(out.notes[0].find("compress"), std::string::npos) << out.notes[0];
  }
}

TEST(CompressedInput, AWholeFileInMemoryIsDecompressedOrItsDamageNamed) {
  const std::string plain = device_log(100);
  std::string error;
  EXPECT_EQ(decompressed(gzip(plain), error), plain);
  EXPECT_EQ(decompressed(plain, error), plain);  // not compressed: unchanged
  std::string cut = xz(plain);
  cut.resize(cut.size() - 10);
  EXPECT_FALSE(decompressed(cut, error));
  EXPECT_NE(error.find("the xz stream ends early"), std::string::npos) << error;
}

}  // namespace
}  // namespace edgemem
