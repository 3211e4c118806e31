// Files that another program reads while they are rewritten.
#pragma once

#include <string>
#include <string_view>

namespace edgemem::watch {

// Writes `text` to `path` through a temporary file in the same directory
// (a fresh name, made with O_EXCL) and a rename, so a reader
// (node_exporter's textfile collector) never sees half a file and a write
// cut short leaves the old one; the new file keeps the old one's
// permissions and owner. A link, even dangling, is followed and its target
// replaced. Written in place instead: a device, a FIFO or /dev/stdout; a
// file with other hard links (they would keep the old bytes); a file in a
// directory that takes no new name; another user's file we cannot give
// back to its owner. Returns an error text, empty on success.
std::string write_file_atomically(const std::string& path, const std::string& text);

// The same written by parts, for output too large to hold (analyze
// --textlog): nothing replaces the old file before commit(), and a writer
// destroyed uncommitted (or whose write failed) removes its temporary.
// Each call returns the first error text, empty while all went well.
class AtomicFileWriter {
 public:
  AtomicFileWriter() = default;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();
  std::string open(const std::string& path);
  std::string write(std::string_view bytes);
  std::string commit();

 private:
  std::string open_in_place();
  std::string fail(const char* why);

  std::string path_;  // the file replaced: a link's target
  std::string tmp_;   // the temporary written, empty when written in place
  int fd_ = -1;
  std::string error_;
};
// Writes `text` to `path` as it is (created or truncated): for devices and
// FIFOs. Returns an error text naming `path`, empty on success.
std::string write_in_place(const std::string& path, const std::string& text);
// Not a regular file a run could replace: under /dev/ or /proc/ (/dev/stdout),
// or an existing device, FIFO or socket.
bool is_special_file(const std::string& path);
// Why write_file_atomically cannot write `path` (a directory, a FIFO or a
// socket), empty when it can: said before a long run starts.
std::string target_problem(const std::string& path);

}  // namespace edgemem::watch
