// Packs a finished recording into emt version 3's packed layout
// (docs/formats/emt.md): the used bytes of every chunk, in file order, in
// one zstd stream. The recorded process writes chunks of 64 KiB through a
// shared file mapping because that survives SIGKILL; once no process writes
// the file any more, `edgemem record` (which outlives the program) packs it
// to a few bytes per allocation. Any recorder that writes the chunked
// layout (the preload library, an eBPF recorder) can hand its file here.
#pragma once

#include <cstdint>
#include <string>

namespace edgemem {

struct PackResult {
  bool packed = false;
  // Why the file was left as it is (empty when packed, or already packed).
  std::string why_not;
  uint64_t chunked_bytes = 0, packed_bytes = 0;
};

// Replaces the chunked recording at `path` by its packed form (written
// beside it, then renamed over it, so a crash or a kill while packing
// leaves the chunked file whole). A file a running process still holds
// (its writer's lock), or one with a damaged chunk, is left chunked.
PackResult pack_recording(const std::string& path);

}  // namespace edgemem
