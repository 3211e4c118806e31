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
  // Whether `path` can be written; false after printing the one-line error.
  // The file is opened (truncated) at the first event, so a trace that
  // cannot be read leaves an earlier file there as it was.
  bool open(const std::string& path);
  ~TextLogFile();
  void on_event(const Event& event, const TraceContext& context);
  // Writes what is buffered and closes; false after printing why. Says on
  // stderr where the log went and what the text form could not hold.
  bool close();

 private:
  bool start();  // opens the file; false (error_ set) when it cannot
  void flush();

  std::string path_;
  std::FILE* file_ = nullptr;
  bool to_stdout_ = false;  // "-" or another name of standard output: written there, not opened
  std::string buffer_;
  uint64_t written_ = 0;
  int error_ = 0;  // errno of the first failed open or write
  TextLogWriter writer_;
};

}  // namespace edgemem::cli
