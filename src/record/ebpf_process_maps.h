// The objects a process has mapped, from /proc/PID/maps: where each ELF file
// lies, so the eBPF recorder can write the recording's module map (the
// preload library asks the dynamic loader instead, from inside).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace edgemem {

struct MappedObject {
  std::string path;
  uint64_t start = 0, end = 0;  // from its lowest mapping to the end of its highest
  uint64_t offset0 = 0;         // where file offset 0 is mapped (0 if it is not)
  bool executable = false;      // holds code (an r-x mapping)
};

// Objects by path in address order; empty when the process is gone.
std::vector<MappedObject> read_mapped_objects(int pid);

// One mapping of a file, merged into its object (by path): the lowest
// start, the highest end, where file offset 0 lies, whether any is code.
// Mappings of no file or of a deleted one are left out.
using MappedObjects = std::map<std::string, MappedObject>;
void add_mapping(MappedObjects& objects, const std::string& path, uint64_t start, uint64_t end, uint64_t offset,
                 bool executable);
// The objects in address order.
std::vector<MappedObject> in_address_order(const MappedObjects& objects);

// The process's C library (libc.so.6, libc-2.x.so, musl's libc.so), or empty.
std::string find_libc(const std::vector<MappedObject>& objects);

// GCC's C++ library (libstdc++.so.6), or empty.
std::string find_libstdcxx(const std::vector<MappedObject>& objects);

}  // namespace edgemem
