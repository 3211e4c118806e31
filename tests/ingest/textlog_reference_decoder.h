// The text-log decoder as it was before the hand-specialised line parser
// (edgemem 2026-12, issue #13): kept in the tests only, as the oracle the
// fast parser is fuzzed against (textlog_parser_fuzz_test.cc). Its
// behaviour, not its speed, is the contract.
#pragma once

#include <string>

#include "edgemem/decoder.h"

namespace edgemem::test {

class ReferenceTextLogDecoder final : public Decoder {
 public:
  ReferenceTextLogDecoder(TraceContext& context, EventSink& sink);
  void feed(std::span<const uint8_t> bytes) override;
  void finish() override;
  std::string_view format_name() const override { return "log"; }
  static constexpr size_t kMaxMarkers = 1024;
  void set_marks_from_plain_lines(bool on) { marks_from_plain_lines_ = on; }
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

  TraceContext& context_;
  EventSink& sink_;
  std::string partial_;
  uint64_t partial_offset_ = 0;
  bool discarding_ = false;
  uint64_t line_no_ = 0;
  uint64_t last_time_ = 0;
  uint64_t epoch_ = 0;
  bool after_boot_ = false;  // the next stamp is the new boot's clock: going back there is no fault
  uint64_t external_time_ = 0;
  bool has_external_time_ = false;
  bool marks_from_plain_lines_ = false;
  size_t markers_ = 0;
  PoolId arena_pool_ = 0, heap_pool_ = 0;
  bool have_arena_ = false, have_heap_ = false;
  // The log has pool "arena" (where offset= records without pool= go): a
  // record with offset= went there, or it was declared.
  bool arena_declared_ = false, offset_seen_ = false;
  // A record other than MARK or COUNTER came: a BOOT after it is a restart
  // (a banner MARK before the first BOOT once made an empty boot 1).
  bool records_seen_ = false;
  bool last_by_offset_ = true;
};

}  // namespace edgemem::test
