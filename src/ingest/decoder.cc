#include "edgemem/decoder.h"

#include "printable_name.h"

namespace edgemem {

std::string_view to_string(EventKind kind) {
  switch (kind) {
    case EventKind::alloc: return "alloc";
    case EventKind::free: return "free";
    case EventKind::realloc: return "realloc";
    case EventKind::alloc_failed: return "alloc_failed";
    case EventKind::inference_begin: return "inference_begin";
    case EventKind::inference_end: return "inference_end";
    case EventKind::arena_reset: return "arena_reset";
    case EventKind::guard_check: return "guard_check";
    case EventKind::mark: return "mark";
    case EventKind::counter: return "counter";
    case EventKind::pool_summary: return "pool_summary";
  }
  return "?";
}

// `what` may quote the damaged bytes: kept printable, as the report and its
// errors show it on a terminal.
void DecodeStats::note_problem(uint64_t offset, uint64_t line, std::string what) {
  if (!first_problem) first_problem = DecodeProblem{offset, line, printable_name(what)};
}

std::optional<Format> parse_format(std::string_view name) {
  if (name == "auto") return Format::automatic;
  if (name == "log" || name == "text") return Format::log;
  if (name == "seedbin") return Format::seedbin;
  if (name == "itm" || name == "swo") return Format::itm;
  if (name == "tpiu") return Format::tpiu;
  if (name == "emt") return Format::emt;
  return std::nullopt;
}

std::string_view to_string(Format format) {
  switch (format) {
    case Format::automatic: return "auto";
    case Format::log: return "log";
    case Format::seedbin: return "seedbin";
    case Format::itm: return "itm";
    case Format::tpiu: return "tpiu";
    case Format::emt: return "emt";
  }
  return "?";
}

}  // namespace edgemem
