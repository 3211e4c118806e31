// `edgemem stack`: the worst-case main stack first (with its unbounded
// flag), then every root and the heaviest frames; and the edgemem.stack/1
// JSON document (docs/schemas/stack.schema.json).
#pragma once

#include <string>

#include "static/stack_usage.h"

namespace edgemem {

std::string stack_text(const StackReport& r, size_t top);
std::string stack_json(const StackReport& r);

}  // namespace edgemem
