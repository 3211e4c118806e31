// Reads what the generated bpftrace script prints (ebpf_script.h) as it
// arrives, a byte at a time if need be: one line per call, the user stack
// after it one frame a line, and bpftrace's own "Lost N events".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgemem {

struct UprobeRecord {
  // unmap: munmap(address, size) entered, `result` its return value.
  // remap_from / remap_to: mremap entered on `address` (`size` the old
  // length) / returned `address` (the old one if it failed), `old` the
  // mapping it was called on.
  // protect: mprotect(address, size) returned `result`; `reserved`: to PROT_NONE.
  // heartbeat: only that `cpu`'s buffer has been read up to `time`.
  enum class Kind : uint8_t {
    alloc,
    alloc_failed,
    free,
    unmap,
    remap_from,
    remap_to,
    protect,
    inference_enter,
    inference_leave,
    heartbeat
  };
  Kind kind = Kind::alloc;
  bool mapping = false;  // anonymous mmap's pool, not malloc's
  uint32_t tid = 0;
  int32_t cpu = -1;  // whose output buffer carried it: each CPU's arrive in time order
  uint64_t time = 0;  // CLOCK_MONOTONIC ns (bpftrace's nsecs)
  uint64_t address = 0, size = 0, align = 0;
  uint64_t old = 0;
  bool keeps_old = false;  // remap_to: MREMAP_DONTUNMAP left the old range mapped (emptied)
  bool reserved = false;   // mmap or mprotect with PROT_NONE: address space, not memory
  int64_t result = 0;
  std::vector<uint64_t> stack;  // return addresses, innermost first
  // A stack taken at a function's entry (operator new's): its first frame
  // is the function itself, and the kernel's walk may skip this, its return
  // address (the caller's frame pointer is not pushed yet). Set while held.
  uint64_t entry_return = 0;
};

// What bpftrace prints once all its probes are attached when started with
// this variable set to 1 (its own test suite's hook).
inline constexpr std::string_view kBpftraceAttachedNotice = "__BPFTRACE_NOTIFY_PROBES_ATTACHED";

class BpftraceOutputParser {
 public:
  // Complete records are appended to `out`; a record whose stack is still
  // arriving is held until its end.
  void feed(std::string_view bytes, std::vector<UprobeRecord>& out);
  // End of output: the held record too.
  void finish(std::vector<UprobeRecord>& out);

  // Both readiness tracepoints answered: output reaches us (bpftrace
  // attaches tracepoints before its uprobes, so not that those are in place).
  bool ready() const { return ready_ends_ == 3; }
  // bpftrace's notice that every probe is attached (kBpftraceAttachedNotice),
  // on its standard output from 0.23 (on standard error before).
  bool probes_attached() const { return probes_attached_; }
  uint64_t lost_events() const { return lost_; }
  // Lines that are none of the above (bpftrace's warnings), the first kept.
  uint64_t other_lines() const { return other_; }
  const std::string& first_other_line() const { return first_other_; }

 private:
  void line(std::string_view text, std::vector<UprobeRecord>& out);
  void header(std::string_view text, std::vector<UprobeRecord>& out);
  void complete(std::vector<UprobeRecord>& out);

  std::string partial_;
  std::vector<UprobeRecord> held_;  // the records of the line whose stack is being read
  bool expecting_stack_ = false;
  int ready_ends_ = 0;
  bool probes_attached_ = false;
  uint64_t lost_ = 0;
  uint64_t other_ = 0;
  std::string first_other_;
};

}  // namespace edgemem
