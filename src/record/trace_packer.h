// Packs a finished recording into emt version 3's packed layout
// (docs/formats/emt.md): the used bytes of every chunk, in file order, in
// zstd frames of whole chunks, each with its own checksum. The recorded
// process writes chunks of 64 KiB through a shared file mapping because
// that survives SIGKILL; once no process writes the file any more,
// `edgemem record` (which outlives the program) packs it to a few bytes
// per allocation. Any recorder that writes the chunked
// layout (the preload library, an eBPF recorder) can hand its file here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace edgemem {

struct PackResult {
  bool packed = false;
  // Why the file was left as it is (empty when packed, or already packed).
  std::string why_not;
  uint64_t chunked_bytes = 0, packed_bytes = 0;
  // Chunks packed, and how many of them while the program still wrote the file.
  uint64_t chunks = 0, chunks_packed_while_written = 0;
};

// Packs a recording while its program still writes it, so that little is
// left to pack when the program ends: a chunk is compressed once its thread
// has claimed a later one (so it will not be written again), in the order
// the whole file would be packed in as far as that order is known yet (a
// chunk still being written holds back those after it). A thread that
// starts during one look at the file can have its first chunk packed after
// chunks of a higher base seen in that look: the reader merges records by
// sequence number and holds those few back until it has them. The packing
// is an unnamed file (O_TMPFILE) until it is complete, so an edgemem
// record killed meanwhile leaves only the chunked file.
class RecordingPacker {
 public:
  explicit RecordingPacker(std::string path);
  ~RecordingPacker();  // a packing not finished leaves nothing behind
  RecordingPacker(const RecordingPacker&) = delete;
  RecordingPacker& operator=(const RecordingPacker&) = delete;

  // Packs the chunks written so far that no thread writes any more.
  void pack_left_chunks();
  // Once no process writes the file: packs the rest and replaces the file,
  // as pack_recording() does.
  PackResult finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Replaces the chunked recording at `path` by its packed form (written
// beside it, then renamed over it, so a crash or a kill while packing
// leaves the chunked file whole). A file a running process still holds
// (its writer's lock), or one with a damaged chunk, is left chunked.
PackResult pack_recording(const std::string& path);

}  // namespace edgemem
