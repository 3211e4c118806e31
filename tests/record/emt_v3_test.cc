// emt version 3: the compact records the preload library writes into its
// chunks, and the packed layout `edgemem record` turns a finished
// recording into. The documented bytes; packed and chunked read the same,
// split any way; a packed file cut short reads up to its last whole record;
// damage is named with its offset; a file still being written stays
// chunked; a real recording of the inference loop takes at most 4 bytes an
// allocation.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <map>
#include <set>

#include <fmt/format.h>
#include <zstd.h>

#include "edgemem/emt_v2.h"
#include "ingest/emt_chunk_builder.h"
#include "record/trace_packer.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

namespace e2 = emt2;
namespace fs = std::filesystem;

std::string header_page() {
  std::string s("\x7E" "emt!" "\x00" "\x01\x03\x00" "\x00", 10);  // SYNC, HEADER v3 no clock, layout chunked
  s.resize(e2::kHeaderBytes, '\0');
  return s;
}


std::vector<Event> decode(const std::string& bytes, DecodeStats* stats = nullptr, size_t step = 0,
                          unsigned random_seed = 0) {
  TraceContext context;
  Recorder sink;
  auto decoder = make_decoder(Format::emt, context, sink);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  std::mt19937 rng(random_seed);
  for (size_t i = 0; i < bytes.size();) {
    size_t n = random_seed ? 1 + rng() % 20000 : step ? step : bytes.size();
    n = std::min(n, bytes.size() - i);
    decoder->feed({p + i, n});
    i += n;
  }
  decoder->finish();
  if (stats) *stats = decoder->stats();
  return sink.events;
}

std::string varint(uint64_t v) {
  uint8_t buf[10];
  size_t n = e2::put_varint(buf, v);
  return std::string(reinterpret_cast<char*>(buf), n);
}

std::string rec(uint8_t tag, std::initializer_list<uint64_t> fields, const std::string& text = {}, bool with_text = false) {
  std::string s(1, static_cast<char>(tag));
  for (uint64_t f : fields) s += varint(f);
  if (with_text) s += varint(text.size()) + text;
  return s;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = test::scratch_dir("edgemem-v3-test");
  return dir / name;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The byte-level example of docs/formats/emt.md, version 3.
const std::string kDocRecords(
    "\x36\x01\xE5\x81\x01\x04" "main"   // THREAD seq 1, tid 16613
    "\x33\x01\x00\xB4\xA4\x80\x02"      // NODE 1, root, 0x401234
    "\x42\x80\x01\xC0\xCA\x82\x04\x01"  // ALLOC seq 2, 128 B, address given: 0x4052a0, node 1
    "\x44\x00"                          // FREE seq 3, distance 0: 0x4052a0
    "\x40\x80\x01\x01"                  // ALLOC seq 4, 128 B, the block last freed in its size slot, node 1
    "\x45\x02\x00",                     // FREE dseq 2 (seq 6), distance 0: 0x4052a0
    34);

TEST(EmtV3, DecodesTheDocumentedExample) {
  TraceContext context;
  Recorder sink;
  auto decoder = make_decoder(Format::emt, context, sink);
  std::string bytes = header_page() + chunk(1, 0, 0, kDocRecords);
  decoder->feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  decoder->finish();
  const DecodeStats& s = decoder->stats();
  EXPECT_EQ(s.corrupt_bytes, 0u);
  EXPECT_EQ(s.truncated_bytes, 0u);
  EXPECT_EQ(s.dropped_records, 1u);  // seq 5: another thread's, never written
  const auto& e = sink.events;
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].kind, EventKind::alloc);
  EXPECT_EQ(e[0].address, 0x4052a0u);
  EXPECT_EQ(e[0].size, 128u);
  EXPECT_EQ(e[0].time, 2u);
  EXPECT_EQ(e[0].thread, 16613u);
  EXPECT_EQ(context.sites.name(e[0].site), "0x401234");
  EXPECT_EQ(e[1].kind, EventKind::free);
  EXPECT_EQ(e[1].address, 0x4052a0u);
  EXPECT_EQ(e[1].time, 3u);
  EXPECT_EQ(e[2].kind, EventKind::alloc);
  EXPECT_EQ(e[2].address, 0x4052a0u);
  EXPECT_EQ(e[2].time, 4u);
  EXPECT_EQ(e[2].site, e[0].site);
  EXPECT_EQ(e[3].kind, EventKind::free);
  EXPECT_EQ(e[3].address, 0x4052a0u);
  EXPECT_EQ(e[3].time, 6u);
}

TEST(EmtV3, AFreeThatNamesNoAllocationOfItsChunkIsDamageWithItsOffset) {
  std::string records = kDocRecords.substr(0, 17) + "\x44\x05";  // distance 5, but the chunk holds no ALLOC yet
  DecodeStats s;
  auto events = decode(header_page() + chunk(1, 0, 0, records), &s);
  EXPECT_TRUE(events.empty());
  ASSERT_TRUE(s.first_problem);
  EXPECT_EQ(s.first_problem->offset, e2::kHeaderBytes + e2::kChunkHeaderBytes + 17);
  EXPECT_EQ(s.corrupt_bytes, 2u);
}

// Two threads, several chunks each, compact records throughout: each
// allocates blocks of a few sizes and frees every other one by distance,
// each chunk starting its encoding state afresh. With `late_thread`, a third
// thread starts in that round (its first chunk's base is 0, as the preload
// library writes it).
std::string chunked_recording(int rounds = 6, int late_thread = -1) {
  std::string out = header_page();
  uint64_t seq = 0, last[4] = {0, 0, 0, 0};
  uint32_t index = 0;
  std::mt19937 rng(7);
  for (int round = 0; round < rounds; ++round) {
    for (uint32_t slot = 1; slot <= 3; ++slot) {
      if (slot == 3 && (late_thread < 0 || round < late_thread)) continue;
      uint64_t base = last[slot];
      auto tagged = [&](uint8_t tag) {  // a compact tag and its dseq, 1 left out
        uint64_t d = ++seq - last[slot];
        last[slot] = seq;
        std::string s;
        s.push_back(static_cast<char>(d == 1 ? tag : tag | e2::kSeqGiven));
        if (d != 1) s.append(varint(d));
        return s;
      };
      std::string records;
      if (round == (slot == 3 ? late_thread : 0)) {
        records += rec(e2::kThread, {++seq - last[slot], slot * 100}, "", true) + rec(e2::kNode, {1, 0, 0x1000u * slot});
        last[slot] = seq;
      }
      uint64_t last_address = 0;
      for (uint64_t i = 0; i < 40; ++i) {
        uint64_t size = uint64_t{64} << (rng() % 8), address = 0x100000u * slot + 0x1000u * i;
        records += tagged(e2::kSmallAlloc | e2::kAddressGiven) + varint(size) +
                   varint(e2::zigzag(address - last_address)) + varint(1);
        last_address = address;
        if (i % 2) {  // the one before: distance 1
          records += tagged(e2::kSmallFree) + varint(1);
          last_address = address - 0x1000u;
        }
      }
      out += chunk(slot, index++, base, records);
    }
  }
  return out;
}

TEST(EmtV3, PackedAndChunkedReadTheSameSplitAnyWay) {
  fs::path path = scratch("packed.emt");
  std::string chunked = chunked_recording();
  write_file(path, chunked);
  PackResult p = pack_recording(path.string());
  ASSERT_TRUE(p.packed) << p.why_not;
  std::string packed = read_file(path.string());
  EXPECT_EQ(p.packed_bytes, packed.size());
  EXPECT_LT(packed.size() * 20, chunked.size());

  DecodeStats sc, sp;
  auto from_chunked = decode(chunked, &sc);
  auto from_packed = decode(packed, &sp);
  EXPECT_EQ(sc.corrupt_bytes, 0u);
  EXPECT_FALSE(sp.first_problem) << sp.first_problem->what;
  EXPECT_EQ(sp.corrupt_bytes, 0u);
  EXPECT_EQ(sp.truncated_bytes, 0u);
  EXPECT_EQ(sp.dropped_records, sc.dropped_records);
  ASSERT_EQ(from_packed.size(), 12u * 60u);
  EXPECT_EQ(from_packed, from_chunked);
  for (size_t step : {1u, 3u, 4096u, 70000u}) EXPECT_EQ(decode(packed, nullptr, step), from_chunked) << step;
  for (unsigned seed = 1; seed <= 5; ++seed) EXPECT_EQ(decode(packed, nullptr, 0, seed), from_chunked) << seed;
  // Packing again leaves a packed file as it is.
  PackResult again = pack_recording(path.string());
  EXPECT_FALSE(again.packed);
  EXPECT_TRUE(again.why_not.empty());
  EXPECT_EQ(read_file(path.string()), packed);
}

// Writes `recording` as the preload library does, chunk by chunk in file
// order, each first part-written (its `used` counting half its records),
// with the packer looking in after every step; then finishes the packing.
// Returns the packed file, empty if it was not packed; `packed_before_end`:
// chunks packed before finish().
std::string pack_while_written(const std::string& recording, const fs::path& path, uint64_t* packed_before_end) {
  fs::remove(path);
  RecordingPacker packer(path.string());
  packer.pack_left_chunks();  // no file yet
  int fd = open(path.c_str(), O_RDWR | O_CREAT, 0644);
  EXPECT_GE(fd, 0);
  auto put = [&](const char* bytes, size_t n, uint64_t at) {
    EXPECT_EQ(pwrite(fd, bytes, n, static_cast<off_t>(at)), static_cast<ssize_t>(n));
  };
  put(recording.data(), e2::kHeaderBytes, 0);
  packer.pack_left_chunks();
  for (uint64_t at = e2::kHeaderBytes; at < recording.size(); at += e2::kChunkBytes) {
    std::string c = recording.substr(at, e2::kChunkBytes);
    uint32_t used = static_cast<uint32_t>(static_cast<uint8_t>(c[e2::kUsedAt])) |
                    static_cast<uint32_t>(static_cast<uint8_t>(c[e2::kUsedAt + 1])) << 8;
    std::string half = c.substr(0, e2::kChunkHeaderBytes + used / 2);
    e2::put_u32(reinterpret_cast<uint8_t*>(half.data()) + e2::kUsedAt, used / 2);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(at + e2::kChunkBytes)), 0);
    put(half.data(), half.size(), at);
    packer.pack_left_chunks();
    put(c.data(), e2::kChunkHeaderBytes + used, at);
    packer.pack_left_chunks();
  }
  close(fd);
  // Nothing beside the file while it is packed (an unnamed file until the end).
  for (const auto& entry : fs::directory_iterator(path.parent_path()))
    EXPECT_FALSE(entry.path().filename().string().starts_with(path.filename().string() + ".")) << entry.path();
  PackResult p = packer.finish();
  EXPECT_TRUE(p.packed) << p.why_not;
  *packed_before_end = p.chunks_packed_while_written;
  EXPECT_FALSE(fs::exists(path.string() + ".packing"));
  return p.packed ? read_file(path.string()) : std::string();
}

// `edgemem record` packs a recording while its program runs: the chunks a
// thread has left are packed as they appear, the one it still writes only
// once it has moved on. The result is the file packing it afterwards gives.
TEST(EmtV3, PackingWhileTheProgramWritesGivesTheBytesOfPackingAfterwards) {
  std::string chunked = chunked_recording(1000);
  fs::path after = scratch("after.emt");
  write_file(after.string() + ".packing", "left by an edgemem record killed while packing");
  write_file(after, chunked);
  ASSERT_TRUE(pack_recording(after.string()).packed);
  uint64_t packed_before_end = 0;
  std::string during = pack_while_written(chunked, scratch("during.emt"), &packed_before_end);
  // (compared as booleans: a mismatch would print megabytes)
  EXPECT_TRUE(during == read_file(after.string())) << during.size() << " bytes, not as packed afterwards";
  // Packed as it went: all but the two threads' last chunks.
  EXPECT_EQ(packed_before_end, 2000u - 2);
  EXPECT_TRUE(decode(during) == decode(chunked));
}

// A thread started late has a first chunk of base 0: packing it after chunks
// of a higher base orders the stream differently, and the reader, which
// merges by sequence number, reads the same events.
TEST(EmtV3, AThreadStartedWhilePackingIsReadInItsPlace) {
  std::string chunked = chunked_recording(30, 10);
  uint64_t packed_before_end = 0;
  std::string during = pack_while_written(chunked, scratch("late.emt"), &packed_before_end);
  fs::path after = scratch("late-after.emt");
  write_file(after, chunked);
  ASSERT_TRUE(pack_recording(after.string()).packed);
  EXPECT_FALSE(during == read_file(after.string()));  // the late thread's first chunk is elsewhere
  DecodeStats sc, sp;
  auto from_chunked = decode(chunked, &sc);
  auto from_packed = decode(during, &sp);
  EXPECT_FALSE(sp.first_problem) << sp.first_problem->what;
  EXPECT_EQ(sp.dropped_records, sc.dropped_records);
  EXPECT_EQ(from_packed.size(), 30u * 2 * 60 + 20u * 60);
  EXPECT_TRUE(from_packed == from_chunked);
}

// A damaged chunk seen while the program runs leaves the file chunked, as
// written, with no FILE.packing behind.
TEST(EmtV3, ADamagedChunkSeenWhilePackingLeavesTheFileChunked) {
  std::string chunked = chunked_recording();
  chunked[e2::kHeaderBytes + 2 * e2::kChunkBytes + e2::kIndexAt] = 9;  // the third chunk says it is the tenth
  fs::path path = scratch("damaged-during.emt");
  fs::remove(path);
  {
    RecordingPacker packer(path.string());
    write_file(path, chunked);
    packer.pack_left_chunks();
    EXPECT_FALSE(fs::exists(path.string() + ".packing"));
    PackResult p = packer.finish();
    EXPECT_FALSE(p.packed);
    EXPECT_NE(p.why_not.find("damaged"), std::string::npos) << p.why_not;
  }
  EXPECT_EQ(read_file(path.string()), chunked);
  EXPECT_FALSE(fs::exists(path.string() + ".packing"));
}

// About 720 KB of records, six zstd blocks once packed (4,000 chunks: 262 MB
// before, so it is made once). Empty if packing failed.
const std::string& long_packed_recording() {
  static const std::string packed = [] {
    fs::path path = scratch("long.emt");
    write_file(path, chunked_recording(2000));
    return pack_recording(path.string()).packed ? read_file(path.string()) : std::string();
  }();
  return packed;
}

TEST(EmtV3, APackedFileCutShortReadsUpToItsLastWholeRecord) {
  // Past the first zstd block: within it nothing can be read (next test).
  const std::string& packed = long_packed_recording();
  ASSERT_FALSE(packed.empty());
  auto all = decode(packed);
  for (size_t keep : {packed.size() / 3, packed.size() / 2, packed.size() - 9}) {
    DecodeStats s;
    auto events = decode(packed.substr(0, keep), &s);
    EXPECT_FALSE(events.empty()) << keep;
    EXPECT_EQ(s.corrupt_bytes, 0u) << keep;
    EXPECT_GT(s.truncated_bytes, 0u) << keep;
    EXPECT_FALSE(s.first_problem) << keep;
    ASSERT_LE(events.size(), all.size());
    // The merge may hold back records of a thread whose chunk is missing,
    // so what is read is the recording's events, in order, each once.
    std::vector<Event> expected;
    std::set<uint64_t> times;
    for (const Event& e : events) times.insert(e.time);
    for (const Event& e : all)
      if (times.contains(e.time)) expected.push_back(e);
    EXPECT_EQ(events, expected) << keep;
  }
}

// What a cut packed file lost is said in two units, kept apart: the file's
// own bytes at its end that zstd could not decode (truncated_bytes, never
// more than the cut frame has in the file), and the unpacked bytes the cut
// chunk declared and did not deliver (its records are a few hundred bytes
// here). The two were once added up: a real recording's 64 KiB chunk made
// a 26,356-byte cut file read "65209 bytes ... ignored". And the file is
// said to be cut, with the frame it ends in.
TEST(EmtV3, APackedFileCutShortCountsOnlyTheCutChunkAsLost) {
  const std::string& packed = long_packed_recording();
  ASSERT_FALSE(packed.empty());
  const size_t all = decode(packed).size();
  DecodeStats whole;
  decode(packed, &whole);
  EXPECT_FALSE(whole.recording_cut);
  for (size_t keep : {packed.size() / 4, packed.size() / 2, packed.size() * 3 / 4, packed.size() - 9}) {
    DecodeStats s;
    const size_t read = decode(packed.substr(0, keep), &s).size();
    EXPECT_GT(read, all / 8) << keep;
    EXPECT_TRUE(s.recording_cut) << keep;
    EXPECT_TRUE(s.cut_in_packed_frame) << keep;
    EXPECT_EQ(s.cut_at + s.cut_bytes_present, keep);
    EXPECT_LE(s.truncated_bytes, s.cut_bytes_present) << keep;
    EXPECT_GT(s.cut_chunk_missing + s.truncated_bytes, 0u) << keep;
    EXPECT_LT(s.cut_chunk_missing, 1000u) << keep;
    EXPECT_EQ(decode(packed.substr(0, keep), nullptr, 4096).size(), read) << keep;
  }
}

// zstd gives nothing of a block until the whole block is there: a file cut
// inside the first one has no record to read, and says why.
TEST(EmtV3, APackedFileCutInsideItsFirstZstdBlockNamesTheCut) {
  const std::string& packed = long_packed_recording();
  ASSERT_FALSE(packed.empty());
  for (size_t keep : {size_t{11}, size_t{200}, size_t{5000}}) {
    DecodeStats s;
    EXPECT_TRUE(decode(packed.substr(0, keep), &s).empty()) << keep;
    ASSERT_TRUE(s.first_problem) << keep;
    EXPECT_EQ(s.first_problem->offset, keep);
    EXPECT_NE(s.first_problem->what.find("cut off inside its first zstd block"), std::string::npos) << s.first_problem->what;
    EXPECT_GT(s.truncated_bytes, 0u) << keep;
  }
}

TEST(EmtV3, DamagedZstdBytesAreNamedWithTheirOffset) {
  fs::path path = scratch("damaged.emt");
  write_file(path, chunked_recording());
  ASSERT_TRUE(pack_recording(path.string()).packed);
  std::string packed = read_file(path.string());
  for (size_t i = packed.size() / 2; i < packed.size() / 2 + 16; ++i) packed[i] = static_cast<char>(packed[i] ^ 0x5A);
  DecodeStats s;
  decode(packed, &s);
  ASSERT_TRUE(s.first_problem);
  EXPECT_NE(s.first_problem->what.find("zstd"), std::string::npos) << s.first_problem->what;
  EXPECT_GT(s.corrupt_bytes, 0u);
  EXPECT_EQ(decode(packed, nullptr, 0, 3).size(), decode(packed).size());
}

// Damage anywhere in a zstd frame — bytes overwritten, one bit flipped
// (which zstd may still decode, into records that never were), the flag
// that asks for the frame's checksum cleared — loses that frame's records
// and invents none: every event read is the recording's own, the other
// frame is read whole, and the same however the file is read.
TEST(EmtV3, ADamagedZstdFrameLosesItsRecordsAndInventsNone) {
  const std::string& packed = long_packed_recording();
  ASSERT_FALSE(packed.empty());
  const std::vector<Event> all = decode(packed);
  std::map<uint64_t, Event> by_time;
  for (const Event& e : all) by_time.emplace(e.time, e);
  const size_t second_frame = packed.find("\x28\xB5\x2F\xFD", 11);
  ASSERT_NE(second_frame, std::string::npos) << "the recording fits one frame: make it longer";
  std::vector<std::pair<std::string, std::string>> damaged;
  auto flipped = [&](size_t at, uint8_t bits) {
    std::string d = packed;
    d[at] = static_cast<char>(d[at] ^ bits);
    return d;
  };
  std::string overwritten = packed;
  for (size_t i = packed.size() / 2; i < packed.size() / 2 + 16; ++i) overwritten[i] = static_cast<char>(overwritten[i] ^ 0x5A);
  damaged.emplace_back("16 bytes mid-file", overwritten);
  for (size_t at : {second_frame / 5, second_frame / 2, second_frame - 2, second_frame + 100, packed.size() - 3})
    for (uint8_t bit : {0x01, 0x10, 0x80}) damaged.emplace_back(fmt::format("bit {:#x} of byte {}", bit, at), flipped(at, bit));
  damaged.emplace_back("the second frame's checksum flag", flipped(second_frame + 4, 0x04));
  for (const auto& [what, bytes] : damaged) {
    SCOPED_TRACE(what);
    DecodeStats s;
    const std::vector<Event> read = decode(bytes, &s);
    ASSERT_TRUE(s.first_problem);
    EXPECT_NE(s.first_problem->what.find("is damaged"), std::string::npos) << s.first_problem->what;
    EXPECT_GT(s.corrupt_bytes, 0u);
    EXPECT_LT(read.size(), all.size());
    EXPECT_FALSE(read.empty());  // the other frame
    // Sites, threads and pools are numbered as first seen, and the lost
    // frame held the first: the recorded fields are compared.
    size_t invented = 0;
    for (const Event& e : read) {
      auto it = by_time.find(e.time);
      invented += it == by_time.end() || it->second.kind != e.kind || it->second.address != e.address ||
                  it->second.size != e.size || it->second.old_address != e.old_address;
    }
    EXPECT_EQ(invented, 0u);
    for (size_t step : {3u, 4096u, 70000u}) EXPECT_EQ(decode(bytes, nullptr, step), read) << step;
    for (unsigned seed = 1; seed <= 2; ++seed) EXPECT_EQ(decode(bytes, nullptr, 0, seed), read) << seed;
  }
}

// A damaged block header that claims more bytes makes zstd take the start
// of the next frame into the damaged one: the next frame is still found
// and read, however the file is split into reads (a reviewer's stdin in
// 4 KiB pieces lost it, read whole it did not).
TEST(EmtV3, AFrameDamagedIntoTheNextOneLosesOnlyItself) {
  std::string packed = long_packed_recording();
  ASSERT_FALSE(packed.empty());
  // RFC 8878: the first frame's header, then its blocks up to the last.
  size_t at = 10 + 4;
  const uint8_t fhd = static_cast<uint8_t>(packed[at++]);
  const size_t fcs_flag = fhd >> 6, dict_flag = fhd & 3;
  const bool single = fhd & 0x20;
  at += (single ? 0 : 1) + (dict_flag == 3 ? 4 : dict_flag) +
        (fcs_flag == 0 ? (single ? 1 : 0) : fcs_flag == 1 ? 2 : fcs_flag == 2 ? 4 : 8);
  for (;;) {
    const uint32_t header = static_cast<uint8_t>(packed[at]) | static_cast<uint8_t>(packed[at + 1]) << 8 |
                            static_cast<uint32_t>(static_cast<uint8_t>(packed[at + 2])) << 16;
    const uint32_t size = header >> 3, type = (header >> 1) & 3;
    if (header & 1) {
      const uint32_t longer = header + (16384u << 3);  // 16 KiB more: into the next frame
      for (int i = 0; i < 3; ++i) packed[at + i] = static_cast<char>(longer >> (8 * i));
      break;
    }
    at += 3 + (type == 1 ? 1 : size);
  }
  const std::vector<Event> whole = decode(packed);
  EXPECT_FALSE(whole.empty());  // the second frame
  for (size_t step : {1u, 3u, 4096u, 65536u}) EXPECT_EQ(decode(packed, nullptr, step), whole) << step;
  for (unsigned seed = 1; seed <= 2; ++seed) EXPECT_EQ(decode(packed, nullptr, 0, seed), whole) << seed;
}

// Fake frames nested in each other (each a magic number, a header, and a
// raw block reaching a shared 1 MiB tail, so each is lost for holding too
// much) are read again one level deep only: a reviewer's 9 KB of them took
// the reader to 1 GB, a copy of the frame per level.
TEST(EmtV3, NestedFakeFramesAreReadAgainOneLevelOnly) {
  const std::string& packed = long_packed_recording();
  ASSERT_FALSE(packed.empty());
  const size_t second = packed.find("\x28\xB5\x2F\xFD", 11);
  ASSERT_NE(second, std::string::npos);
  auto block_header = [](uint32_t size, uint32_t type = 0) {
    const uint32_t v = (type << 1) | (size << 3);
    return std::string{static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16)};
  };
  constexpr size_t kFakes = 1000;
  const size_t body = 9 * kFakes + 16;
  std::string fakes(body, '\0');
  for (size_t k = 0; k < kFakes; ++k) {
    // Magic, a checksum and no content size, a 128 KiB window, a raw block to the tail.
    fakes.replace(9 * k, 9, std::string("\x28\xB5\x2F\xFD\x04\x38", 6) + block_header(static_cast<uint32_t>(body - 9 * k - 9)));
  }
  std::string tail;
  for (int b = 0; b < 9; ++b) tail += block_header(131072) + std::string(131072, '\x11');
  const std::string damaged = packed.substr(0, second) + fakes + tail + block_header(0, 3) + packed.substr(second);
  struct rusage before {};
  getrusage(RUSAGE_SELF, &before);
  DecodeStats s;
  const std::vector<Event> read = decode(damaged, &s);
  struct rusage after {};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_EQ(read, decode(packed));  // every real frame read
  EXPECT_EQ(s.corrupt_bytes, damaged.size() - packed.size());
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 200 * 1024) << "KiB more at the peak";
}

// Recordings packed before frames carried their own checksums (layout 01,
// one zstd frame) read as they always did.
TEST(EmtV3, APackedFileOfTheFirstLayoutStillReads) {
  const std::string& packed = long_packed_recording();
  ASSERT_FALSE(packed.empty());
  std::string unpacked(64 << 20, '\0');
  size_t n = ZSTD_decompress(unpacked.data(), unpacked.size(), packed.data() + 10, packed.size() - 10);
  ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  unpacked.resize(n);
  std::string one_frame(ZSTD_compressBound(n), '\0');
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  size_t m = ZSTD_compress2(c, one_frame.data(), one_frame.size(), unpacked.data(), n);
  ZSTD_freeCCtx(c);
  ASSERT_FALSE(ZSTD_isError(m));
  one_frame.resize(m);
  ASSERT_EQ(packed[9], static_cast<char>(e2::kLayoutPackedFrames));
  std::string old = packed.substr(0, 9) + std::string(1, static_cast<char>(e2::kLayoutPacked)) + one_frame;
  EXPECT_EQ(decode(old), decode(packed));
  EXPECT_EQ(decode(old, nullptr, 0, 5), decode(packed));
  // A damaged block header there loses no block before it: the reader once
  // gave zstd a block with the next header in one call, and a failing call
  // hands back nothing it decoded.
  ASSERT_GT(n, 2 * ZSTD_BLOCKSIZE_MAX);
  // RFC 8878: the frame's header, then its first block's header and body.
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(one_frame[i])); };
  const uint32_t fhd = byte(4);
  const size_t dict_id[] = {0, 1, 2, 4}, content_size[] = {fhd & 0x20 ? 1u : 0u, 2, 4, 8};
  const size_t first = 5 + (fhd & 0x20 ? 0 : 1) + dict_id[fhd & 3] + content_size[fhd >> 6];
  const uint32_t header = byte(first) | byte(first + 1) << 8 | byte(first + 2) << 16;
  const size_t second_block = 10 + first + 3 + ((header >> 1 & 3) == 1 ? 1 : header >> 3);
  std::string damaged = old;
  damaged[second_block] = static_cast<char>(damaged[second_block] | 0x06);  // block type 3: reserved
  std::string first_block(ZSTD_compressBound(ZSTD_BLOCKSIZE_MAX), '\0');
  first_block.resize(ZSTD_compress(first_block.data(), first_block.size(), unpacked.data(), ZSTD_BLOCKSIZE_MAX, 3));
  const std::vector<Event> before_damage = decode(old.substr(0, 10) + first_block);
  ASSERT_GT(before_damage.size(), 1000u);
  for (size_t step : {size_t{0}, size_t{1}, size_t{4096}}) {
    DecodeStats s;
    EXPECT_EQ(decode(damaged, &s, step), before_damage) << "read in " << step;
    ASSERT_TRUE(s.first_problem);
    EXPECT_NE(s.first_problem->what.find("is damaged"), std::string::npos) << s.first_problem->what;
  }
}

TEST(EmtV3, AFileAProcessStillRecordsIntoIsLeftChunked) {
  fs::path path = scratch("busy.emt");
  std::string chunked = chunked_recording();
  write_file(path, chunked);
  int writer = open(path.c_str(), O_RDONLY);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(flock(writer, LOCK_SH), 0);  // as the preload library holds it
  PackResult p = pack_recording(path.string());
  EXPECT_FALSE(p.packed);
  EXPECT_NE(p.why_not.find("still records"), std::string::npos) << p.why_not;
  EXPECT_EQ(read_file(path.string()), chunked);
  close(writer);
  EXPECT_TRUE(pack_recording(path.string()).packed);
}

TEST(EmtV3, VersionTwoRecordingsArePackedAndStillRead) {
  std::string v2_page("\x7E" "emt!" "\x00" "\x01\x02\x00", 9);
  v2_page.resize(e2::kHeaderBytes, '\0');
  std::string records = rec(e2::kNode, {1, 0, 0x1000}) + rec(e2::kAlloc, {1, 0, e2::zigzag(0x5000), 64, 0, 1}) +
                        rec(e2::kFree, {1, 0, 0});
  std::string v2 = v2_page + chunk(1, 0, 0, records);
  fs::path path = scratch("v2.emt");
  write_file(path, v2);
  ASSERT_TRUE(pack_recording(path.string()).packed);
  auto events = decode(read_file(path.string()));
  EXPECT_EQ(events, decode(v2));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].address, 0x5000u);
}

// The preload library's own output: the inference loop recorded without
// `edgemem record` (so nothing packs it), then packed here.
TEST(EmtV3, ARealRecordingPacksToAtMostFourBytesAnAllocationAndReadsTheSame) {
  fs::path raw = scratch("loop.emt");
  fs::remove(raw);
  std::string command = fmt::format("LD_PRELOAD={} EDGEMEM_OUTPUT={} {} --inferences 2000 --threads 2 --no-markers",
                                    EDGEMEM_PRELOAD, raw.string(), EDGEMEM_INFERENCE_LOOP);
  ASSERT_EQ(system(command.c_str()), 0);
  std::string chunked = read_file(raw.string());
  DecodeStats sc;
  auto from_chunked = decode(chunked, &sc);
  EXPECT_EQ(sc.corrupt_bytes, 0u);
  EXPECT_EQ(sc.dropped_records, 0u);
  PackResult p = pack_recording(raw.string());
  ASSERT_TRUE(p.packed) << p.why_not;
  std::string packed = read_file(raw.string());
  DecodeStats sp;
  auto from_packed = decode(packed, &sp);
  EXPECT_EQ(sp.corrupt_bytes, 0u);
  EXPECT_EQ(from_packed, from_chunked);
  EXPECT_EQ(decode(packed, nullptr, 0, 11), from_chunked);
  size_t allocs = 0;
  for (const Event& e : from_packed) allocs += e.kind == EventKind::alloc;
  EXPECT_GT(allocs, 2u * 2000u * 32u);
  EXPECT_LE(static_cast<double>(packed.size()) / static_cast<double>(allocs), 4.0)
      << packed.size() << " bytes for " << allocs << " allocations";
}

}  // namespace
}  // namespace edgemem::test
