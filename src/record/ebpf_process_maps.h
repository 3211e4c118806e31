// The objects a process has mapped, from /proc/PID/maps: where each ELF file
// lies, so the eBPF recorder can write the recording's module map (the
// preload library asks the dynamic loader instead, from inside).
#pragma once

#include <cstdint>
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

// The process's C library (libc.so.6, libc-2.x.so, musl's libc.so), or empty.
std::string find_libc(const std::vector<MappedObject>& objects);

// GCC's C++ library (libstdc++.so.6), or empty.
std::string find_libstdcxx(const std::vector<MappedObject>& objects);

}  // namespace edgemem
