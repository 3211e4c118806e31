#include "textlog_reference_decoder.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "ingest/textlog_decoder.h"
#include "ingest/textlog_escape.h"
#include "ingest/textlog_pool_kind.h"

namespace edgemem::test {
namespace {

constexpr size_t kMaxLine = 1 << 20;  // longer lines are skipped, not buffered
constexpr std::string_view kTag = "[MEM][";

bool parse_number(std::string_view text, uint64_t& out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

// Splits "key=value key=value word" one token at a time.
struct Tokens {
  std::string_view rest;
  bool next(std::string_view& key, std::string_view& value) {
    size_t i = 0;
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
    rest.remove_prefix(i);
    if (rest.empty()) return false;
    size_t end = 0;
    while (end < rest.size() && rest[end] != ' ' && rest[end] != '\t') ++end;
    std::string_view token = rest.substr(0, end);
    rest.remove_prefix(end);
    size_t eq = token.find('=');
    if (eq == std::string_view::npos) {
      key = {};
      value = token;
    } else {
      key = token.substr(0, eq);
      value = token.substr(eq + 1);
    }
    return true;
  }
};

}  // namespace

ReferenceTextLogDecoder::ReferenceTextLogDecoder(TraceContext& context, EventSink& sink)
    : context_(context), sink_(sink) {}

void ReferenceTextLogDecoder::feed(std::span<const uint8_t> bytes) {
  const char* data = reinterpret_cast<const char*>(bytes.data());
  size_t n = bytes.size();
  uint64_t base = stats_.bytes;
  stats_.bytes += n;
  size_t pos = 0;
  while (pos < n) {
    const void* nl = std::memchr(data + pos, '\n', n - pos);
    size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) : n;
    if (!nl) {  // keep the unterminated tail for the next chunk
      if (discarding_) return;
      if (partial_.empty()) partial_offset_ = base + pos;
      if (partial_.size() + (end - pos) > kMaxLine) {
        discarding_ = true;
        partial_.clear();
        return;
      }
      partial_.append(data + pos, end - pos);
      return;
    }
    if (discarding_ || partial_.size() + (end - pos) > kMaxLine) {
      // Too long to be a record, however the reads cut it.
      discarding_ = false;
      partial_.clear();
      ++line_no_;
      ++stats_.skipped_lines;
    } else if (!partial_.empty()) {
      partial_.append(data + pos, end - pos);
      line(partial_, partial_offset_);
      partial_.clear();
    } else {
      line(std::string_view(data + pos, end - pos), base + pos);
    }
    pos = end + 1;
  }
}

void ReferenceTextLogDecoder::finish() {
  // A line with no newline was cut off mid-write; its numbers cannot be trusted.
  if (!partial_.empty() || discarding_) {
    stats_.truncated_bytes += partial_.size();
    partial_.clear();
    discarding_ = false;
  }
}

uint64_t ReferenceTextLogDecoder::unwrap(uint64_t raw) {
  // DWT CYCCNT is 32 bits and wraps every few seconds at MCU clocks; a
  // stamp that goes back otherwise starts a clock continuing from the last time.
  const uint64_t last_raw = last_time_ - epoch_;
  if (raw + epoch_ < last_time_ && raw <= 0xffffffffull && last_raw <= 0xffffffffull && last_raw - raw > 0x80000000ull)
    epoch_ += 0x100000000ull;
  if (raw + epoch_ < last_time_) {
    if (!after_boot_ && stats_.time_went_back++ == 0) stats_.time_went_back_line = line_no_;
    epoch_ = last_time_ - raw;
  }
  after_boot_ = false;
  last_time_ = raw + epoch_;
  return last_time_;
}

void ReferenceTextLogDecoder::line(std::string_view text, uint64_t offset) {
  ++line_no_;
  // What a console leaves at a line's end: CRs, blanks, colour codes (ESC [ n;m m).
  for (bool trimmed = true; trimmed && !text.empty();) {
    trimmed = false;
    if (text.back() == '\r' || text.back() == ' ' || text.back() == '\t') {
      text.remove_suffix(1);
      trimmed = true;
      continue;
    }
    size_t esc = text.rfind('\x1b');
    if (esc == std::string_view::npos || esc + 2 >= text.size() || text[esc + 1] != '[') break;
    std::string_view params = text.substr(esc + 2, text.size() - esc - 3);
    const char final_byte = text.back();
    if (final_byte >= '@' && final_byte <= '~' && params.find_first_not_of("0123456789;") == std::string_view::npos) {
      text = text.substr(0, esc);
      trimmed = true;
    }
  }
  size_t tag = text.find(kTag);
  if (tag == std::string_view::npos) {
    if (!damaged_record_tag(text)) return plain_line(text);
    ++stats_.malformed_lines;
    stats_.note_problem(offset, line_no_, "a [MEM] record whose tag has a damaged byte");
    return;
  }
  std::string_view rest = text.substr(tag + kTag.size());
  size_t close = rest.find(']');
  uint64_t time = 0;
  if (close == std::string_view::npos || !parse_number(rest.substr(0, close), time)) {
    ++stats_.malformed_lines;
    stats_.note_problem(offset, line_no_, "expected [MEM][<cycles>] with a number in the second bracket");
    return;
  }
  std::string_view body = rest.substr(close + 1);
  size_t verb = 0;
  while (verb < body.size() && (body[verb] == ' ' || body[verb] == '\t')) ++verb;
  if (body.compare(verb, 4, "BOOT") == 0 && (body.size() == verb + 4 || body[verb + 4] == ' ' || body[verb + 4] == '\t'))
    return boot(time);
  // The line's own stamp is the device clock unless the transport (ITM
  // timestamps) supplies one.
  time = has_external_time_ ? external_time_ : unwrap(time);
  context_.time_base = TimeBase::cycles;
  if (!record(body, time, offset)) ++stats_.malformed_lines;
}

// A BOOT after anything else: the device started again; pools reset, time
// continues without going back.
void ReferenceTextLogDecoder::boot(uint64_t raw) {
  context_.time_base = TimeBase::cycles;
  const bool first = !records_seen_ && context_.pools.size() == 0;
  if (!has_external_time_) {
    epoch_ = std::max(epoch_, last_time_ - std::min(raw, last_time_));
    last_time_ = raw + epoch_;
    after_boot_ = true;
  }
  if (first) return;
  ++stats_.device_restarts;
  ++context_.device_restarts;
  for (size_t i = 0; i < context_.pools.size(); ++i) {
    Event e;
    e.kind = EventKind::arena_reset;
    e.pool = static_cast<PoolId>(i);
    e.time = has_external_time_ ? external_time_ : last_time_;
    sink_.on_event(e);
  }
}

void ReferenceTextLogDecoder::plain_line(std::string_view text) {
  bool marker = marks_from_plain_lines_ && !text.empty() && text.size() <= 64 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 0x7f; });
  if (!marker) {
    ++stats_.skipped_lines;
    return;
  }
  std::optional<SiteId> site = context_.sites.find(text);
  if (!site) {
    if (markers_ >= kMaxMarkers) {
      ++stats_.markers_dropped;
      ++stats_.skipped_lines;
      return;
    }
    ++markers_;
    site = context_.sites.intern(text);
  }
  Event e;
  e.kind = EventKind::mark;
  e.time = external_time_;
  e.site = *site;
  sink_.on_event(e);
  ++stats_.events;
}

bool ReferenceTextLogDecoder::record(std::string_view body, uint64_t time, uint64_t offset) {
  Tokens tokens{body};
  std::string_view key, verb;
  if (!tokens.next(key, verb) || !key.empty()) {
    stats_.note_problem(offset, line_no_, "expected a verb (ALLOC, FREE, ALLOC_FAIL, INFER, ...) after [MEM][<cycles>]");
    return false;
  }
  Event e;
  e.time = time;
  bool has_size = false, has_addr = false, addr_is_offset = true, has_old = false;
  std::string_view pool_name, word, word2, pool_kind, shares;
  std::string pool_storage, shares_storage;
  uint64_t pool_base = 0;
  std::string_view value;
  while (tokens.next(key, value)) {
    uint64_t number = 0;
    if (key.empty()) {
      (word.empty() ? word : word2) = value;
      continue;
    }
    if (key == "site") { e.site = context_.sites.intern(textlog_unescape(value)); continue; }
    if (key == "pool" || key == "name") { pool_storage = textlog_unescape(value); pool_name = pool_storage; continue; }
    if (key == "kind") { pool_kind = value; continue; }
    if (key == "shares") { shares_storage = textlog_unescape(value); shares = shares_storage; continue; }
    // Unknown keys are tolerated, whatever their value, so newer firmware can add fields.
    static constexpr std::string_view kNumeric[] = {"size", "offset", "addr", "ptr", "old", "align",
                                                    "thread", "tid", "base", "value"};
    if (std::find(std::begin(kNumeric), std::end(kNumeric), key) == std::end(kNumeric)) continue;
    if (!parse_number(value, number)) {
      stats_.note_problem(offset, line_no_, "expected a number after '" + std::string(key) + "='");
      return false;
    }
    if (key == "size") { e.size = number; has_size = true; }
    else if (key == "offset" || key == "addr" || key == "ptr") {
      const bool by_offset = key == "offset";
      if (has_addr && addr_is_offset != by_offset) {
        stats_.note_problem(offset, line_no_, "expected offset= (arena) or addr= (heap), not both");
        return false;
      }
      e.address = number;
      has_addr = true;
      addr_is_offset = by_offset;
    }
    else if (key == "old") { e.old_address = number; has_old = true; }
    else if (key == "align") { e.align = static_cast<uint32_t>(number); }
    else if (key == "thread" || key == "tid") { e.thread = static_cast<uint32_t>(number); }
    else if (key == "base") { pool_base = number; }
    else if (key == "value") { e.size = number; has_size = true; }
  }

  auto need = [&](bool ok, const char* what) {
    if (!ok) stats_.note_problem(offset, line_no_, std::string("expected ") + what + " in " + std::string(verb) + " record");
    return ok;
  };
  auto pool_for = [&](bool offset_addressed) -> PoolId {
    const PoolKind kind = offset_addressed ? PoolKind::arena : PoolKind::heap;
    const size_t known = context_.pools.size();
    PoolId id;
    if (!pool_name.empty()) {
      id = context_.pools.intern(pool_name, kind);
    } else {
      PoolId& chosen = offset_addressed ? arena_pool_ : heap_pool_;
      bool& have = offset_addressed ? have_arena_ : have_heap_;
      if (!have) {
        chosen = context_.pools.intern(offset_addressed ? "arena" : "heap", kind);
        have = true;
      }
      id = chosen;
    }
    settle_textlog_pool_kind(context_.pools, id, known, has_addr, kind);
    return id;
  };

  if (verb == "ALLOC") {
    if (!need(has_size && has_addr, "size= and offset= (or addr=)")) return false;
    e.kind = EventKind::alloc;
  } else if (verb == "FREE") {
    if (!need(has_addr, "offset= (or addr=)")) return false;
    e.kind = EventKind::free;
  } else if (verb == "REALLOC") {
    if (!need(has_size && has_addr && has_old, "old=, size= and offset= (or addr=)")) return false;
    e.kind = EventKind::realloc;
  } else if (verb == "ALLOC_FAIL") {
    if (!need(has_size, "size=")) return false;
    e.kind = EventKind::alloc_failed;
  } else if (verb == "INFER") {
    if (word == "begin") e.kind = EventKind::inference_begin;
    else if (word == "end") e.kind = EventKind::inference_end;
    else return need(false, "'begin' or 'end'");
    uint64_t index = 0;
    e.size = parse_number(word2, index) ? index : 0;
  } else if (verb == "RESET") {
    e.kind = EventKind::arena_reset;
  } else if (verb == "GUARD") {
    if (word == "ok") e.size = 0;
    else if (word == "corrupt") e.size = 1;
    else return need(false, "'ok' or 'corrupt'");
    e.kind = EventKind::guard_check;
  } else if (verb == "MARK") {
    e.kind = EventKind::mark;
    e.site = context_.sites.intern(textlog_unescape(word));
  } else if (verb == "COUNTER") {
    if (!need(has_size && !pool_name.empty(), "name= and value=")) return false;
    e.kind = EventKind::counter;
    e.site = context_.sites.intern(pool_name);
    pool_name = {};
  } else if (verb == "POOL") {
    if (!need(!pool_name.empty() && has_size, "name= and size=")) return false;
    PoolInfo info;
    info.name = std::string(pool_name);
    info.kind = pool_kind == "heap" ? PoolKind::heap : PoolKind::arena;
    info.base = pool_base;
    info.size = e.size;
    if (!shares.empty()) info.shares = context_.pools.intern(shares, PoolKind::arena);
    arena_declared_ = arena_declared_ || info.name == "arena";
    context_.pools.declare(info);
    return true;
  } else if (verb == "DROP") {
    uint64_t lost = 0;
    if (!need(parse_number(word, lost), "the number of lines lost")) return false;
    stats_.dropped_records += lost;
    return true;
  } else {
    stats_.note_problem(offset, line_no_,
                        "unknown [MEM] verb '" + std::string(verb) +
                            "' (expected ALLOC, FREE, REALLOC, ALLOC_FAIL, INFER, RESET, GUARD, MARK, COUNTER, POOL, "
                            "DROP or BOOT)");
    return false;
  }
  // Records without an address (ALLOC_FAIL, GUARD) belong to the pool style
  // the log has been using; a RESET without pool= to the arena, when the log
  // has one (after a heap record it emptied the heap: its leak went unseen).
  const bool resets_arena = e.kind == EventKind::arena_reset && (offset_seen_ || arena_declared_);
  bool by_offset = has_addr ? addr_is_offset : resets_arena || last_by_offset_;
  offset_seen_ = offset_seen_ || (has_addr && addr_is_offset && (pool_name.empty() || pool_name == "arena"));
  if (has_addr) last_by_offset_ = addr_is_offset;
  if (!pool_name.empty() || e.kind == EventKind::alloc || e.kind == EventKind::free ||
      e.kind == EventKind::realloc || e.kind == EventKind::alloc_failed ||
      e.kind == EventKind::arena_reset || e.kind == EventKind::guard_check)
    e.pool = pool_for(by_offset);
  sink_.on_event(e);
  ++stats_.events;
  records_seen_ = records_seen_ || (e.kind != EventKind::mark && e.kind != EventKind::counter);
  return true;
}

}  // namespace edgemem::test
