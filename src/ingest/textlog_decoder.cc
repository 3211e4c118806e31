#include "textlog_decoder.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "device_restart.h"
#include "textlog_escape.h"
#include "textlog_pool_kind.h"

namespace edgemem {
namespace {

constexpr size_t kMaxLine = 1 << 20;  // longer lines are skipped, not buffered
constexpr std::string_view kTag = "[MEM][";

// The line parser reads each byte once, in place: no token is cut out
// before it is read, a number is read where it stands and ends at the
// first byte that is not a digit. It accepts exactly what the plain
// tokenizer with std::from_chars did (tests/ingest/textlog_parser_fuzz_test.cc
// holds that one as the oracle): tokens split at blanks, a token's key ends
// at its first '=', and a number is the whole value - decimal, or
// hexadecimal after 0x / 0X, without sign, at most 2^64 - 1.

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// A name token as written, its %XX escapes undone (only when it has any: the
// usual name is read in place).
std::string_view unescaped(std::string_view token, std::string& storage) {
  if (token.find('%') == std::string_view::npos) return token;
  storage = textlog_unescape(token);
  return storage;
}

// Word at a time: eight bytes are loaded wherever eight are readable
// (`limit`, the end of the caller's buffer, may lie past the end of the
// line), so a token or a number costs one branch, not one per byte, and
// what lies past the line's `end` is cut off, never used.
constexpr uint64_t rep(uint8_t byte) { return 0x0101010101010101ull * byte; }

uint64_t load8(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

unsigned first_marked(uint64_t marks) { return static_cast<unsigned>(__builtin_ctzll(marks)) >> 3; }

// Top bit of each byte of `y` whose high nibble is set (`y` has no low-nibble bits).
uint64_t high_nibble_set(uint64_t y) { return ((y >> 1) + rep(0x78)) & rep(0x80); }

uint64_t not_decimal(uint64_t x) {
  return high_nibble_set(((x & rep(0xF0)) ^ rep(0x30)) | (((x & rep(0x0F)) + rep(0x06)) & rep(0xF0)));
}

uint64_t not_hex(uint64_t x) {
  uint64_t lower = x | rep(0x20);
  uint64_t nibble = lower & rep(0x0F);  // a-f: 1..6
  uint64_t not_letter = ((lower & rep(0xF0)) ^ rep(0x60)) | ((nibble + rep(0x09)) & rep(0xF0)) |
                        (~(nibble + rep(0x0F)) & rep(0x10));
  return not_decimal(x) & high_nibble_set(not_letter);
}

// Top bit of each byte equal to `c`, exactly.
uint64_t equal_bytes(uint64_t x, uint8_t c) {
  uint64_t y = x ^ rep(c);
  return ~(((y & rep(0x7F)) + rep(0x7F)) | y | rep(0x7F));
}

// The value of the first n (1..8) digits of x, minus '0' bytewise (first digit lowest).
uint64_t decimal_value(uint64_t digits, unsigned n) {
  digits <<= 8 * (8 - n);  // leading zeros
  digits = digits * 10 + (digits >> 8);
  return static_cast<uint32_t>((((digits & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
                                (((digits >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32);
}

uint64_t hex_value(uint64_t x, unsigned n) {
  uint64_t v = (x & rep(0x0F)) + ((x >> 6) & rep(0x01)) * 9;
  v <<= 8 * (8 - n);
  v = ((v << 4) | (v >> 8)) & 0x00FF00FF00FF00FFull;
  v = ((v << 8) | (v >> 16)) & 0x0000FFFF0000FFFFull;
  return ((v << 16) | (v >> 32)) & 0xFFFFFFFFull;
}

constexpr uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// Reads the number starting at `p`; returns where its digits end, or null
// if there are none or it does not fit 64 bits.
const char* scan_number(const char* p, const char* end, const char* limit, uint64_t& out) {
  bool hex = end - p > 1 && p[0] == '0' && (p[1] | 0x20) == 'x';
  if (hex) p += 2;
  const char* start = p;
  uint64_t v = 0;
  while (limit - p >= 8) {
    uint64_t x = load8(p);
    uint64_t stop = hex ? not_hex(x) : not_decimal(x);
    auto n = static_cast<unsigned>(std::min<ptrdiff_t>(stop ? first_marked(stop) : 8, end - p));
    if (n == 0) break;
    if (n < 8 && p == start) {  // most numbers: all in one word, nothing to carry or overflow
      out = hex ? hex_value(x, n) : decimal_value(x - rep('0'), n);
      return p + n;
    }
    if (hex) {
      if (v >> (64 - 4 * n)) return nullptr;
      v = v << (4 * n) | hex_value(x, n);
    } else if (__builtin_mul_overflow(v, kPow10[n], &v) ||
               __builtin_add_overflow(v, decimal_value(x - rep('0'), n), &v)) {
      return nullptr;
    }
    p += n;
    // An address of exactly eight hex digits ends here: no second word.
    if (n < 8 || p == end || (hex ? hex_digit(*p) : static_cast<unsigned>(*p - '0')) >= (hex ? 16u : 10u)) break;
  }
  // The last bytes of the buffer, one at a time.
  if (hex) {
    for (unsigned d; p < end && (d = hex_digit(*p)) < 16; ++p) {
      if (v >> 60) return nullptr;
      v = v << 4 | d;
    }
  } else {
    for (unsigned d; p < end && (d = static_cast<unsigned>(*p - '0')) < 10; ++p)
      if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) return nullptr;
  }
  if (p == start) return nullptr;
  out = v;
  return p;
}

bool parse_number(std::string_view text, uint64_t& out) {
  const char* end = text.data() + text.size();
  return scan_number(text.data(), end, end, out) == end;
}

const char* skip_blanks(const char* p, const char* end) {
  while (p < end && is_blank(*p)) ++p;
  return p;
}

// The first blank at or after `p` (or '=' too, for a key), or `end`.
const char* token_stop(const char* p, const char* end, const char* limit, bool at_equals) {
  while (limit - p >= 8) {
    uint64_t x = load8(p);
    uint64_t stop = equal_bytes(x, ' ') | equal_bytes(x, '\t') | (at_equals ? equal_bytes(x, '=') : 0);
    if (stop) return std::min(p + first_marked(stop), end);
    if (end - p <= 8) return end;
    p += 8;
  }
  while (p < end && !is_blank(*p) && !(at_equals && *p == '=')) ++p;
  return p;
}

// `text` has exactly the length of `word` (the caller switched on it).
template <size_t N>
bool is(std::string_view text, const char (&word)[N]) {
  return std::memcmp(text.data(), word, N - 1) == 0;
}

// Unknown keys are tolerated (still numbers) so newer firmware can add fields.
enum class Key : uint8_t { other, site, pool, kind, shares, size, offset, addr, old, align, thread, base, value };

Key classify_key(std::string_view key) {
  switch (key.size()) {
    case 3:
      if (is(key, "old")) return Key::old;
      if (is(key, "ptr")) return Key::addr;
      if (is(key, "tid")) return Key::thread;
      break;
    case 4:
      if (is(key, "size")) return Key::size;
      if (is(key, "addr")) return Key::addr;
      if (is(key, "site")) return Key::site;
      if (is(key, "pool") || is(key, "name")) return Key::pool;
      if (is(key, "kind")) return Key::kind;
      if (is(key, "base")) return Key::base;
      break;
    case 5:
      if (is(key, "align")) return Key::align;
      if (is(key, "value")) return Key::value;
      break;
    case 6:
      if (is(key, "offset")) return Key::offset;
      if (is(key, "thread")) return Key::thread;
      if (is(key, "shares")) return Key::shares;
      break;
  }
  return Key::other;
}

enum class Verb : uint8_t { unknown, alloc, free, realloc, alloc_fail, infer, reset, guard, mark, counter, pool, drop };

Verb classify_verb(std::string_view verb) {
  switch (verb.size()) {
    case 4:
      if (is(verb, "FREE")) return Verb::free;
      if (is(verb, "MARK")) return Verb::mark;
      if (is(verb, "POOL")) return Verb::pool;
      if (is(verb, "DROP")) return Verb::drop;
      break;
    case 5:
      if (is(verb, "ALLOC")) return Verb::alloc;
      if (is(verb, "INFER")) return Verb::infer;
      if (is(verb, "RESET")) return Verb::reset;
      if (is(verb, "GUARD")) return Verb::guard;
      break;
    case 7:
      if (is(verb, "REALLOC")) return Verb::realloc;
      if (is(verb, "COUNTER")) return Verb::counter;
      break;
    case 10:
      if (is(verb, "ALLOC_FAIL")) return Verb::alloc_fail;
      break;
  }
  return Verb::unknown;
}

uint64_t text_hash(std::string_view text) {
  uint64_t h = text.size() * 0x9E3779B97F4A7C15ull;
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    h = (h ^ word) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  for (size_t shift = 0; i < text.size(); ++i, shift += 8) tail |= uint64_t{static_cast<uint8_t>(text[i])} << shift;
  h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

}  // namespace

TextLogDecoder::TextLogDecoder(TraceContext& context, EventSink& sink)
    : context_(context), sink_(sink) {}

void TextLogDecoder::feed(std::span<const uint8_t> bytes) {
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
      readable_end_ = partial_.data() + partial_.size();
      line(partial_, partial_offset_);
      partial_.clear();
    } else {
      readable_end_ = data + n;
      line(std::string_view(data + pos, end - pos), base + pos);
    }
    pos = end + 1;
  }
}

void TextLogDecoder::finish() {
  // A line with no newline was cut off mid-write; its numbers cannot be trusted.
  if (!partial_.empty() || discarding_) {
    stats_.truncated_bytes += partial_.size();
    partial_.clear();
    discarding_ = false;
  }
}

void TextLogDecoder::drop_partial() {
  if (partial_.empty() || discarding_) return;
  ++line_no_;
  if (partial_.find(kTag) != std::string::npos) {
    ++stats_.malformed_lines;
    stats_.note_problem(partial_offset_, line_no_, "a [MEM] record that lost bytes in transit (ITM overflow)");
  } else {
    ++stats_.skipped_lines;
  }
  partial_.clear();
}

uint64_t TextLogDecoder::unwrap(uint64_t raw) {
  // DWT CYCCNT is 32 bits and wraps every few seconds at MCU clocks.
  const uint64_t last_raw = last_time_ - epoch_;
  if (raw + epoch_ < last_time_ && raw <= 0xffffffffull && last_raw <= 0xffffffffull && last_raw - raw > 0x80000000ull)
    epoch_ += 0x100000000ull;
  if (raw + epoch_ < last_time_) {
    // Not a wrap: time cannot go back, and the exports draw by time. This
    // stamp starts a clock that continues from the last time.
    if (!clock_restarted_ && stats_.time_went_back++ == 0) stats_.time_went_back_line = line_no_;
    epoch_ = last_time_ - raw;
  }
  clock_restarted_ = false;
  last_time_ = raw + epoch_;
  return last_time_;
}

// The device library writes "BOOT" once per boot (em_init). After records,
// the device started again, as a second emt HEADER says: its RAM was set
// up anew, so every pool is reset, and its clock began again: time goes on
// from where the previous boot left it, without counting as going back.
void TextLogDecoder::boot(uint64_t raw) {
  context_.time_base = TimeBase::cycles;
  // The first BOOT too: a banner's stamps before it were of another clock.
  if (!has_external_time_) {
    if (raw + epoch_ < last_time_) epoch_ = last_time_ - raw;
    last_time_ = raw + epoch_;
    clock_restarted_ = true;
  }
  if (!records_seen_ && context_.pools.size() == 0) return;
  device_restarted(context_, stats_, sink_, has_external_time_ ? external_time_ : last_time_);
}

namespace {

// A line's end as a console leaves it: carriage returns (a Windows terminal
// logs "\r\r\n"), blanks, and terminal colour codes (ESP-IDF's log macros
// close every line with ESC[0m) belong to no record's last value.
std::string_view without_trailing_noise(std::string_view text) {
  while (!text.empty()) {
    const char c = text.back();
    if (c == '\r' || c == ' ' || c == '\t') {
      text.remove_suffix(1);
      continue;
    }
    // An ANSI control sequence: ESC [ digits and ';' and a final byte.
    if (c < '@' || c > '~') return text;
    size_t i = text.size() - 1;
    while (i > 0 && (std::isdigit(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == ';')) --i;
    if (i < 2 || text[i - 1] != '[' || text[i - 2] != '\x1b') return text;
    text.remove_suffix(text.size() - (i - 2));
  }
  return text;
}

}  // namespace

bool damaged_record_tag(std::string_view line) {
  if (line.size() < kTag.size() + 2) return false;
  int wrong = 0;
  for (size_t i = 0; i < kTag.size(); ++i) wrong += line[i] != kTag[i];
  size_t at = kTag.size();
  while (at < line.size() && line[at] >= '0' && line[at] <= '9') ++at;
  return wrong == 1 && at > kTag.size() && at < line.size() && line[at] == ']';
}

void TextLogDecoder::line(std::string_view text, uint64_t offset) {
  ++line_no_;
  text = without_trailing_noise(text);
  size_t tag = text.starts_with(kTag) ? 0 : text.find(kTag);
  if (tag == std::string_view::npos) {
    if (!damaged_record_tag(text)) return plain_line(text);
    ++stats_.malformed_lines;
    stats_.note_problem(offset, line_no_, "a [MEM] record whose tag has a damaged byte");
    return;
  }
  const char* end = text.data() + text.size();
  uint64_t time = 0;
  const char* close = scan_number(text.data() + tag + kTag.size(), end, readable_end_, time);
  if (!close || close == end || *close != ']') {
    ++stats_.malformed_lines;
    stats_.note_problem(offset, line_no_, "expected [MEM][<cycles>] with a number in the second bracket");
    return;
  }
  std::string_view body(close + 1, static_cast<size_t>(end - close - 1));
  // BOOT, then the end or a blank (fields a newer library may add are ignored).
  // Tested by its first letter before anything else: this runs on every line.
  size_t verb = 0;
  while (verb < body.size() && is_blank(body[verb])) ++verb;
  if (verb + 4 <= body.size() && body[verb] == 'B' && body.compare(verb, 4, "BOOT") == 0 &&
      (body.size() == verb + 4 || is_blank(body[verb + 4])))
    return boot(time);
  // The line's own stamp is the device clock unless the transport (ITM
  // timestamps) supplies one.
  time = has_external_time_ ? external_time_ : unwrap(time);
  context_.time_base = TimeBase::cycles;
  if (!record({close + 1, static_cast<size_t>(end - close - 1)}, time, offset)) ++stats_.malformed_lines;
}

SiteId TextLogDecoder::site(std::string_view text) {
  if (text.empty()) return kUnknownSite;
  uint64_t h = text_hash(text);
  auto tag = static_cast<uint32_t>(h >> 32);
  size_t slot = h & (site_cache_.size() - 1);
  for (;; slot = (slot + 1) & (site_cache_.size() - 1)) {
    auto [cached_tag, cached] = site_cache_[slot];
    if (cached == kUnknownSite) break;
    if (cached_tag == tag && context_.sites.name(cached) == text) return cached;
  }
  SiteId id = context_.sites.intern(text);
  // The overflow site stands for many texts: never cached, so the table
  // counts every dropped name. A full cache grows, or at its cap starts over.
  if (context_.sites.name(id) != text) return id;
  if (++sites_cached_ > site_cache_.size() / 2) {
    renew_site_cache();
    ++sites_cached_;
    slot = cache_slot(h);
  }
  site_cache_[slot] = {tag, id};
  return id;
}

void TextLogDecoder::renew_site_cache() {
  constexpr size_t kMaxCache = size_t{1} << 17;
  std::vector<std::pair<uint32_t, SiteId>> old(site_cache_.size());
  old.swap(site_cache_);
  sites_cached_ = 0;
  if (old.size() >= kMaxCache) return;  // at its cap: starts over
  site_cache_.resize(old.size() * 2);
  for (auto [old_tag, cached] : old)
    if (cached != kUnknownSite) {
      site_cache_[cache_slot(text_hash(context_.sites.name(cached)))] = {old_tag, cached};
      ++sites_cached_;
    }
}

size_t TextLogDecoder::cache_slot(uint64_t hash) const {
  size_t slot = hash & (site_cache_.size() - 1);
  while (site_cache_[slot].second != kUnknownSite) slot = (slot + 1) & (site_cache_.size() - 1);
  return slot;
}

PoolId TextLogDecoder::named_pool(std::string_view name, PoolKind kind) {
  if (have_named_pool_ && context_.pools.at(last_named_pool_).name == name) return last_named_pool_;
  PoolId id = context_.pools.intern(name, kind);
  if (context_.pools.at(id).name == name) {
    last_named_pool_ = id;
    have_named_pool_ = true;
  }
  return id;
}

void TextLogDecoder::plain_line(std::string_view text) {
  bool marker = marks_from_plain_lines_ && !text.empty() && text.size() <= 64 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 0x7f; });
  if (!marker) {
    ++stats_.skipped_lines;
    return;
  }
  std::optional<SiteId> id = context_.sites.find(text);
  if (!id) {
    if (markers_ >= kMaxMarkers) {
      ++stats_.markers_dropped;
      ++stats_.skipped_lines;
      return;
    }
    ++markers_;
    id = context_.sites.intern(text);
  }
  Event e;
  e.kind = EventKind::mark;
  e.time = external_time_;
  e.site = *id;
  sink_.on_event(e);
  ++stats_.events;
  ++plain_marks_;
}

bool TextLogDecoder::record(std::string_view body, uint64_t time, uint64_t offset) {
  const char* end = body.data() + body.size();
  const char* limit = readable_end_;
  const char* p = skip_blanks(body.data(), end);
  // The verb: a token with no key ("=ALLOC" has an empty one, as the plain
  // tokenizer split it).
  const char* stop = p == end ? end : token_stop(p, end, limit, true);
  bool keyed = stop < end && *stop == '=' && stop != p;
  if (p == end || keyed) {
    stats_.note_problem(offset, line_no_, "expected a verb (ALLOC, FREE, ALLOC_FAIL, INFER, ...) after [MEM][<cycles>]");
    return false;
  }
  if (stop < end && *stop == '=') stop = token_stop(++p, end, limit, false);
  std::string_view verb(p, static_cast<size_t>(stop - p));
  p = stop;
  Event e;
  e.time = time;
  bool has_size = false, has_addr = false, addr_is_offset = true, has_old = false;
  std::string_view pool_name, word, word2, pool_kind, shares;
  std::string pool_storage, word_storage, shares_storage, site_storage;
  uint64_t pool_base = 0;
  bool has_base = false;
  for (;;) {
    p = skip_blanks(p, end);
    if (p == end) break;
    const char* start = p;
    p = token_stop(p, end, limit, true);
    if (p == end || *p != '=' || p == start) {  // a word; "=word" is one too
      if (p < end && *p == '=') start = ++p;
      p = token_stop(p, end, limit, false);
      (word.empty() ? word : word2) = std::string_view(start, static_cast<size_t>(p - start));
      continue;
    }
    std::string_view key(start, static_cast<size_t>(p - start));
    const char* value = ++p;
    Key which = classify_key(key);
    if (which == Key::site || which == Key::pool || which == Key::kind || which == Key::shares) {
      p = token_stop(p, end, limit, false);
      std::string_view text(value, static_cast<size_t>(p - value));
      if (which == Key::site) e.site = site(unescaped(text, site_storage));
      else if (which == Key::pool) pool_name = unescaped(text, pool_storage);
      else if (which == Key::shares) shares = unescaped(text, shares_storage);
      else pool_kind = text;
      continue;
    }
    if (which == Key::other) {  // newer firmware's fields, whatever their value (task=main)
      p = token_stop(p, end, limit, false);
      continue;
    }
    uint64_t number = 0;
    p = scan_number(value, end, limit, number);
    if (!p || (p < end && !is_blank(*p))) {
      stats_.note_problem(offset, line_no_, "expected a number after '" + std::string(key) + "='");
      return false;
    }
    switch (which) {
      case Key::size: case Key::value: e.size = number; has_size = true; break;
      case Key::offset: case Key::addr:
        // One place per record: an arena offset or a heap address, not both.
        if (has_addr && addr_is_offset != (which == Key::offset)) {
          stats_.note_problem(offset, line_no_, "expected offset= (arena) or addr= (heap), not both");
          return false;
        }
        e.address = number;
        has_addr = true;
        addr_is_offset = which == Key::offset;
        break;
      case Key::old: e.old_address = number; has_old = true; break;
      case Key::align: e.align = static_cast<uint32_t>(number); break;
      case Key::thread: e.thread = static_cast<uint32_t>(number); break;
      case Key::base: pool_base = number, has_base = true; break;
      default: break;  // unknown keys: newer firmware may add fields
    }
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
      id = named_pool(pool_name, kind);
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

  switch (classify_verb(verb)) {
    case Verb::alloc:
      if (!need(has_size && has_addr, "size= and offset= (or addr=)")) return false;
      e.kind = EventKind::alloc;
      break;
    case Verb::free:
      if (!need(has_addr, "offset= (or addr=)")) return false;
      e.kind = EventKind::free;
      break;
    case Verb::realloc:
      if (!need(has_size && has_addr && has_old, "old=, size= and offset= (or addr=)")) return false;
      e.kind = EventKind::realloc;
      break;
    case Verb::alloc_fail:
      if (!need(has_size, "size=")) return false;
      e.kind = EventKind::alloc_failed;
      break;
    case Verb::infer: {
      if (word == "begin") e.kind = EventKind::inference_begin;
      else if (word == "end") e.kind = EventKind::inference_end;
      else return need(false, "'begin' or 'end'");
      uint64_t index = 0;
      e.size = parse_number(word2, index) ? index : 0;
      break;
    }
    case Verb::reset: e.kind = EventKind::arena_reset; break;
    case Verb::guard:
      if (word == "ok") e.size = 0;
      else if (word == "corrupt") e.size = 1;
      else return need(false, "'ok' or 'corrupt'");
      e.kind = EventKind::guard_check;
      break;
    case Verb::mark:
      e.kind = EventKind::mark;
      e.site = site(unescaped(word, word_storage));
      break;
    case Verb::counter:
      if (!need(has_size && !pool_name.empty(), "name= and value=")) return false;
      e.kind = EventKind::counter;
      e.site = site(pool_name);
      pool_name = {};
      break;
    case Verb::pool: {
      if (!need(!pool_name.empty() && has_size, "name= and size=")) return false;
      PoolInfo info;
      info.name = std::string(pool_name);
      info.kind = pool_kind == "heap" ? PoolKind::heap : PoolKind::arena;
      info.base = pool_base;
      info.base_known = has_base;
      // Before any addressed record, what the log declared is the best
      // guess for records without one (an ALLOC_FAIL first went to a made-up
      // arena beside the one heap the log declared).
      if (!addressed_seen_) last_by_offset_ = info.kind == PoolKind::arena;
      arena_declared_ = arena_declared_ || info.name == "arena";
      info.size = e.size;
      if (!shares.empty()) info.shares = context_.pools.intern(shares, PoolKind::arena, false);
      context_.pools.declare(info);
      return true;
    }
    case Verb::drop: {  // lines the device could not send since the DROP before
      uint64_t lost = 0;
      if (!need(!word.empty() && parse_number(word, lost), "the number of lines lost")) return false;
      stats_.dropped_records += lost;
      return true;
    }
    case Verb::unknown:
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
  if (has_addr) last_by_offset_ = addr_is_offset, addressed_seen_ = true;
  if (!pool_name.empty() || e.kind == EventKind::alloc || e.kind == EventKind::free ||
      e.kind == EventKind::realloc || e.kind == EventKind::alloc_failed ||
      e.kind == EventKind::arena_reset || e.kind == EventKind::guard_check)
    e.pool = pool_for(by_offset);
  sink_.on_event(e);
  ++stats_.events;
  records_seen_ = records_seen_ || (e.kind != EventKind::mark && e.kind != EventKind::counter);
  return true;
}

}  // namespace edgemem
