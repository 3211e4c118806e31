// The mappings of a program the eBPF recorder starts, as the kernel reports
// them (perf_event_open's PERF_RECORD_MMAP2 on a dummy event, as `perf
// record` learns them): a program that ends before /proc/PID/maps can be
// read still gets its module map, so its stacks are named. Opened before
// the program's exec and enabled by it; threads and children inherit it,
// so it is one event per CPU (the kernel maps no buffer of an inherited
// per-process event).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "record/ebpf_process_maps.h"

namespace edgemem {

class MmapWatch {
 public:
  // nullptr and `why` when the kernel refuses (perf_event_paranoid, seccomp).
  static std::unique_ptr<MmapWatch> open(int pid, std::string& why);
  ~MmapWatch();
  MmapWatch(const MmapWatch&) = delete;
  MmapWatch& operator=(const MmapWatch&) = delete;

  // Every object mapped so far, in address order, after reading what the
  // kernel wrote since the last call.
  std::vector<MappedObject> objects();
  // Mapping records the kernel said it dropped (a buffer was full). It says
  // so only before the next record that fits: a buffer still full at the
  // last read may have dropped records no count tells of.
  uint64_t lost() const { return lost_; }
  bool found_full() const { return found_full_; }

 private:
  struct Ring {
    int fd;
    void* data;
    size_t size;  // of the mapping: one page of header, then the data pages
  };
  // A mapping, or an exec (the image replaced: its mappings start again).
  struct Change {
    uint64_t time;
    bool exec;
    std::string path = {};
    uint64_t start = 0, length = 0, offset = 0;
    bool executable = false;
  };
  explicit MmapWatch(int pid) : pid_(pid) {}
  void read_records(Ring& ring, std::vector<Change>& changes);

  int pid_;
  std::vector<Ring> rings_;
  uint64_t lost_ = 0;
  bool found_full_ = false;
  MappedObjects by_path_;
};

}  // namespace edgemem
