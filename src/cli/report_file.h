// Writing a report to the file an option names (--html), with the one-line
// error every command uses when that fails.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace edgemem::cli {

// Before a long run (watch): why a file could not be written at `path` later
// (its directory missing, or not writable), empty when it can.
std::string cannot_write_later(const std::string& path);

// Whether an output path is this process's standard output: "-", or
// another name of what it writes to (/dev/stdout, /proc/self/fd/1, the file
// the shell redirected it to; /dev/null is no one's).
bool is_stdout(const std::string& path);

// Output files named by options, (option, path); empty paths are not asked for.
using OutputFiles = std::vector<std::pair<std::string, std::string>>;
// Why these outputs cannot be written as asked, empty when they can: one of
// them is an input (writing it would destroy what is read), two name one
// file (the second would overwrite the first), or two go to standard output,
// or one does while the command prints its report there
// (`report_on_stdout`). Said before anything is read.
std::string clashing_outputs(const std::vector<std::string>& inputs, const OutputFiles& outputs,
                             bool report_on_stdout = true);

// Writes `text` to `path` (standard output for "-", is_stdout) and says on
// stderr that `what` was written there.
// On failure prints "edgemem: PATH: cannot write: WHY (OPTION PATH elsewhere)"
// and returns false.
bool write_report_file(const std::string& path, const std::string& text, const std::string& option,
                       const std::string& what = "HTML report");

}  // namespace edgemem::cli
