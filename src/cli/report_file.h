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

// Output files named by options, (option, path); empty paths are not asked for.
using OutputFiles = std::vector<std::pair<std::string, std::string>>;
// Why these outputs cannot be written as asked, empty when they can: one of
// them is an input (writing it would destroy what is read), or two name one
// file (the second would overwrite the first). Said before anything is read.
std::string clashing_outputs(const std::vector<std::string>& inputs, const OutputFiles& outputs);

// Writes `text` to `path` and says on stderr that `what` was written there.
// On failure prints "edgemem: PATH: cannot write: WHY (OPTION PATH elsewhere)"
// and returns false.
bool write_report_file(const std::string& path, const std::string& text, const std::string& option,
                       const std::string& what = "HTML report");

}  // namespace edgemem::cli
