// `analyze --textlog FILE`: the decoded events written as a [MEM] text log
// while the trace is read (docs/exports.md), so memory stays bounded
// however long the trace.
#pragma once

#include <cstdio>
#include <string>

#include "edgemem/decoder.h"
#include "report/textlog_export.h"

namespace edgemem::cli {

class TextLogFile {
 public:
  // Opens a file beside `path` that close() renames to it, so a run that
  // reads nothing leaves an earlier file at `path` as it was (a device or
  // FIFO is written directly); false after printing the one-line error.
  bool open(const std::string& path);
  ~TextLogFile();
  void on_event(const Event& event, const TraceContext& context);
  // Writes what is buffered and closes; false after printing why. Says on
  // stderr where the log went and what the text form could not hold.
  bool close();
  // No trace was read: the file is removed unwritten.
  void discard();

 private:
  void flush();

  std::string path_;
  std::string writing_;  // the file written: path_ or a temporary beside it
  std::FILE* file_ = nullptr;
  std::string buffer_;
  uint64_t written_ = 0;
  int error_ = 0;  // errno of the first failed write
  TextLogWriter writer_;
};

}  // namespace edgemem::cli
