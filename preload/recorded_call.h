// How every interposer records: enter the thread's guard, set the thread up,
// call the real function, take the record's place in the global order,
// write it. Calls made while the thread is already inside (the recorder's
// own allocations, libunwind's, a signal handler that interrupted a record)
// go straight through.
#pragma once

#include <malloc.h>

#include <cstddef>
#include <cstdint>

#include "attached_blocks.h"
#include "edgemem/emt_v2.h"
#include "thread_recorder.h"

namespace edgemem::preload {

// End of the bootstrap buffer, for copying out of it.
const unsigned char* bootstrap_end();

// Set while operator new, its own failure recorded, hands over to
// libstdc++'s to run the new_handler or throw: libstdc++'s new[] calls new,
// which calls malloc, each landing in an interposer again. Their failures
// are that same one; an allocation one of them makes is still recorded.
extern __thread bool failure_recorded_outside __attribute__((tls_model("initial-exec")));

template <typename Call>
void* recorded_alloc(size_t size, size_t align, Call call, uint8_t pool = emt2::kPoolMalloc) {
  Busy busy;
  if (!busy.entered() || !recording() || !ensure_ready()) return call();
  void* p = call();
  if (!p && failure_recorded_outside) return p;
  uint64_t seq = take_seq();
  if (p) record_alloc(pool, seq, p, size, align);
  else record_alloc_failed(pool, seq, size, align);
  if (p && tracking_attached_blocks) attached_block_made(p);
  return p;
}

// After an attach, only the frees of blocks the recording saw allocated.
inline bool recorded_since_attach(const void* p) { return !tracking_attached_blocks || attached_block_freed(p); }

template <typename Call>
void recorded_free(uint8_t pool, const void* p, Call call) {
  Busy busy;
  // A free of a block inherited from the parent (or made before an attach)
  // opens no file.
  if (!busy.entered() || !recording()) return call();
  if (!recorded_since_attach(p)) {
    if (p && recording_after_attach && ensure_ready()) record_unseen_free(malloc_usable_size(const_cast<void*>(p)));
    return call();
  }
  if (!ensure_ready()) return call();
  record_free(pool, take_seq(), p);
  call();
}

// A realloc is the free of the old block (ordered before the call, as any
// free) and the allocation of the new one (ordered after): another thread
// may be handed the old address before realloc returns. realloc(p, 0) frees.
template <typename Call>
void* recorded_realloc(void* old, size_t size, Call call) {
  Busy busy;
  if (!busy.entered() || !recording() || !ensure_ready()) return call();
  // realloc(NULL, n) is malloc: no free to order; nor of a block made before an attach.
  bool known = old && recorded_since_attach(old);
  // Its size before the call, which may free it; its free once the call did
  // (a failed realloc leaves the block live).
  const size_t unseen_bytes = old && !known && recording_after_attach ? malloc_usable_size(old) : 0;
  uint64_t before = known ? take_seq() : 0;
  void* p = call();
  if (!p && size) {
    record_alloc_failed(emt2::kPoolMalloc, known ? before : take_seq(), size, 0);
    if (known && tracking_attached_blocks) attached_block_made(old);  // still live
    return p;
  }
  if (unseen_bytes) record_unseen_free(unseen_bytes);
  if (known) record_free(emt2::kPoolMalloc, before, old);
  if (p) record_alloc(emt2::kPoolMalloc, take_seq(), p, size, 0);
  if (p && tracking_attached_blocks) attached_block_made(p);
  return p;
}

}  // namespace edgemem::preload
