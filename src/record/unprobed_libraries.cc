#include "record/unprobed_libraries.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <sstream>
#include <string_view>

#include "record/ebpf_elf_functions.h"
#include "record/ebpf_process_maps.h"

extern char** environ;

namespace edgemem {
namespace fs = std::filesystem;

namespace {

// "DIR\n" "1PATH_WAS\n" (or "0\n"), then "SONAME\tORIGINAL\n" per library.
constexpr const char* kEnvironment = "EDGEMEM_UNPROBED_LIBRARIES";

}  // namespace

UnprobedLibraries::UnprobedLibraries(UnprobedLibraries&& other) noexcept
    : directory_(std::move(other.directory_)),
      removed_(other.removed_),
      libraries_(std::move(other.libraries_)),
      path_was_set_(other.path_was_set_),
      path_was_(std::move(other.path_was_)) {
  other.directory_.clear();
}

std::optional<UnprobedLibraries> UnprobedLibraries::copy_own() {
  const std::vector<MappedObject> ours = read_mapped_objects(getpid());
  UnprobedLibraries out;
  for (const std::string& path : {find_libc(ours), find_libstdcxx(ours)}) {
    std::string why;
    std::optional<ElfFunctions> elf = path.empty() ? std::nullopt : read_elf_functions(path, why);
    if (!elf || elf->soname.empty() || elf->soname.find('/') != std::string::npos) continue;
    if (out.directory_.empty()) {
      char dir[] = "/tmp/edgemem-unprobed-XXXXXX";
      if (!mkdtemp(dir)) return std::nullopt;
      out.directory_ = dir;
    }
    std::error_code ec;
    if (!fs::copy_file(path, fs::path(out.directory_) / elf->soname, ec)) return std::nullopt;
    out.libraries_.push_back({elf->soname, path});
  }
  if (out.directory_.empty()) return std::nullopt;
  const char* was = getenv("LD_LIBRARY_PATH");
  out.path_was_set_ = was != nullptr;
  out.path_was_ = was ? was : "";
  return out;
}

UnprobedLibraries UnprobedLibraries::adopt() {
  UnprobedLibraries out;
  const char* told = getenv(kEnvironment);
  if (!told) return out;
  std::istringstream in(told);
  std::string line;
  if (std::getline(in, out.directory_) && std::getline(in, line) && !line.empty()) {
    out.path_was_set_ = line[0] == '1';
    out.path_was_ = line.substr(1);
    while (std::getline(in, line))
      if (size_t tab = line.find('\t'); tab != std::string::npos)
        out.libraries_.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  if (out.path_was_set_) setenv("LD_LIBRARY_PATH", out.path_was_.c_str(), 1);
  else unsetenv("LD_LIBRARY_PATH");
  unsetenv(kEnvironment);
  return out;
}

std::vector<std::string> UnprobedLibraries::environment_for_run_again() const {
  std::vector<std::string> env;
  const std::string told_name = std::string(kEnvironment) + "=";
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    if (!entry.starts_with("LD_LIBRARY_PATH=") && !entry.starts_with(told_name)) env.emplace_back(entry);
  }
  env.push_back("LD_LIBRARY_PATH=" + directory_ + (path_was_.empty() ? "" : ":" + path_was_));
  std::string told = directory_ + "\n" + (path_was_set_ ? "1" : "0") + path_was_ + "\n";
  for (const Library& l : libraries_) told += l.soname + "\t" + l.original + "\n";
  env.push_back(told_name + told);
  return env;
}

std::string UnprobedLibraries::original(const std::string& path) const {
  if (directory_.empty() || !path.starts_with(directory_ + "/")) return path;
  const std::string name = path.substr(directory_.size() + 1);
  for (const Library& l : libraries_)
    if (name == l.soname || name == l.soname + " (deleted)") return l.original;
  return path;
}

void UnprobedLibraries::remove() {
  if (directory_.empty() || removed_) return;
  std::error_code ec;
  fs::remove_all(directory_, ec);
  removed_ = true;  // the name may be another's from now on
}

}  // namespace edgemem
