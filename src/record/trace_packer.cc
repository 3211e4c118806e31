#include "record/trace_packer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <set>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <zstd.h>

#include "edgemem/emt_v2.h"

namespace edgemem {
// Named (not anonymous): RecordingPacker::State holds these.
namespace trace_packing {

namespace e2 = emt2;
namespace fs = std::filesystem;

// zstd's level 3 window (2 MiB) spans many chunks of one thread; higher
// levels gain little on these records and cost the parent's time.
constexpr int kLevel = 3;

struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

uint32_t u32_at(const uint8_t* b) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{b[i]} << (8 * i);
  return v;
}

uint64_t u64_at(const uint8_t* b) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{b[i]} << (8 * i);
  return v;
}

bool read_varint(const uint8_t* b, size_t size, size_t& at, uint64_t& out) {
  out = 0;
  for (unsigned shift = 0; shift < 64 && at < size; shift += 7) {
    uint8_t byte = b[at++];
    out |= uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

bool read_all(int fd, uint8_t* out, size_t n, uint64_t offset) {
  while (n > 0) {
    ssize_t got = pread(fd, out, n, static_cast<off_t>(offset));
    if (got <= 0) return false;
    out += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

bool write_all(int fd, const uint8_t* bytes, size_t n) {
  while (n > 0) {
    ssize_t put = write(fd, bytes, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    bytes += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

class Packer {
 public:
  explicit Packer(int out) : out_(out), buffer_(ZSTD_CStreamOutSize()) {
    ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_compressionLevel, kLevel);
    ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_checksumFlag, 1);
  }
  // A chunk's fields and records; a frame is ended first when they would
  // take it past kFrameBytes, so each frame holds whole chunks.
  bool add_chunk(std::span<const uint8_t> fields, std::span<const uint8_t> records) {
    const size_t n = fields.size() + records.size();
    if (frame_bytes_ > 0 && frame_bytes_ + n > e2::kFrameBytes && !end()) return false;
    frame_bytes_ += n;
    return run(fields.data(), fields.size(), ZSTD_e_continue) &&
           run(records.data(), records.size(), ZSTD_e_continue);
  }
  bool end() {
    frame_bytes_ = 0;
    return run(nullptr, 0, ZSTD_e_end);
  }

 private:
  bool run(const uint8_t* bytes, size_t n, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{bytes, n, 0};
    for (;;) {
      ZSTD_outBuffer out{buffer_.data(), buffer_.size(), 0};
      size_t left = ZSTD_compressStream2(cctx_.get(), &out, &in, mode);
      if (ZSTD_isError(left) || !write_all(out_, buffer_.data(), out.pos)) return false;
      if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) return true;
    }
  }

  struct FreeCctx {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  int out_;
  size_t frame_bytes_ = 0;  // unpacked bytes in the frame being written
  std::unique_ptr<ZSTD_CCtx, FreeCctx> cctx_{ZSTD_createCCtx()};
  std::vector<uint8_t> buffer_;
};

// A claimed chunk: its place in the file, and the key the packed stream is
// ordered by.
struct Claimed {
  uint64_t base, index, offset;
  uint32_t slot;
  bool operator<(const Claimed& o) const { return base != o.base ? base < o.base : index < o.index; }
};

struct PackingState {
  std::string path, packing;
  Fd in, out;
  enum class Phase { before_header, packing, ended } phase = Phase::before_header;
  bool final_pass = false;  // finish(): no process writes the file any more
  bool unnamed = false;     // `out` is an O_TMPFILE, not yet FILE.packing
  std::string why_not;  // once ended: why the file stays chunked (empty: packed, or it already was)
  uint64_t clock = 0;
  std::unique_ptr<Packer> packer;
  std::vector<uint8_t> chunk = std::vector<uint8_t>(e2::kChunkBytes);
  std::vector<bool> seen;                    // by chunk index: claimed and queued or packed
  std::set<Claimed> waiting;                 // claimed, not packed yet
  std::unordered_map<uint32_t, uint64_t> last_index;  // per thread slot: its newest chunk
  uint64_t packed_chunks = 0;

  // Reads the header and begins FILE.packing; false while the program has
  // not written its header yet (`final`: ends the packing instead).
  bool start(bool final);
  // Queues the chunks claimed since the last look.
  bool scan(uint64_t file_bytes);
  bool pack(const Claimed& c, uint64_t file_bytes);
  void pack_left_chunks();
  PackResult finish();
  // Gives an unnamed `out` its name FILE.packing, for the rename over FILE.
  bool name_packing();
  // Ends the packing: the file stays as it is.
  void end(std::string why) {
    if (phase == Phase::ended) return;
    phase = Phase::ended;
    why_not = std::move(why);
    if (out.fd >= 0 && !unnamed) unlink(packing.c_str());
    out.reset();
  }
};

bool PackingState::start(bool final) {
  if (in.fd < 0) {
    in.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in.fd < 0) {
      if (final) end(fmt::format("cannot read it ({})", strerror(errno)));
      return false;
    }
  }
  struct stat st {};
  if (fstat(in.fd, &st) != 0) {
    end(fmt::format("cannot read it ({})", strerror(errno)));
    return false;
  }
  uint64_t bytes = static_cast<uint64_t>(st.st_size);
  uint8_t head[16] = {};
  size_t head_bytes = std::min<uint64_t>(sizeof head, bytes);
  if (!read_all(in.fd, head, head_bytes, 0)) {
    if (final) end("it is too short to be a recording");
    return false;
  }
  size_t at = 7;
  uint64_t version = 0;
  static constexpr uint8_t kStart[] = {0x7E, 'e', 'm', 't', '!', 0x00, 0x01};  // SYNC at time 0, HEADER
  bool header = head_bytes >= 9 && std::equal(std::begin(kStart), std::end(kStart), head) &&
                read_varint(head, head_bytes, at, version) && read_varint(head, head_bytes, at, clock);
  if (header && version == e2::kVersion3 && at < head_bytes && (head[at] == e2::kLayoutPacked || head[at] == e2::kLayoutPackedFrames)) {
    end("");  // already packed
    return false;
  }
  if (!header || (version != e2::kVersion && version != e2::kVersion3)) {
    // The program may not have written its header yet.
    if (final) end("it does not start as an emt v2 or v3 recording");
    return false;
  }
  // Unnamed until it is complete, so a killed edgemem record leaves nothing
  // beside the chunked file; FILE.packing where the file system has no
  // unnamed files.
  std::string dir = fs::path(path).parent_path().string();
  out.fd = open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
  unnamed = out.fd >= 0;
  if (!unnamed) out.fd = open(packing.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out.fd < 0) {
    end(fmt::format("cannot write {} ({})", packing, strerror(errno)));
    return false;
  }
  uint8_t header_bytes[32];
  std::copy(std::begin(kStart), std::end(kStart), header_bytes);
  size_t n = sizeof kStart;
  n += e2::put_varint(header_bytes + n, e2::kVersion3);
  n += e2::put_varint(header_bytes + n, clock);
  header_bytes[n++] = e2::kLayoutPackedFrames;
  if (!write_all(out.fd, header_bytes, n)) {
    end(fmt::format("cannot write {} ({})", packing, strerror(errno)));
    return false;
  }
  packer = std::make_unique<Packer>(out.fd);
  phase = Phase::packing;
  return true;
}

bool PackingState::scan(uint64_t file_bytes) {
  uint64_t chunks = file_bytes > e2::kHeaderBytes ? (file_bytes - e2::kHeaderBytes + e2::kChunkBytes - 1) / e2::kChunkBytes : 0;
  if (seen.size() < chunks) seen.resize(chunks);
  for (uint64_t index = 0; index < chunks; ++index) {
    if (seen[index]) continue;
    uint64_t offset = e2::kHeaderBytes + index * e2::kChunkBytes;
    uint8_t header[e2::kChunkHeaderBytes] = {};
    size_t size = static_cast<size_t>(std::min<uint64_t>(sizeof header, file_bytes - offset));
    if (!read_all(in.fd, header, size, offset)) {
      // While the program runs its exit may just have shrunk the file to
      // the chunks it claimed (close_trace_file): look again later.
      if (final_pass) end(fmt::format("cannot read {}", path));
      return false;
    }
    if (size < e2::kChunkHeaderBytes || u32_at(header) == 0) continue;  // not claimed (yet)
    seen[index] = true;
    uint32_t slot = u32_at(header + e2::kSlotAt);
    waiting.insert({u64_at(header + e2::kBaseSeqAt), index, offset, slot});
    uint64_t& last = last_index[slot];
    last = std::max(last, index + 1);
  }
  return true;
}

bool PackingState::pack(const Claimed& c, uint64_t file_bytes) {
  size_t size = static_cast<size_t>(std::min<uint64_t>(e2::kChunkBytes, file_bytes - c.offset));
  if (!read_all(in.fd, chunk.data(), size, c.offset)) {
    if (final_pass) end(fmt::format("cannot read {}", path));
    return false;
  }
  uint32_t used = u32_at(chunk.data() + e2::kUsedAt);
  if (!std::equal(std::begin(e2::kChunkMagic), std::end(e2::kChunkMagic), chunk.begin()) ||
      u32_at(chunk.data() + e2::kIndexAt) != c.index || used > e2::kChunkPayloadBytes ||
      e2::kChunkHeaderBytes + used > size) {
    end(fmt::format("the chunk at byte {} is damaged or cut short (left chunked, as written)", c.offset));
    return false;
  }
  uint8_t fields[30];
  size_t f = e2::put_varint(fields, u32_at(chunk.data() + e2::kSlotAt));
  f += e2::put_varint(fields + f, u64_at(chunk.data() + e2::kBaseSeqAt));
  f += e2::put_varint(fields + f, used);
  if (!packer->add_chunk({fields, f}, {chunk.data() + e2::kChunkHeaderBytes, used})) {
    end(fmt::format("cannot write {} ({})", packing, strerror(errno)));
    return false;
  }
  ++packed_chunks;
  return true;
}

bool PackingState::name_packing() {
  if (!unnamed) return true;
  // Through /proc as any user may; AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH
  // before Linux 6.10.
  const std::string self = fmt::format("/proc/self/fd/{}", out.fd);
  auto link = [&] {
    return linkat(AT_FDCWD, self.c_str(), AT_FDCWD, packing.c_str(), AT_SYMLINK_FOLLOW) == 0 ||
           (errno != EEXIST && linkat(out.fd, "", AT_FDCWD, packing.c_str(), AT_EMPTY_PATH) == 0);
  };
  bool named = link();
  if (!named && errno == EEXIST) {
    unlink(packing.c_str());  // left by an edgemem record killed while it renamed
    named = link();
  }
  if (!named) {
    // Neither way allowed: copy it into FILE.packing.
    Fd copy;
    struct stat st {};
    if (fstat(out.fd, &st) != 0) return false;
    copy.fd = open(packing.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (copy.fd < 0) return false;
    loff_t from = 0;
    std::vector<uint8_t> buffer;
    while (from < st.st_size) {
      ssize_t n = copy_file_range(out.fd, &from, copy.fd, nullptr, static_cast<size_t>(st.st_size - from), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {  // not offered here (ENOSYS, EXDEV): by hand
        buffer.resize(1 << 16);
        n = pread(out.fd, buffer.data(), buffer.size(), from);
        if (n <= 0 || !write_all(copy.fd, buffer.data(), static_cast<size_t>(n))) {
          unlink(packing.c_str());
          return false;
        }
        from += n;
      }
    }
    std::swap(out.fd, copy.fd);
  }
  unnamed = false;
  return true;
}

void PackingState::pack_left_chunks() {
  if (phase == Phase::ended || (phase == Phase::before_header && !start(false))) return;
  struct stat st {};
  if (fstat(in.fd, &st) != 0 || !scan(static_cast<uint64_t>(st.st_size))) return;
  // In the final order as far as it is known: a chunk still written (its
  // thread has claimed none after it) holds back those after it.
  while (!waiting.empty()) {
    const Claimed front = *waiting.begin();
    if (last_index[front.slot] <= front.index + 1) break;
    if (!pack(front, static_cast<uint64_t>(st.st_size))) return;
    waiting.erase(waiting.begin());
  }
}

PackResult PackingState::finish() {
  PackResult result;
  auto stays = [&](std::string why) {
    end(std::move(why));
    result.why_not = why_not;
    return result;
  };
  if (phase == Phase::ended) return stays("");
  if (in.fd < 0) {
    in.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in.fd < 0) return stays(fmt::format("cannot read it ({})", strerror(errno)));
  }
  // Every process recording into the file holds a shared lock on it. A
  // child forked just before the program ended holds the parent's lock too
  // until its fork handler has run (then it records into FILE.PID): a
  // moment's grace for that.
  bool locked = flock(in.fd, LOCK_EX | LOCK_NB) == 0;
  for (int tries = 0; !locked && tries < 50; ++tries) {
    usleep(10 * 1000);
    locked = flock(in.fd, LOCK_EX | LOCK_NB) == 0;
  }
  if (!locked) return stays("a process still records into it (left chunked: edgemem analyze reads it as it is)");
  final_pass = true;
  if (phase == Phase::before_header && !start(true)) return stays("");
  struct stat st {};
  if (fstat(in.fd, &st) != 0) return stays(fmt::format("cannot read {}", path));
  result.chunked_bytes = static_cast<uint64_t>(st.st_size);
  if (!scan(result.chunked_bytes)) return stays("");
  result.chunks_packed_while_written = packed_chunks;
  for (const Claimed& c : waiting)
    if (!pack(c, result.chunked_bytes)) return stays("");
  waiting.clear();
  if (!packer->end()) return stays(fmt::format("cannot write {} ({})", packing, strerror(errno)));
  struct stat packed {};
  if (fstat(out.fd, &packed) != 0 || !name_packing() || rename(packing.c_str(), path.c_str()) != 0)
    return stays(fmt::format("cannot replace {} ({})", path, strerror(errno)));
  out.reset();  // renamed: nothing to remove
  end("");
  result.packed = true;
  result.packed_bytes = static_cast<uint64_t>(packed.st_size);
  result.chunks = packed_chunks;
  return result;
}

}  // namespace trace_packing

struct RecordingPacker::State : trace_packing::PackingState {};

RecordingPacker::RecordingPacker(std::string path) : s_(std::make_unique<State>()) {
  s_->path = std::move(path);
  s_->packing = s_->path + ".packing";
}

RecordingPacker::~RecordingPacker() { s_->end(""); }

void RecordingPacker::pack_left_chunks() { s_->pack_left_chunks(); }

PackResult RecordingPacker::finish() { return s_->finish(); }

PackResult pack_recording(const std::string& path) { return RecordingPacker(path).finish(); }

}  // namespace edgemem
