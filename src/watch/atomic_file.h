// Files that another program reads while they are rewritten.
#pragma once

#include <string>

namespace edgemem::watch {

// Writes `text` to `path` through a temporary file in the same directory and
// a rename, so a reader (node_exporter's textfile collector) never sees half a
// file. A link is followed and its target replaced; a device, a FIFO or
// /dev/stdout is written in place. Returns an error text, empty on success.
std::string write_file_atomically(const std::string& path, const std::string& text);
// Not a regular file a run could replace: under /dev/ or /proc/ (/dev/stdout),
// or an existing device, FIFO or socket.
bool is_special_file(const std::string& path);
// Why write_file_atomically cannot write `path` (a directory, a FIFO or a
// socket), empty when it can: said before a long run starts.
std::string target_problem(const std::string& path);

}  // namespace edgemem::watch
