// The decoded events written back as the seed's [MEM] text log
// (docs/formats/textlog.md), sites as their (symbolised) call stacks: a
// trace any [MEM] reader, grep or a short script can read, and that
// `edgemem analyze` reads back to the same leaks, peaks and inferences.
// Unlike the other exports it needs the events, not the result, so it is
// fed as they are decoded and its size grows with the trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgemem/decoder.h"

namespace edgemem {

class TextLogWriter {
 public:
  // Appends the line(s) for `event` to `out`: a POOL line first when the
  // pool's declared geometry is new or changed. Names come from `context`.
  void write(const Event& event, const TraceContext& context, std::string& out);
  // What the trace lost mid-way since the last DROP line the writer wrote,
  // from the decoder's counts so far: a DROP line before the record at
  // `time`, so the log read back has lost data too (its fragmentation and
  // leak gates unjudged as the trace's were). Records lost count one each
  // (a device's drops, damaged emt records, malformed lines, ITM overflow
  // packets, impossible events, records applied out of order); corrupt
  // bytes, which say no record count, one for each time they grew.
  void losses(const DecodeStats& stats, uint64_t time, std::string& out);
  // After the last event, with the whole trace's counts: its last losses,
  // and a cut last line where the trace was cut off at its end.
  void end(const DecodeStats& stats, std::string& out);
  // emt SUMMARY records (a pool's usage without its blocks) have no text
  // form; they are counted here, not written.
  uint64_t summaries_left_out() const { return summaries_left_out_; }

 private:
  // `time`: of the event it comes before (a pool declared mid-trace must not send the log's time back to 0).
  void declare(PoolId pool, uint64_t time, const TraceContext& context, std::string& out);

  struct Declared {
    bool written = false;
    PoolKind kind = PoolKind::heap;
    uint64_t base = 0, size = 0;
  };
  std::vector<Declared> declared_;  // by PoolId: the geometry last written
  size_t pools_checked_ = 0;        // pools of the table looked at so far
  uint64_t summaries_left_out_ = 0;
  // A device restart is a BOOT line: the resets of every pool that stand
  // for it in the events are not written (a RESET per pool read back as no
  // restart at all, and the fits ran across both boots).
  uint64_t restarts_written_ = 0;
  size_t restart_resets_left_ = 0;
  uint64_t last_time_ = 0;
  uint64_t records_lost_ = 0, corrupt_bytes_ = 0;  // as of the last DROP line
};

}  // namespace edgemem
