// Writing a report to the file an option names (--html), with the one-line
// error every command uses when that fails.
#pragma once

#include <string>

namespace edgemem::cli {

// Before a long run (watch): why a file could not be written at `path` later
// (its directory missing, or not writable), empty when it can.
std::string cannot_write_later(const std::string& path);

// Writes `text` to `path` and says on stderr that `what` was written there.
// On failure prints "edgemem: PATH: cannot write: WHY (OPTION PATH elsewhere)"
// and returns false.
bool write_report_file(const std::string& path, const std::string& text, const std::string& option,
                       const std::string& what = "HTML report");

}  // namespace edgemem::cli
