// Anonymous mmap, munmap and mremap: their own pool ("mmap"), because
// inference runtimes map tensors and arenas directly. File mappings are not
// memory the program allocates and are not recorded. Only mappings this
// library saw are unmapped in the recording: a munmap of the start of a
// recorded mapping frees it (a partial one records the tail as live);
// unmapping the middle of one is not followed.
#include <pthread.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "edgemem/emt_v2.h"
#include "real_functions.h"
#include "recorded_call.h"
#include "trace_file.h"

using namespace edgemem::preload;
namespace e2 = edgemem::emt2;

namespace {

// Anonymous mappings are few (large blocks): a small table under a lock,
// off the malloc hot path.
constexpr size_t kSlots = 16384;
struct Mapping {
  uintptr_t start;
  size_t length;
};
Mapping mappings[kSlots];
pthread_mutex_t mappings_lock = PTHREAD_MUTEX_INITIALIZER;

size_t slot_of(uintptr_t start) { return (start >> 12) * 0x9E3779B97F4A7C15ull >> 50; }

void remember(uintptr_t start, size_t length) {
  pthread_mutex_lock(&mappings_lock);
  for (size_t i = slot_of(start), n = 0; n < kSlots; i = (i + 1) % kSlots, ++n) {
    if (mappings[i].start == 0 || mappings[i].start == start) {
      mappings[i] = {start, length};
      break;
    }
  }
  pthread_mutex_unlock(&mappings_lock);
}

// Removes the mapping that starts at `start`; its length, 0 if unknown.
size_t forget(uintptr_t start) {
  size_t length = 0;
  pthread_mutex_lock(&mappings_lock);
  for (size_t i = slot_of(start), n = 0; n < kSlots && mappings[i].start; i = (i + 1) % kSlots, ++n) {
    if (mappings[i].start != start) continue;
    length = mappings[i].length;
    // Backward-shift deletion keeps every other entry reachable from its slot.
    size_t hole = i;
    for (size_t j = (i + 1) % kSlots; mappings[j].start; j = (j + 1) % kSlots) {
      size_t home = slot_of(mappings[j].start);
      bool between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (between) continue;
      mappings[hole] = mappings[j];
      hole = j;
    }
    mappings[hole] = {0, 0};
    break;
  }
  pthread_mutex_unlock(&mappings_lock);
  return length;
}

bool anonymous(int flags) { return flags & MAP_ANONYMOUS; }

}  // namespace

void edgemem::preload::lock_mappings_for_fork() { pthread_mutex_lock(&mappings_lock); }
void edgemem::preload::unlock_mappings_after_fork() { pthread_mutex_unlock(&mappings_lock); }
void edgemem::preload::forget_mappings_after_fork() {
  // Only the slots in use are written: the rest of the table stays shared
  // with the parent, not copied.
  for (Mapping& m : mappings)
    if (m.start) m = {0, 0};
}

extern "C" {

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (!real.mmap) resolve_real_functions();
  if (!real.mmap) return reinterpret_cast<void*>(syscall(SYS_mmap, addr, length, prot, flags, fd, offset));  // resolving
  if (!anonymous(flags)) return real.mmap(addr, length, prot, flags, fd, offset);
  Busy busy;
  if (!busy.entered() || !recording() || !ensure_ready()) return real.mmap(addr, length, prot, flags, fd, offset);
  void* p = real.mmap(addr, length, prot, flags, fd, offset);
  if (p == MAP_FAILED) {
    record_alloc_failed(e2::kPoolMmap, take_seq(), length, 0);
    return p;
  }
  uint64_t seq = take_seq();
  // MAP_FIXED over a recorded mapping replaces it.
  if (forget(reinterpret_cast<uintptr_t>(p))) record_free(e2::kPoolMmap, seq, p), seq = take_seq();
  remember(reinterpret_cast<uintptr_t>(p), length);
  record_alloc(e2::kPoolMmap, seq, p, length, 0);
  return p;
}

// Programs built with _FILE_OFFSET_BITS=64 (CPython, much of Debian) call
// mmap64: the same function under another name where off_t is 64 bits.
// Without it a recording of CPython missed its 7 MiB of arenas.
void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off64_t offset) {
  if (sizeof(off_t) == sizeof(off64_t) || anonymous(flags))  // an anonymous mapping has no offset
    return mmap(addr, length, prot, flags, fd, static_cast<off_t>(offset));
  static auto* real64 = reinterpret_cast<void* (*)(void*, size_t, int, int, int, off64_t)>(next_symbol("mmap64"));
  return real64(addr, length, prot, flags, fd, offset);
}

int munmap(void* addr, size_t length) {
  if (!real.munmap) resolve_real_functions();
  if (!real.munmap) return static_cast<int>(syscall(SYS_munmap, addr, length));  // resolving
  Busy busy;
  if (!busy.entered() || !recording()) return real.munmap(addr, length);
  auto start = reinterpret_cast<uintptr_t>(addr);
  // Not a recorded mapping (a forked child's inherited one): no file is
  // opened for it.
  size_t recorded = forget(start);
  if (!recorded || !ensure_ready()) return real.munmap(addr, length);
  record_free(e2::kPoolMmap, take_seq(), addr);
  int result = real.munmap(addr, length);
  if (result != 0 || length < recorded) {
    // Not unmapped, or only its head: what is still mapped is still live.
    size_t keep_from = result != 0 ? 0 : (length + 4095) & ~size_t{4095};
    if (keep_from < recorded) {
      remember(start + keep_from, recorded - keep_from);
      record_alloc(e2::kPoolMmap, take_seq(), reinterpret_cast<void*>(start + keep_from), recorded - keep_from, 0);
    }
  }
  return result;
}

void* mremap(void* old, size_t old_length, size_t new_length, int flags, ...) {
  if (!real.mremap) resolve_real_functions();
  void* wanted = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list args;
    va_start(args, flags);
    wanted = va_arg(args, void*);
    va_end(args);
  }
  if (!real.mremap)  // resolving
    return reinterpret_cast<void*>(syscall(SYS_mremap, old, old_length, new_length, flags, wanted));
  Busy busy;
  if (!busy.entered() || !recording() || !forget(reinterpret_cast<uintptr_t>(old)) || !ensure_ready())
    return real.mremap(old, old_length, new_length, flags, wanted);
  record_free(e2::kPoolMmap, take_seq(), old);
  void* p = real.mremap(old, old_length, new_length, flags, wanted);
  void* live = p == MAP_FAILED ? old : p;
  size_t length = p == MAP_FAILED ? old_length : new_length;
  remember(reinterpret_cast<uintptr_t>(live), length);
  record_alloc(e2::kPoolMmap, take_seq(), live, length, 0);
  return p;
}

}  // extern "C"
