#include "record/trace_packer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <zstd.h>

#include "edgemem/emt_v2.h"

namespace edgemem {
namespace {

namespace e2 = emt2;

// zstd's level 3 window (2 MiB) spans many chunks of one thread; higher
// levels gain little on these records and cost the parent's time.
constexpr int kLevel = 3;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
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
  bool add(const uint8_t* bytes, size_t n) { return run(bytes, n, ZSTD_e_continue); }
  bool end() { return run(nullptr, 0, ZSTD_e_end); }

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
  std::unique_ptr<ZSTD_CCtx, FreeCctx> cctx_{ZSTD_createCCtx()};
  std::vector<uint8_t> buffer_;
};

}  // namespace

PackResult pack_recording(const std::string& path) {
  PackResult result;
  Fd in;
  in.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (in.fd < 0 || fstat(in.fd, &st) != 0) {
    result.why_not = fmt::format("cannot read it ({})", strerror(errno));
    return result;
  }
  result.chunked_bytes = static_cast<uint64_t>(st.st_size);
  // Every process recording into the file holds a shared lock on it. A
  // child forked just before the program ended holds the parent's lock too
  // until its fork handler has run (then it records into FILE.PID): a
  // moment's grace for that.
  bool locked = flock(in.fd, LOCK_EX | LOCK_NB) == 0;
  for (int tries = 0; !locked && tries < 50; ++tries) {
    usleep(10 * 1000);
    locked = flock(in.fd, LOCK_EX | LOCK_NB) == 0;
  }
  if (!locked) {
    result.why_not = "a process still records into it (left chunked: edgemem analyze reads it as it is)";
    return result;
  }
  uint8_t head[16] = {};
  size_t head_bytes = std::min<uint64_t>(sizeof head, result.chunked_bytes);
  if (!read_all(in.fd, head, head_bytes, 0)) {
    result.why_not = "it is too short to be a recording";
    return result;
  }
  size_t at = 7;
  uint64_t version = 0, clock = 0;
  static constexpr uint8_t kStart[] = {0x7E, 'e', 'm', 't', '!', 0x00, 0x01};  // SYNC at time 0, HEADER
  bool header = head_bytes >= 9 && std::equal(std::begin(kStart), std::end(kStart), head) &&
                read_varint(head, head_bytes, at, version) && read_varint(head, head_bytes, at, clock);
  if (header && version == e2::kVersion3 && at < head_bytes && head[at] == e2::kLayoutPacked) return result;
  if (!header || (version != e2::kVersion && version != e2::kVersion3)) {
    result.why_not = "it does not start as an emt v2 or v3 recording";
    return result;
  }

  std::string packing = path + ".packing";
  Fd out;
  out.fd = open(packing.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out.fd < 0) {
    result.why_not = fmt::format("cannot write {} ({})", packing, strerror(errno));
    return result;
  }
  auto fail = [&](std::string why) {
    unlink(packing.c_str());
    result.why_not = std::move(why);
    return result;
  };
  uint8_t header_bytes[32];
  std::copy(std::begin(kStart), std::end(kStart), header_bytes);
  size_t n = sizeof kStart;
  n += e2::put_varint(header_bytes + n, e2::kVersion3);
  n += e2::put_varint(header_bytes + n, clock);
  header_bytes[n++] = e2::kLayoutPacked;
  if (!write_all(out.fd, header_bytes, n)) return fail(fmt::format("cannot write {} ({})", packing, strerror(errno)));

  // Chunks go in the order of their base sequence numbers (file order among
  // equals, so each thread's stay in order): the reader merges threads by
  // sequence number and holds what waits for an earlier one, and a chunk
  // written after the others (the inference marks `record --inference-fn`
  // appends, inference_marks.h) would otherwise hold back every record
  // after its first.
  struct Claimed {
    uint64_t base, offset, index;
  };
  std::vector<Claimed> claimed;
  uint64_t index = 0;
  for (uint64_t offset = e2::kHeaderBytes; offset < result.chunked_bytes; offset += e2::kChunkBytes, ++index) {
    uint8_t header[e2::kChunkHeaderBytes] = {};
    size_t size = static_cast<size_t>(std::min<uint64_t>(sizeof header, result.chunked_bytes - offset));
    if (!read_all(in.fd, header, size, offset)) return fail(fmt::format("cannot read {}", path));
    if (size < e2::kChunkHeaderBytes || u32_at(header) == 0) continue;  // never claimed
    claimed.push_back({u64_at(header + e2::kBaseSeqAt), offset, index});
  }
  std::stable_sort(claimed.begin(), claimed.end(), [](const Claimed& a, const Claimed& b) { return a.base < b.base; });

  Packer packer(out.fd);
  std::vector<uint8_t> chunk(e2::kChunkBytes);
  for (const Claimed& c : claimed) {
    uint64_t offset = c.offset;
    size_t size = static_cast<size_t>(std::min<uint64_t>(e2::kChunkBytes, result.chunked_bytes - offset));
    if (!read_all(in.fd, chunk.data(), size, offset)) return fail(fmt::format("cannot read {}", path));
    uint32_t used = u32_at(chunk.data() + e2::kUsedAt);
    if (!std::equal(std::begin(e2::kChunkMagic), std::end(e2::kChunkMagic), chunk.begin()) ||
        u32_at(chunk.data() + e2::kIndexAt) != c.index || used > e2::kChunkPayloadBytes ||
        e2::kChunkHeaderBytes + used > size)
      return fail(fmt::format("the chunk at byte {} is damaged or cut short (left chunked, as written)", offset));
    uint8_t fields[30];
    size_t f = e2::put_varint(fields, u32_at(chunk.data() + e2::kSlotAt));
    f += e2::put_varint(fields + f, u64_at(chunk.data() + e2::kBaseSeqAt));
    f += e2::put_varint(fields + f, used);
    if (!packer.add(fields, f) || !packer.add(chunk.data() + e2::kChunkHeaderBytes, used))
      return fail(fmt::format("cannot write {} ({})", packing, strerror(errno)));
  }
  if (!packer.end()) return fail(fmt::format("cannot write {} ({})", packing, strerror(errno)));
  struct stat packed {};
  if (fstat(out.fd, &packed) != 0 || rename(packing.c_str(), path.c_str()) != 0)
    return fail(fmt::format("cannot replace {} ({})", path, strerror(errno)));
  result.packed = true;
  result.packed_bytes = static_cast<uint64_t>(packed.st_size);
  return result;
}

}  // namespace edgemem
