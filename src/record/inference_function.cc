#include "record/inference_function.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "record/ebpf_elf_functions.h"
#include "record/ebpf_process_maps.h"

namespace edgemem {
namespace fs = std::filesystem;

std::string find_in_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return fs::exists(program) ? fs::absolute(program).string() : "";
  const char* path = getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t at = 0; at <= dirs.size();) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    fs::path candidate = fs::path(dirs.substr(at, end - at)) / program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    at = end + 1;
  }
  return {};
}

std::string exe_of(int pid) {
  std::error_code ec;
  return fs::read_symlink(fmt::format("/proc/{}/exe", pid), ec).string();
}

std::vector<std::string> objects_of(int pid) {
  auto mapped = read_mapped_objects(pid);
  if (mapped.empty()) return {};
  std::string exe = exe_of(pid);
  std::vector<std::string> objects = {exe};
  for (const MappedObject& o : mapped)
    if (o.executable && o.path != exe) objects.push_back(o.path);
  return objects;
}

std::optional<InferenceFunction> find_inference_function(const std::string& name,
                                                         const std::vector<std::string>& objects, std::string& error) {
  std::string nearest;
  for (const std::string& path : objects) {
    std::string why;
    auto elf = read_elf_functions(path, why);
    if (!elf) continue;
    const auto named = elf->all_user_named(name);
    if (named.size() == 1) return InferenceFunction{path, named.front()->name};
    if (named.size() > 1) {
      // Overloads: probing one of them counted 1 call of 26 (found by a helper).
      std::vector<std::string> which;
      for (const ElfFunction* f : named) which.push_back(f->demangled);
      std::sort(which.begin(), which.end());
      error = fmt::format("--inference-fn {}: names {} functions in {} ({}): give one with its parameters, e.g. "
                          "--inference-fn '{}'",
                          name, which.size(), path, fmt::join(which, ", "), which.front());
      return std::nullopt;
    }
    if (nearest.empty()) nearest = elf->nearest(name);
  }
  std::string where = objects.size() == 1 ? objects.front() : fmt::format("{} or the {} libraries it maps", objects.front(), objects.size() - 1);
  error = fmt::format("--inference-fn {}: no function of that name in {}{}", name, where,
                      nearest.empty() ? " (is it static and stripped, or inlined everywhere?)"
                                      : fmt::format(" (did you mean {}?)", nearest));
  return std::nullopt;
}

}  // namespace edgemem
