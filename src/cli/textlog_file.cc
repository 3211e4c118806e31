#include "cli/textlog_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

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
  namespace fs = std::filesystem;
  path_ = writing_ = path;
  std::error_code ec;
  if (!fs::exists(path, ec) || fs::is_regular_file(path, ec))
    writing_ = fmt::format("{}.partial.{}", fs::is_symlink(path, ec) ? fs::weakly_canonical(path, ec).string() : path,
                           ::getpid());
  file_ = std::fopen(writing_.c_str(), "wb");
  if (!file_) cannot_write(path, errno);
  return file_ != nullptr;
}

TextLogFile::~TextLogFile() {
  if (file_) discard();
}

void TextLogFile::discard() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  if (writing_ != path_) std::remove(writing_.c_str());
}

void TextLogFile::on_event(const Event& event, const TraceContext& context) {
  writer_.write(event, context, buffer_);
  if (buffer_.size() >= kFlushBytes) flush();
}

void TextLogFile::flush() {
  if (!error_ && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) error_ = errno ? errno : EIO;
  written_ += buffer_.size();
  buffer_.clear();
}

bool TextLogFile::close() {
  flush();
  if (std::fclose(file_) != 0 && !error_) error_ = errno ? errno : EIO;
  file_ = nullptr;
  const std::string target = writing_ == path_ ? path_ : writing_.substr(0, writing_.rfind(".partial."));
  if (!error_ && writing_ != path_ && std::rename(writing_.c_str(), target.c_str()) != 0) error_ = errno;
  if (error_) {
    if (writing_ != path_) std::remove(writing_.c_str());
    cannot_write(path_, error_);
    return false;
  }
  std::error_code ec;
  std::filesystem::path shown = std::filesystem::absolute(path_, ec);
  fmt::print(stderr, "edgemem: text log written to {}, {}\n", ec ? path_ : shown.string(), units::bytes_human(written_));
  if (writer_.summaries_left_out())
    fmt::print(stderr,
               "edgemem: warning: {} pool summaries (emt SUMMARY: usage without blocks) have no [MEM] form and are "
               "not in {}\n",
               writer_.summaries_left_out(), path_);
  return true;
}

}  // namespace edgemem::cli
