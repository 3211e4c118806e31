// When a subcommand cannot read its input: what the file is instead, said
// after the parser's own error ("; it is an emt trace: run `edgemem analyze
// F`"), so a file given to the wrong command names the right one.
#pragma once

#include <string>
#include <string_view>

namespace edgemem::cli {

// Empty when the bytes are no kind edgemem knows, or the kind that was
// expected: the one `edgemem READS_LIKE FILE` reads (`fit` reads its model
// as `plan` does and its --map as `map` does).
std::string kind_hint(const std::string& path, std::string_view bytes, std::string_view reads_like);

}  // namespace edgemem::cli
