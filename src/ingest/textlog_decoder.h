// Decoder for the "[MEM]" printf log of seed 001, plus edgemem's extensions
// (docs/formats/textlog.md). Unrelated lines are counted and skipped.
#pragma once

#include <array>
#include <string>
#include <utility>

#include "edgemem/decoder.h"

namespace edgemem {

// A line that starts as a record whose tag lost one byte on the wire
// ("[MEM\[34626] INFER end 33", "[MEN][12] ALLOC ..."): one of "[MEM]["'s
// six bytes wrong, then the stamp's digits and its ']'. Skipped as other
// output, it dropped an inference end without a word of data lost.
bool damaged_record_tag(std::string_view line);

class TextLogDecoder final : public Decoder {
 public:
  TextLogDecoder(TraceContext& context, EventSink& sink);
  void feed(std::span<const uint8_t> bytes) override;
  void finish() override;
  void cut() override { finish(); }
  std::string_view format_name() const override { return "log"; }
  // The line being read lost bytes in transit (an ITM overflow): dropped,
  // a malformed record if it was one.
  void drop_partial();

  // Distinct marker texts kept from plain lines; a console that prints a
  // counter would otherwise intern one name per line.
  static constexpr size_t kMaxMarkers = 1024;

  // Plain lines that are one short word ("On", "layer3_begin") become `mark`
  // events: ITM port 0 carries markers this way. Other plain lines are
  // console output, counted as skipped and never interned.
  void set_marks_from_plain_lines(bool on) { marks_from_plain_lines_ = on; }
  // [MEM] records decoded so far (events less the marks from plain lines).
  uint64_t records() const { return stats_.events - plain_marks_; }
  // Time for lines without a [cycles] stamp (ITM supplies its own clock).
  void set_external_time(uint64_t time) {
    external_time_ = time;
    has_external_time_ = true;
  }

 private:
  void line(std::string_view text, uint64_t offset);
  void plain_line(std::string_view text);
  bool record(std::string_view body, uint64_t time, uint64_t offset);
  uint64_t unwrap(uint64_t raw);
  void boot(uint64_t raw);
  // SiteTable::intern through a small cache: a log repeats a few hundred
  // site texts millions of times, and looking each up in the table was
  // about 8 % of the text decoder's time.
  SiteId site(std::string_view text);
  PoolId named_pool(std::string_view name, PoolKind kind);

  TraceContext& context_;
  EventSink& sink_;
  std::string partial_;       // bytes of a line not yet terminated
  // End of the buffer the current line lies in, during feed(): the parser
  // may read (never use) bytes past the line's end up to here.
  const char* readable_end_ = nullptr;
  uint64_t partial_offset_ = 0;
  bool discarding_ = false;   // inside an over-long line
  uint64_t line_no_ = 0;
  uint64_t last_time_ = 0;
  uint64_t epoch_ = 0;        // added when a 32-bit cycle counter wraps
  // The first stamp after a BOOT line: the new boot's clock, which may be
  // below the BOOT line's own (stamped before the clock began again).
  bool clock_restarted_ = false;
  uint64_t external_time_ = 0;
  bool has_external_time_ = false;
  bool marks_from_plain_lines_ = false;
  size_t markers_ = 0;  // distinct marker texts interned
  uint64_t plain_marks_ = 0;
  PoolId arena_pool_ = 0, heap_pool_ = 0;
  bool have_arena_ = false, have_heap_ = false;
  // The log has pool "arena" (where offset= records without pool= go): a
  // record with offset= went there, or it was declared.
  bool arena_declared_ = false, offset_seen_ = false;
  // A record other than MARK or COUNTER came: a BOOT after it is a restart
  // (a banner MARK before the first BOOT once made an empty boot 1).
  bool records_seen_ = false;
  bool last_by_offset_ = true;
  bool addressed_seen_ = false;  // a record with addr= or offset= came: its style wins over POOL lines
  // Open addressing by a hash of the text: (hash tag, id), id 0 = empty.
  // An entry is used only while the table still gives that id that name,
  // so the cache can never disagree with SiteTable::intern.
  // It doubles while half full, up to 131,072 entries (1 MiB: a trace of
  // 50,000 sites spent a fifth of its time in the table's string hash when
  // it held 2,048), then starts over when full.
  std::vector<std::pair<uint32_t, SiteId>> site_cache_ = std::vector<std::pair<uint32_t, SiteId>>(4096);
  size_t sites_cached_ = 0;
  size_t cache_slot(uint64_t hash) const;  // the first empty slot of the probe sequence
  void renew_site_cache();                  // doubled, its entries kept; or emptied at its cap
  PoolId last_named_pool_ = 0;
  bool have_named_pool_ = false;
};

}  // namespace edgemem
