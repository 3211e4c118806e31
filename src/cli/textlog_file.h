// `analyze --textlog FILE`: the decoded events written as a [MEM] text log
// while the trace is read (docs/exports.md), so memory stays bounded
// however long the trace.
#pragma once

#include <cstdio>
#include <string>

#include "edgemem/decoder.h"
#include "report/textlog_export.h"
#include "watch/atomic_file.h"

namespace edgemem::cli {

class TextLogFile {
 public:
  // Whether `path` can be written; false after printing the one-line error.
  // Written to a temporary from the first event and put in place by
  // close(), so a trace that cannot be read or a failed write leaves an
  // earlier file there as it was.
  bool open(const std::string& path);
  void on_event(const Event& event, const TraceContext& context, const Decoder& decoder);
  // Writes what is buffered, with what `stats` (the whole trace's) say was
  // lost since, and closes; false after printing why. Says on stderr where
  // the log went and what the text form could not hold.
  bool close(const DecodeStats& stats);

 private:
  bool start();  // opens the file; false (error_ set) when it cannot
  void flush();

  std::string path_;
  watch::AtomicFileWriter file_;
  bool started_ = false;
  bool to_stdout_ = false;  // "-" or another name of standard output: written there, not opened
  std::string buffer_;
  uint64_t written_ = 0;
  std::string error_;  // the first failed open or write
  TextLogWriter writer_;
  static constexpr uint64_t kLossesEvery = 1024;
  uint64_t events_ = 0;
  bool stats_cut_ = false;  // the trace is a recording cut off: said in close()
};

}  // namespace edgemem::cli
