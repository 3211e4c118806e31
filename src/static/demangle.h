// C++ symbol names as people write them: `_ZN3app12tensor_arenaE` is
// `app::tensor_arena`. Anything that is not a mangled name comes back as is.
#pragma once

#include <string>

namespace edgemem {

std::string demangle(const std::string& name);

}  // namespace edgemem
