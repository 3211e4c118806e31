// The GNU build ID in a PT_NOTE segment's bytes (as mapped, or as read from
// the file). Header-only so the note walk is tested with hand-made segments
// (tests/record/gnu_build_id_test.cc) as well as real objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

// Internal to the library, as the rest of it.
#pragma GCC visibility push(hidden)

namespace edgemem::preload {

inline constexpr size_t kMaxBuildIdBytes = 64;

// `align` is the segment's p_align: a note's descriptor and the next note
// start at its start plus a multiple of 8 in a segment aligned to 8, of 4
// otherwise (as glibc reads them). nullptr when no note of `size` bytes
// from `notes` is a GNU build ID (NT_GNU_BUILD_ID, name "GNU"); a note that
// would run past the end stops the walk.
inline const uint8_t* find_gnu_build_id(const uint8_t* notes, size_t size, uint64_t align, size_t& id_size) {
  constexpr uint32_t kBuildId = 3;  // NT_GNU_BUILD_ID
  constexpr size_t kHeader = 12;    // n_namesz, n_descsz, n_type: 32 bits each in ELF32 and ELF64
  const size_t a = align == 8 ? 8 : 4;
  auto up = [a](size_t n) { return (n + a - 1) & ~(a - 1); };
  for (size_t at = 0; size - at >= kHeader;) {
    const size_t left = size - at;
    uint32_t header[3];
    std::memcpy(header, notes + at, sizeof header);
    const uint32_t name_size = header[0], desc_size = header[1], type = header[2];
    if (name_size > left - kHeader) break;
    const size_t desc_at = up(kHeader + name_size);
    if (desc_at > left || desc_size > left - desc_at) break;
    if (type == kBuildId && name_size == 4 && std::memcmp(notes + at + kHeader, "GNU", 4) == 0 && desc_size > 0 &&
        desc_size <= kMaxBuildIdBytes) {
      id_size = desc_size;
      return notes + at + desc_at;
    }
    const size_t next = up(desc_at + desc_size);
    if (next > left) break;
    at += next;
  }
  return nullptr;
}

}  // namespace edgemem::preload

#pragma GCC visibility pop
