#include "record/ebpf_process_maps.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

namespace edgemem {

std::vector<MappedObject> read_mapped_objects(int pid) {
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  std::map<std::string, MappedObject> by_path;
  std::string line;
  while (std::getline(maps, line)) {
    // "START-END PERMS OFFSET DEV INODE   PATH" (the path may hold spaces)
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode;
    if (!(in >> range >> perms >> offset >> dev >> inode)) continue;
    std::string path;
    std::getline(in >> std::ws, path);
    if (!path.starts_with('/') || path.ends_with(" (deleted)")) continue;
    auto dash = range.find('-');
    if (dash == std::string::npos) continue;
    uint64_t start = std::stoull(range.substr(0, dash), nullptr, 16), end = std::stoull(range.substr(dash + 1), nullptr, 16);
    MappedObject& o = by_path[path];
    if (o.path.empty()) {
      o = {path, start, end, 0, false};
    } else {
      o.start = std::min(o.start, start);
      o.end = std::max(o.end, end);
    }
    if (std::stoull(offset, nullptr, 16) == 0 && (o.offset0 == 0 || start < o.offset0)) o.offset0 = start;
    if (perms.size() > 2 && perms[2] == 'x') o.executable = true;
  }
  std::vector<MappedObject> out;
  for (auto& [path, o] : by_path) out.push_back(std::move(o));
  std::sort(out.begin(), out.end(), [](const MappedObject& a, const MappedObject& b) { return a.start < b.start; });
  return out;
}

std::string find_libc(const std::vector<MappedObject>& objects) {
  for (const MappedObject& o : objects) {
    std::string name = o.path.substr(o.path.rfind('/') + 1);
    if (o.executable && (name.starts_with("libc.so") || name.starts_with("libc-") || name.starts_with("libc.musl")))
      return o.path;
  }
  return {};
}

std::string find_libstdcxx(const std::vector<MappedObject>& objects) {
  for (const MappedObject& o : objects)
    if (o.executable && o.path.substr(o.path.rfind('/') + 1).starts_with("libstdc++.so")) return o.path;
  return {};
}

}  // namespace edgemem
