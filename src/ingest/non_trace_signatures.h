// Files that are not traces but sit next to them and get handed to
// `edgemem analyze` by mistake: firmware images, models, linker maps, stack
// usage reports. Each is recognised by its own signature, so the refusal
// can say what the file is and which command reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace edgemem {

struct NotATrace {
  std::string looks_like;  // "an ELF file, not a trace"
  std::string instead;     // "for its sections and symbols run `edgemem map --elf {file}`"
  bool reads_compressed = false;  // what `instead` runs reads the file compressed as it is
};

std::optional<NotATrace> recognise_non_trace(std::span<const uint8_t> head);

}  // namespace edgemem
