#include "record/inference_function.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

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
    if (const ElfFunction* f = elf->find_user_named(name)) return InferenceFunction{path, f->name};
    if (nearest.empty()) nearest = elf->nearest(name);
  }
  std::string where = objects.size() == 1 ? objects.front() : fmt::format("{} or the {} libraries it maps", objects.front(), objects.size() - 1);
  error = fmt::format("--inference-fn {}: no function of that name in {}{}", name, where,
                      nearest.empty() ? " (is it static and stripped, or inlined everywhere?)"
                                      : fmt::format(" (did you mean {}?)", nearest));
  return std::nullopt;
}

}  // namespace edgemem
