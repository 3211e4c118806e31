#include "record/inference_marks.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "edgemem/emt_v2.h"

namespace edgemem {

namespace e2 = edgemem::emt2;

std::optional<ProbeMarks> read_inference_marks(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("{}: cannot read the inference marks ({})", path, strerror(errno));
    return std::nullopt;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The probe writes whole lines; only the last one can be cut short.
  if (auto last = text.rfind('\n'); last != std::string::npos) text.resize(last + 1);
  else text.clear();
  ProbeMarks result;
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    std::istringstream fields(line);
    ProbeMark m;
    fields >> m.kind;
    bool ok = true;
    if (m.kind == 'X' || m.kind == 'S') {
      int value = 0;
      ok = static_cast<bool>(fields >> value);
      (m.kind == 'X' ? result.exit_code : result.signal) = value;
    } else if (m.kind == 'T' || m.kind == 'B' || m.kind == 'E') {
      ok = static_cast<bool>(fields >> m.tid >> m.seq) && m.seq > 0;
      if (ok && m.kind == 'T') {
        std::getline(fields >> std::ws, m.name);
      } else if (ok) {
        ok = static_cast<bool>(fields >> m.index);
        result.inferences += m.kind == 'B';
      }
    } else {
      ok = false;
    }
    if (!ok) {
      error = fmt::format("{}: line {}: expected 'T|B|E TID SEQ INDEX|NAME' or 'X CODE' or 'S SIGNAL', found '{}'", path, n,
                          line.substr(0, 80));
      return std::nullopt;
    }
    if (m.kind != 'X' && m.kind != 'S') result.marks.push_back(std::move(m));
  }
  return result;
}

namespace {

struct ChunkBuilder {
  uint32_t slot = 0;
  uint64_t base_seq = 0, last_seq = 0;
  std::vector<uint8_t> records;
};

// A record as the preload writes it: tag, dseq, fields, optional text.
std::vector<uint8_t> encode(uint8_t tag, uint64_t dseq, uint64_t field, const std::string* text) {
  std::vector<uint8_t> out(1 + 3 * 10 + (text ? text->size() : 0));
  size_t n = 0;
  out[n++] = tag;
  n += e2::put_varint(out.data() + n, dseq);
  n += e2::put_varint(out.data() + n, field);
  if (text) {
    n += e2::put_varint(out.data() + n, text->size());
    std::memcpy(out.data() + n, text->data(), text->size());
    n += text->size();
  }
  out.resize(n);
  return out;
}

}  // namespace

bool append_inference_marks(const std::string& path, const ProbeMarks& marks, std::string& error) {
  if (marks.marks.empty()) return true;
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    error = fmt::format("{}: cannot open the recording to add the inference marks ({})", path, strerror(errno));
    return false;
  }
  // SYNC (6 bytes), HEADER (tag, version 3, clock 0), then the layout byte.
  std::array<uint8_t, 10> head{};
  off_t size = lseek(fd, 0, SEEK_END);
  bool chunked = pread(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()) && head[0] == 0x7E &&
                 head[6] == 0x01 && (head[7] == e2::kVersion || head[7] == e2::kVersion3) && head[8] == 0 && head[9] == e2::kLayoutChunked &&
                 size >= static_cast<off_t>(e2::kHeaderBytes);
  if (!chunked) {
    close(fd);
    error = fmt::format("{}: expected a chunked emt v2 or v3 recording (SYNC, HEADER 2 or 3, layout 00) to add the inference "
                        "marks to", path);
    return false;
  }
  // Claimed chunks' slots; the file may end in never-claimed (zero) chunks.
  uint64_t chunks = (static_cast<uint64_t>(size) - e2::kHeaderBytes + e2::kChunkBytes - 1) / e2::kChunkBytes;
  uint32_t last_slot = 0;
  for (uint64_t k = 0; k < chunks; ++k) {
    uint8_t header[e2::kChunkHeaderBytes] = {};
    if (pread(fd, header, sizeof header, static_cast<off_t>(e2::kHeaderBytes + k * e2::kChunkBytes)) < 8) continue;
    if (std::memcmp(header, e2::kChunkMagic, sizeof e2::kChunkMagic) != 0) continue;
    uint32_t slot = 0;
    std::memcpy(&slot, header + e2::kSlotAt, sizeof slot);
    last_slot = std::max(last_slot, slot);
  }

  bool ok = true;
  auto flush = [&](ChunkBuilder& c) {
    std::vector<uint8_t> chunk(e2::kChunkBytes, 0);
    e2::put_u32(chunk.data() + e2::kSlotAt, c.slot);
    e2::put_u32(chunk.data() + e2::kIndexAt, static_cast<uint32_t>(chunks));
    e2::put_u32(chunk.data() + e2::kUsedAt, static_cast<uint32_t>(c.records.size()));
    e2::put_u64(chunk.data() + e2::kBaseSeqAt, c.base_seq);
    std::memcpy(chunk.data() + e2::kMagicAt, e2::kChunkMagic, sizeof e2::kChunkMagic);
    std::memcpy(chunk.data() + e2::kChunkHeaderBytes, c.records.data(), c.records.size());
    off_t at = static_cast<off_t>(e2::kHeaderBytes + chunks * e2::kChunkBytes);
    ok = ok && pwrite(fd, chunk.data(), chunk.size(), at) == static_cast<ssize_t>(chunk.size());
    ++chunks;
  };
  std::map<uint32_t, uint32_t> slots;  // tid -> its slot
  std::map<uint32_t, ChunkBuilder> open_chunks;
  for (const ProbeMark& m : marks.marks) {
    auto [slot, fresh] = slots.try_emplace(m.tid, last_slot + 1);
    if (fresh) ++last_slot;
    auto [it, started] = open_chunks.try_emplace(m.tid);
    ChunkBuilder& c = it->second;
    if (started) c = {slot->second, m.seq - 1, m.seq - 1, {}};
    uint8_t tag = m.kind == 'T' ? e2::kThread : m.kind == 'B' ? e2::kInferBegin : e2::kInferEnd;
    uint64_t tid = m.tid;
    std::vector<uint8_t> r = m.kind == 'T' ? encode(tag, m.seq - c.last_seq, tid, &m.name)
                                           : encode(tag, m.seq - c.last_seq, m.index, nullptr);
    if (m.seq <= c.last_seq) {
      error = fmt::format("inference marks of thread {} out of order (sequence {} after {})", m.tid, m.seq, c.last_seq);
      close(fd);
      return false;
    }
    if (c.records.size() + r.size() > e2::kChunkPayloadBytes) {
      flush(c);
      c = {slot->second, c.last_seq, c.last_seq, {}};
      r = m.kind == 'T' ? encode(tag, m.seq - c.last_seq, tid, &m.name) : encode(tag, m.seq - c.last_seq, m.index, nullptr);
    }
    c.records.insert(c.records.end(), r.begin(), r.end());
    c.last_seq = m.seq;
  }
  for (auto& [tid, c] : open_chunks) flush(c);
  int closed = close(fd);
  if (!ok || closed != 0) {
    error = fmt::format("{}: cannot write the inference marks ({})", path, strerror(errno));
    return false;
  }
  return true;
}

}  // namespace edgemem
