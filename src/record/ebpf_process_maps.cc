#include "record/ebpf_process_maps.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace edgemem {

void add_mapping(MappedObjects& objects, const std::string& path, uint64_t start, uint64_t end, uint64_t offset,
                 bool executable) {
  // The kernel's records name anonymous memory "//anon".
  if (!path.starts_with('/') || path.starts_with("//") || path.ends_with(" (deleted)")) return;
  MappedObject& o = objects[path];
  if (o.path.empty()) {
    o = {path, start, end, 0, false};
  } else {
    o.start = std::min(o.start, start);
    o.end = std::max(o.end, end);
  }
  if (offset == 0 && (o.offset0 == 0 || start < o.offset0)) o.offset0 = start;
  o.executable |= executable;
}

std::vector<MappedObject> in_address_order(const MappedObjects& objects) {
  std::vector<MappedObject> out;
  for (const auto& [path, o] : objects) out.push_back(o);
  std::sort(out.begin(), out.end(), [](const MappedObject& a, const MappedObject& b) { return a.start < b.start; });
  return out;
}

std::vector<MappedObject> read_mapped_objects(int pid) {
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  MappedObjects objects;
  std::string line;
  while (std::getline(maps, line)) {
    // "START-END PERMS OFFSET DEV INODE   PATH" (the path may hold spaces)
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode;
    if (!(in >> range >> perms >> offset >> dev >> inode)) continue;
    std::string path;
    std::getline(in >> std::ws, path);
    auto dash = range.find('-');
    if (dash == std::string::npos) continue;
    add_mapping(objects, path, std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16),
                std::stoull(offset, nullptr, 16), perms.size() > 2 && perms[2] == 'x');
  }
  return in_address_order(objects);
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
