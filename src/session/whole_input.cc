#include "session/whole_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "edgemem/decoder.h"
#include "report/units.h"

namespace edgemem {
namespace {

// Appends up to `limit` bytes from `fd` to `out`, until the end; false on
// a read error. The buffer grows with what arrives, not to the limit (a
// pipe's limit is a GiB).
bool read_more(int fd, std::string& out, uint64_t limit) {
  uint64_t done = 0;
  char buf[1 << 16];
  while (done < limit) {
    ssize_t n = ::read(fd, buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, limit - done)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    done += static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace

std::optional<WholeInput> read_whole_input(const std::string& path, const WholeInputRules& rules) {
  const int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    if (fd != STDIN_FILENO) ::close(fd);
    return std::nullopt;
  }
  WholeInput in;
  bool ok = read_more(fd, in.bytes, kSniffBytes);
  if (ok && rules.check) in.refused = rules.check(in.bytes);
  if (ok && in.refused.empty() && in.bytes.size() == kSniffBytes) {
    if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kSniffBytes) {
      // Read to the size it has now: a file still growing is cut there.
      in.bytes.reserve(static_cast<size_t>(st.st_size));
      ok = read_more(fd, in.bytes, static_cast<uint64_t>(st.st_size) - kSniffBytes);
    } else {
      // (A /proc file says size 0 and is read as a stream.)
      // One byte past the limit tells a source that ends there from one that goes on.
      ok = read_more(fd, in.bytes, rules.stream_limit + 1 - kSniffBytes);
      if (ok && in.bytes.size() > rules.stream_limit)
        in.refused = fmt::format("more than {} from a pipe or device, and {} is never that large (save it to a file "
                                 "to read it whole)",
                                 units::bytes_human(rules.stream_limit), rules.what);
    }
  }
  if (fd != STDIN_FILENO) ::close(fd);
  if (!ok) return std::nullopt;
  return in;
}

WholeInputRules text_input(const std::string& what) {
  WholeInputRules rules;
  rules.what = what;
  rules.check = [what](std::string_view head) {
    const size_t nul = head.find('\0');
    return nul == std::string_view::npos
               ? std::string()
               : fmt::format("offset {}: a NUL byte: expected text ({})", nul, what);
  };
  return rules;
}

}  // namespace edgemem
