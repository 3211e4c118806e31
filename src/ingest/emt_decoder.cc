#include "emt_decoder.h"

#include <cstring>

#include <fmt/format.h>

namespace edgemem {
namespace {

constexpr uint8_t kSync[] = {0x7E, 'e', 'm', 't', '!'};
constexpr size_t kMaxRecord = 4096;  // longer than any record the device writes

enum Tag : uint8_t {
  kHeader = 0x01, kPool = 0x02, kString = 0x03, kDrop = 0x04,
  kAlloc = 0x10, kFree = 0x11, kRealloc = 0x12, kAllocFail = 0x13,
  kInferBegin = 0x14, kInferEnd = 0x15, kReset = 0x16, kGuard = 0x17,
  kMark = 0x18, kCounter = 0x19, kAlloc32 = 0x20, kFree32 = 0x21, kSyncTag = 0x7E,
};

// Reads fields from one record; `ok` turns false on running out of bytes.
struct Reader {
  const uint8_t* p;
  size_t n, i = 0;
  bool ok = true;
  uint64_t varint() {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (i >= n) {
        ok = false;
        return 0;
      }
      uint8_t b = p[i++];
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;  // over-long varint: not emt
    return 0;
  }
  uint64_t u32() {  // little-endian
    if (n - i < 4 || i > n) {
      ok = false;
      i = n;
      return 0;
    }
    uint64_t v = uint64_t{p[i]} | uint64_t{p[i + 1]} << 8 | uint64_t{p[i + 2]} << 16 | uint64_t{p[i + 3]} << 24;
    i += 4;
    return v;
  }
  uint8_t byte() {
    if (i >= n) {
      ok = false;
      return 0;
    }
    return p[i++];
  }
  std::string_view text() {
    uint64_t len = varint();
    if (!ok || len > n - i) {
      ok = false;
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p + i), len);
    i += len;
    return s;
  }
};

}  // namespace

EmtDecoder::EmtDecoder(TraceContext& context, EventSink& sink) : context_(context), sink_(sink) {
  context_.time_base = TimeBase::cycles;
}

SiteId EmtDecoder::site(uint64_t value) {
  if (value == 0) return kUnknownSite;
  if (value & 1) return context_.sites.intern(fmt::format("0x{:08x}", value >> 1));
  uint64_t packed = value >> 1, file = packed >> 20, line = packed & 0xFFFFF;
  auto it = files_.find(file);
  std::string_view name = it == files_.end() ? std::string_view("?") : std::string_view(it->second);
  return context_.sites.intern(fmt::format("{}:{}", name, line));
}

EmtDecoder::Parse EmtDecoder::record(const uint8_t* p, size_t n, size_t& used) {
  Reader r{p, n};
  uint8_t tag = r.byte();
  Event e;
  auto timed = [&] {
    time_ += r.varint();
    e.time = time_;
  };
  auto pool_id = [&](uint64_t id) {
    auto it = pools_.find(id);
    if (it == pools_.end()) it = pools_.emplace(id, context_.pools.intern(fmt::format("pool{}", id), PoolKind::heap)).first;
    e.pool = it->second;
  };
  auto pool = [&] { pool_id(r.varint()); };

  switch (tag) {
    case kSyncTag: {
      if (n < sizeof kSync) return Parse::need_more;
      if (std::memcmp(p, kSync, sizeof kSync) != 0) return Parse::bad;
      r.i = sizeof kSync;
      uint64_t now = r.varint();
      if (!r.ok) break;
      // The device clock is 32 bits; keep time monotonic across wraps.
      if (now < last_sync_low_ && last_sync_low_ - now > 0x80000000u) epoch_ += 0x100000000ull;
      last_sync_low_ = static_cast<uint32_t>(now);
      time_ = epoch_ + now;
      ++stats_.syncs;
      used = r.i;
      return Parse::ok;
    }
    case kHeader: {
      uint64_t version = r.varint();
      tick_hz_ = r.varint();
      if (r.ok && version != 1) {
        stats_.note_problem(consumed_ + start_, 0, fmt::format("emt version {} is newer than this edgemem reads (1)", version));
        return Parse::bad;
      }
      break;
    }
    case kPool: {
      uint64_t id = r.varint();
      uint8_t kind = r.byte();
      PoolInfo info;
      info.base = r.varint();
      info.size = r.varint();
      r.varint();  // alignment: informational
      info.name = std::string(r.text());
      info.kind = kind == 1 ? PoolKind::arena : PoolKind::heap;
      uint64_t shares = r.varint();  // device id + 1 of the pool sharing these bytes
      if (shares) {
        auto it = pools_.find(shares - 1);
        if (it != pools_.end()) info.shares = it->second;
      }
      if (r.ok) pools_[id] = context_.pools.declare(info);
      break;
    }
    case kString: {
      uint64_t id = r.varint();
      std::string_view text = r.text();
      if (r.ok) files_[id] = std::string(text);
      break;
    }
    case kDrop:
      device_drops_ += r.varint();
      break;
    case kAlloc:
      timed();
      pool();
      e.kind = EventKind::alloc;
      e.address = r.varint();
      e.size = r.varint();
      e.align = static_cast<uint32_t>(r.varint());
      e.site = site(r.varint());
      break;
    case kAlloc32:
      timed();
      pool_id(r.byte());
      e.kind = EventKind::alloc;
      e.align = r.byte();  // 255 = 255 or more
      e.address = r.u32();
      e.size = r.u32();
      e.site = site(r.u32());
      break;
    case kFree32:
      timed();
      pool_id(r.byte());
      e.kind = EventKind::free;
      e.address = r.u32();
      e.site = site(r.u32());
      break;
    case kFree:
      timed();
      pool();
      e.kind = EventKind::free;
      e.address = r.varint();
      e.site = site(r.varint());
      break;
    case kRealloc:
      timed();
      pool();
      e.kind = EventKind::realloc;
      e.old_address = r.varint();
      e.address = r.varint();
      e.size = r.varint();
      e.site = site(r.varint());
      break;
    case kAllocFail:
      timed();
      pool();
      e.kind = EventKind::alloc_failed;
      e.size = r.varint();
      e.align = static_cast<uint32_t>(r.varint());
      e.site = site(r.varint());
      break;
    case kInferBegin:
    case kInferEnd:
      timed();
      e.kind = tag == kInferBegin ? EventKind::inference_begin : EventKind::inference_end;
      e.size = r.varint();
      break;
    case kReset:
      timed();
      pool();
      e.kind = EventKind::arena_reset;
      break;
    case kGuard:
      timed();
      pool();
      e.kind = EventKind::guard_check;
      e.size = r.byte() != 0;
      break;
    case kMark:
    case kCounter: {
      timed();
      std::string_view text = r.text();
      e.kind = tag == kMark ? EventKind::mark : EventKind::counter;
      if (tag == kCounter) e.size = r.varint();
      if (r.ok) e.site = context_.sites.intern(text);
      break;
    }
    default:
      stats_.note_problem(consumed_ + start_, 0, fmt::format("expected an emt record tag, found 0x{:02X}", tag));
      return Parse::bad;
  }
  if (!r.ok) return n >= kMaxRecord ? Parse::bad : Parse::need_more;
  used = r.i;
  if ((tag >= kAlloc && tag <= kCounter) || tag == kAlloc32 || tag == kFree32) {
    sink_.on_event(e);
    ++stats_.events;
  }
  return Parse::ok;
}

bool EmtDecoder::hunt() {
  // Skip at least one byte, then look for the next SYNC marker.
  size_t from = start_ + 1;
  for (size_t i = from; i + 1 <= buffer_.size(); ++i) {
    size_t avail = std::min(sizeof kSync, buffer_.size() - i);
    if (std::memcmp(buffer_.data() + i, kSync, avail) == 0) {
      stats_.corrupt_bytes += i - start_;
      start_ = i;
      return avail == sizeof kSync;
    }
  }
  stats_.corrupt_bytes += buffer_.size() - start_;
  start_ = buffer_.size();
  return false;
}

void EmtDecoder::feed(std::span<const uint8_t> bytes) {
  stats_.bytes += bytes.size();
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  for (;;) {
    if (start_ >= buffer_.size()) break;
    if (!synced_) {
      // A stream opens with SYNC; anything before it is not ours.
      if (buffer_[start_] != kSyncTag || buffer_.size() - start_ < sizeof kSync ||
          std::memcmp(buffer_.data() + start_, kSync, sizeof kSync) != 0) {
        if (buffer_.size() - start_ < sizeof kSync &&
            std::memcmp(buffer_.data() + start_, kSync, buffer_.size() - start_) == 0)
          break;  // a SYNC may be arriving
        if (!stats_.first_problem)
          stats_.note_problem(consumed_ + start_, 0, "expected an emt SYNC record (7E 65 6D 74 21)");
        if (!hunt()) break;
        continue;
      }
      synced_ = true;
    }
    size_t used = 0;
    Parse result = record(buffer_.data() + start_, buffer_.size() - start_, used);
    if (result == Parse::need_more) break;
    if (result == Parse::bad) {
      synced_ = false;
      if (!hunt()) break;
      continue;
    }
    start_ += used;
  }
  // Keep only the unparsed tail.
  if (start_ > 0) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<long>(start_));
    consumed_ += start_;
    start_ = 0;
  }
}

void EmtDecoder::finish() {
  stats_.truncated_bytes += buffer_.size() - start_;
  buffer_.clear();
  start_ = 0;
  stats_.dropped_records = device_drops_;
}

}  // namespace edgemem
