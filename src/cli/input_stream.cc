#include "cli/input_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "cli/interrupt.h"
#include "cli/kind_hint.h"
#include "edgemem/trace_session.h"
#include "report/units.h"

namespace edgemem::cli {

ReadProgress::ReadProgress(const std::string& path) : path_(path), show_(::isatty(STDERR_FILENO)) {}

ReadProgress::~ReadProgress() {
  if (shown_) fmt::print(stderr, "\r\x1b[K");
}

void ReadProgress::update(uint64_t bytes) {
  if (!show_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  shown_ = true;
  fmt::print(stderr, "\redgemem: reading {}: {}\x1b[K", path_ == "-" ? "stdin" : path_, units::bytes_human(bytes));
}

std::string read_stream(const std::string& path, const std::function<void(std::span<const uint8_t>)>& chunk) {
  ReadProgress progress(path);
  uint64_t total = 0;
  return read_chunks(
      path,
      [&](std::span<const uint8_t> bytes) {
        chunk(bytes);
        total += bytes.size();
        progress.update(total);
      },
      [] { return interrupted() != 0; });
}

namespace {

// Reads until `limit` bytes or the end, then closes `fd`.
std::string read_up_to(int fd, size_t limit) {
  std::string out(limit, '\0');
  size_t done = 0;
  while (done < limit) {
    ssize_t n = ::read(fd, out.data() + done, limit - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}

}  // namespace

std::optional<std::string> read_head(const std::string& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return std::nullopt;
  return read_up_to(fd, limit);
}

std::optional<std::string> read_whole_file(const std::string& path, std::string& error, const WholeInputRules& rules) {
  auto in = read_whole_input(path, rules);
  if (!in) {
    error = cannot_open(path);
    return std::nullopt;
  }
  if (!in->refused.empty()) {
    error = std::move(in->refused);
    return std::nullopt;
  }
  return std::move(in->bytes);
}

WholeInputRules hinted(WholeInputRules rules, const std::string& path, std::string_view reads_like) {
  rules.check = [check = std::move(rules.check), path, reads_like](std::string_view head) {
    std::string why = check(head);
    return why.empty() ? why : why + kind_hint(path, head, reads_like);
  };
  return rules;
}

WholeInputRules linker_map_input(const std::string& path, const std::string& elf_refusal) {
  WholeInputRules rules = hinted(text_input("a linker map"), path, "map");
  rules.check = [text = std::move(rules.check), elf_refusal](std::string_view head) {
    return head.starts_with("\x7f" "ELF") ? elf_refusal : text(head);
  };
  return rules;
}

std::string cannot_open(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return fmt::format("cannot open ({})", std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return "cannot open (a directory, expected a file)";
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return fmt::format("cannot open ({})", std::strerror(errno));
  ::close(fd);
  return "cannot read it";
}

}  // namespace edgemem::cli
