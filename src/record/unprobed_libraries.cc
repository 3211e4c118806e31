#include "record/unprobed_libraries.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "record/ebpf_elf_functions.h"
#include "record/ebpf_process_maps.h"

extern char** environ;

namespace edgemem {
namespace fs = std::filesystem;

namespace {

// "PID\nDIR\n" then "SONAME\tORIGINAL\n" per library; PID is the process
// that wrote it (an exec keeps it), so a value inherited or set by hand is
// not taken. The first run's LD_LIBRARY_PATH, when it had one, goes
// verbatim in the second variable.
constexpr std::string_view kTold = "EDGEMEM_UNPROBED_LIBRARIES";
constexpr std::string_view kPathWas = "EDGEMEM_UNPROBED_LD_LIBRARY_PATH";
constexpr std::string_view kPrefix = "edgemem-unprobed-";

// What the dynamic loader does with a library: map it executable (which a
// noexec mount or a policy on the directory refuses).
bool loadable(const std::string& path, std::string& why) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  void* m = fd < 0 ? MAP_FAILED : mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) why = fmt::format("cannot map {} executable: {}", path, strerror(errno));
  else munmap(m, 4096);
  if (fd >= 0) close(fd);
  return m != MAP_FAILED;
}

}  // namespace

UnprobedLibraries::UnprobedLibraries(UnprobedLibraries&& other) noexcept
    : directory_(std::move(other.directory_)),
      removed_(other.removed_),
      ran_again_(other.ran_again_),
      libraries_(std::move(other.libraries_)),
      path_was_set_(other.path_was_set_),
      path_was_(std::move(other.path_was_)) {
  other.directory_.clear();
}

std::optional<UnprobedLibraries> UnprobedLibraries::copy_own(std::string& why) {
  const std::vector<MappedObject> ours = read_mapped_objects(getpid());
  UnprobedLibraries out;
  for (const std::string& path : {find_libc(ours), find_libstdcxx(ours)}) {
    std::optional<ElfFunctions> elf = path.empty() ? std::nullopt : read_elf_functions(path, why);
    if (!elf || elf->soname.empty() || elf->soname.find('/') != std::string::npos ||
        path.find_first_of("\t\n") != std::string::npos)
      continue;
    if (out.directory_.empty()) {
      const char* tmp = getenv("TMPDIR");
      std::string dir = fmt::format("{}/{}XXXXXX", tmp && *tmp ? tmp : "/tmp", kPrefix);
      if (!mkdtemp(dir.data())) {
        why = fmt::format("cannot make {}: {}", dir, strerror(errno));
        return std::nullopt;
      }
      std::error_code ec;
      out.directory_ = fs::canonical(dir, ec).string();  // as /proc/PID/maps names the copies
      if (ec) out.directory_ = dir;
    }
    const std::string copy = out.directory_ + "/" + elf->soname;
    out.libraries_.push_back({elf->soname, path});  // (removed with the directory, even half-copied)
    std::error_code ec;
    if (!fs::copy_file(path, copy, ec)) {
      why = fmt::format("cannot copy {} to {}: {}", path, out.directory_, ec.message());
      return std::nullopt;
    }
    if (!loadable(copy, why)) return std::nullopt;
  }
  if (out.directory_.empty()) {
    if (why.empty()) why = "no C library found in this process";
    return std::nullopt;
  }
  const char* was = getenv("LD_LIBRARY_PATH");
  out.path_was_set_ = was != nullptr;
  out.path_was_ = was ? was : "";
  why.clear();
  return out;
}

UnprobedLibraries UnprobedLibraries::adopt() {
  UnprobedLibraries out;
  const char* told = getenv(std::string(kTold).c_str());
  const char* path_was = getenv(std::string(kPathWas).c_str());
  if (told) {
    std::istringstream in(told);
    std::string pid, dir, line;
    std::getline(in, pid);
    std::getline(in, dir);
    out.ran_again_ = pid == std::to_string(getpid());
    struct stat st {};
    if (out.ran_again_ && fs::path(dir).filename().string().starts_with(kPrefix) && lstat(dir.c_str(), &st) == 0 &&
        S_ISDIR(st.st_mode)) {
      out.directory_ = dir;
      while (std::getline(in, line))
        if (size_t tab = line.find('\t'); tab != std::string::npos)
          out.libraries_.push_back({line.substr(0, tab), line.substr(tab + 1)});
    }
    if (out.ran_again_) {
      if (path_was) setenv("LD_LIBRARY_PATH", path_was, 1);
      else unsetenv("LD_LIBRARY_PATH");
    }
  }
  unsetenv(std::string(kTold).c_str());
  unsetenv(std::string(kPathWas).c_str());
  return out;
}

std::vector<std::string> UnprobedLibraries::environment_for_run_again() const {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    if (name != "LD_LIBRARY_PATH" && name != kTold && name != kPathWas) env.emplace_back(entry);
  }
  // An empty entry would be the current directory to the loader.
  env.push_back("LD_LIBRARY_PATH=" + directory_ + (path_was_.empty() ? "" : ":" + path_was_));
  std::string told = fmt::format("{}\n{}\n", getpid(), directory_);
  for (const Library& l : libraries_) told += l.soname + "\t" + l.original + "\n";
  env.push_back(fmt::format("{}={}", kTold, told));
  if (path_was_set_) env.push_back(fmt::format("{}={}", kPathWas, path_was_));
  return env;
}

bool UnprobedLibraries::is_copy(const std::string& path) const {
  return !directory_.empty() && path.starts_with(directory_ + "/");
}

std::string UnprobedLibraries::original(const std::string& path) const {
  if (!is_copy(path)) return path;
  const std::string name = path.substr(directory_.size() + 1);
  for (const Library& l : libraries_)
    if (name == l.soname) return l.original;
  return path;
}

void UnprobedLibraries::remove() {
  if (directory_.empty() || removed_) return;
  removed_ = true;  // the name may be another's from now on
  // Only what we put there: the directory came from the environment.
  for (const Library& l : libraries_) unlink((directory_ + "/" + l.soname).c_str());
  rmdir(directory_.c_str());
}

}  // namespace edgemem
