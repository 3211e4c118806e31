// How much input one call to ZSTD_decompressStream may take. A call that
// fails hands back nothing of what it wrote (libzstd returns before it sets
// the output's pos), so no call may decode a block and also judge what
// follows it: a damaged block header read beside a good block once lost
// that block.
#pragma once

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_nextInputType: exported by libzstd 1.5, declared as experimental
#include <zstd.h>

#include <algorithm>
#include <cstddef>

namespace edgemem {

// `hint`: what zstd's last call asked for (after a block's body it counts
// the next block's 3-byte header too, RFC 8878 3.1.1.2, which is left for
// the next call); `flushing`: its last call filled the output buffer, so the
// rest of a block may wait there, flushed by a call given no input before
// any header is read. A new stream needs ZSTD_decompressBegin first: until
// it reads a frame header libzstd leaves unset the stage ZSTD_nextInputType reads.
inline size_t zstd_step_input(ZSTD_DStream* stream, size_t hint, bool flushing, size_t available) {
  constexpr size_t kBlockHeaderBytes = 3;
  if (flushing) return 0;
  size_t give = std::min(available, hint ? hint : 1);
  if (hint > kBlockHeaderBytes && ZSTD_nextInputType(stream) == ZSTDnit_block)
    give = std::min(give, hint - kBlockHeaderBytes);
  return give;
}

}  // namespace edgemem
