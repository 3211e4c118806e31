// Files that another program reads while they are rewritten.
#pragma once

#include <string>

namespace edgemem::watch {

// Writes `text` to `path` through a temporary file in the same directory and
// a rename, so a reader (node_exporter's textfile collector) never sees half a
// file. A link is followed and its target replaced; a path that is not a
// regular file (a device, a FIFO) is refused. Returns an error text, empty on success.
std::string write_file_atomically(const std::string& path, const std::string& text);

}  // namespace edgemem::watch
