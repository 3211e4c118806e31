// The calls of `--inference-fn NAME` seen by the gdb probe
// (inference_probe.h), merged into the preload library's recording as the
// INFER records its markers write (docs/formats/emt.md, version 3). The
// probe numbers each mark from the recording's own sequence counter while
// every thread of the program is stopped, so a mark falls between the
// allocations made before and after it exactly as a record would.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace edgemem {

// One line of the probe's marks file:
//   T TID SEQ NAME     a thread's first mark (its THREAD record)
//   B TID SEQ INDEX    inference INDEX begins (the outermost call enters)
//   E TID SEQ INDEX    it ends (that call returns)
//   X CODE | S SIGNAL  the program exited with CODE, or a signal ended it
struct ProbeMark {
  char kind = 0;  // 'T', 'B' or 'E'
  uint32_t tid = 0;
  uint64_t seq = 0;
  uint64_t index = 0;  // B and E
  std::string name;    // T
};

struct ProbeMarks {
  std::vector<ProbeMark> marks;
  std::optional<int> exit_code, signal;  // how the program ended, when the probe saw it
  uint64_t inferences = 0;               // B marks
};

// nullopt with a one-line error (file, line, what was expected) on a line
// the probe cannot have written whole; a last line cut short (the probe was
// killed while writing it) is dropped.
std::optional<ProbeMarks> read_inference_marks(const std::string& path, std::string& error);

// Appends the marks to the chunked recording at `path` as chunks of their
// own, one thread slot per thread (after every slot the file uses): THREAD,
// then INFER begin/end records at the marks' sequence numbers. The file must
// no longer be written (the program has ended). False with a one-line
// reason when it is not a chunked emt v3 recording or cannot be written.
bool append_inference_marks(const std::string& path, const ProbeMarks& marks, std::string& error);

}  // namespace edgemem
