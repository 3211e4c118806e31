#include "cli/textlog_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "cli/report_file.h"
#include "report/units.h"

namespace edgemem::cli {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

void cannot_write(const std::string& path, int error) {
  fmt::print(stderr, "edgemem: {}: cannot write: {} (pass --textlog PATH to write it elsewhere)\n", path,
             std::strerror(error));
}

}  // namespace

bool TextLogFile::open(const std::string& path) {
  path_ = path;
  to_stdout_ = is_stdout(path);
  if (to_stdout_) return true;
  // Checked now, so a log that cannot be written is said before the trace is read.
  const bool exists = ::access(path.c_str(), F_OK) == 0;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (exists ? ::access(path.c_str(), W_OK) != 0 : ::access(dir.empty() ? "." : dir.c_str(), W_OK) != 0) {
    cannot_write(path, errno);
    return false;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    cannot_write(path, EISDIR);
    return false;
  }
  return true;
}

bool TextLogFile::start() {
  if (started_ || !error_.empty()) return error_.empty();
  started_ = true;
  // Through a temporary and a rename as every export (docs/exports.md): a
  // write that fails (a full disk) leaves the old log, not a cut one.
  if (!to_stdout_) error_ = file_.open(path_);
  return error_.empty();
}

void TextLogFile::on_event(const Event& event, const TraceContext& context, const Decoder& decoder) {
  // What the trace lost, asked every so many events (progress() copies the
  // decoder's counts): a DROP line lands within that many records of the loss.
  if (++events_ % kLossesEvery == 0) writer_.losses(decoder.progress(), event.time, buffer_);
  writer_.write(event, context, buffer_);
  if (buffer_.size() >= kFlushBytes) flush();
}

void TextLogFile::flush() {
  if (start()) {
    if (!to_stdout_) error_ = file_.write(buffer_);
    else if (std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size())
      error_ = fmt::format("standard output: cannot write: {}", std::strerror(errno ? errno : EIO));
  }
  written_ += buffer_.size();
  buffer_.clear();
}

bool TextLogFile::close(const DecodeStats& stats) {
  writer_.end(stats, buffer_);
  stats_cut_ = stats.recording_cut;
  flush();  // opens the file even for a trace without events
  if (error_.empty() && to_stdout_ && std::fflush(stdout) != 0)
    error_ = fmt::format("standard output: cannot write: {}", std::strerror(errno ? errno : EIO));
  if (error_.empty() && !to_stdout_) error_ = file_.commit();
  if (!error_.empty()) {
    fmt::print(stderr, "edgemem: {} (pass --textlog PATH to write it elsewhere)\n", error_);
    return false;
  }
  std::error_code ec;
  std::filesystem::path shown = std::filesystem::absolute(path_, ec);
  fmt::print(stderr, "edgemem: text log written to {}, {}\n",
             to_stdout_ ? "standard output" : ec ? path_ : shown.string(), units::bytes_human(written_));
  // The text form has no record for it: the log reads as a whole run cut in
  // its last line, and its leak check is judged where the recording's was not.
  if (stats_cut_)
    fmt::print(stderr,
               "edgemem: warning: the recording is cut off (its file ends inside a chunk or a packed frame); {} "
               "cannot say so, so its leak check will be judged where this one was not\n",
               path_);
  if (writer_.summaries_left_out())
    fmt::print(stderr,
               "edgemem: warning: {} pool summaries (emt SUMMARY: usage without blocks) have no [MEM] form and are "
               "not in {}\n",
               writer_.summaries_left_out(), path_);
  return true;
}

}  // namespace edgemem::cli
