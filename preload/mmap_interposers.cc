// Anonymous mmap, munmap and mremap: their own pool ("mmap"), because
// inference runtimes map tensors and arenas directly. File mappings are not
// memory the program allocates and are not recorded. Only mappings this
// library saw are unmapped in the recording, by address range: a munmap (or
// a MAP_FIXED mapping, or an mremap's source or destination) over recorded
// mappings frees those it covers and resizes those it covers in part (see
// cut()). Allocators that map twice what they need and unmap the ends to
// align (jemalloc, mimalloc, V8) leave exactly the aligned middle, at the
// stack of the mmap that made it.
//
// A PROT_NONE mapping is address space set aside, not memory: V8 reserves
// 512 MiB for its code this way and commits pages inside with mprotect,
// glibc and jemalloc reserve and then map over it with MAP_FIXED. Such
// reservations are followed (the table below) but not recorded; what an
// mprotect makes accessible inside them is recorded as a mapping made
// there, and what it makes PROT_NONE again is freed, as a munmap would.
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <optional>

#include "edgemem/emt_v2.h"
#include "real_functions.h"
#include "recorded_call.h"
#include "stack_walk.h"
#include "thread_recorder.h"
#include "trace_file.h"

using namespace edgemem::preload;
namespace e2 = edgemem::emt2;

namespace {

// Anonymous mappings are few (large blocks): a sorted table under a lock,
// off the malloc hot path. Recorded mappings never overlap. As many as the
// kernel lets a process have by default (vm.max_map_count 65530, file
// mappings included); only the pages in use are ever touched.
constexpr size_t kSlots = 65536;
struct Mapping {
  uintptr_t start;
  size_t length;  // as the program asked; the kernel's covers whole pages
  bool reserved;  // PROT_NONE: followed, not in the recording
};
Mapping mappings[kSlots];
size_t mapping_count = 0;
pthread_mutex_t mappings_lock = PTHREAD_MUTEX_INITIALIZER;
// Held by a call that changes mappings (munmap, mremap, mprotect, MAP_FIXED)
// from its look at the table to its last record: threads committing pages of
// one reservation (V8's do) each take the reservation's entry out and put
// pieces back, and without it saw one another's half-done edits (the table
// lost its order, commits went unrecorded). Taken before mappings_lock.
//
// A thread in a dl_iterate_phdr callback (GOT hookers) holds the loader's
// lock and may call mprotect, so the holder never asks the loader: the
// thread is set up before (ensure_ready), a call that may make memory walks
// its stack before (libunwind asks the loader), and under the lock the
// thread counts as listing objects (frame pointers only, no module scan).
pthread_mutex_t edits_lock = PTHREAD_MUTEX_INITIALIZER;
// The stack a mapping made under the lock is recorded at, when it was walked
// before the lock (edit_node_walked); else walked there by frame pointers.
__thread uint32_t edit_node = 0;
__thread bool edit_node_walked = false;
class MappingEdit {
 public:
  // `makes_memory`: the call may record a mapping (its stack is walked now).
  explicit MappingEdit(bool makes_memory) : was_listing_(listing_objects) {
    edit_node_walked = makes_memory;
    if (makes_memory) edit_node = current_stack_node();
    pthread_mutex_lock(&edits_lock);
    listing_objects = true;
  }
  ~MappingEdit() {
    listing_objects = was_listing_;
    pthread_mutex_unlock(&edits_lock);
    edit_node_walked = false;
  }
  MappingEdit(const MappingEdit&) = delete;
  MappingEdit& operator=(const MappingEdit&) = delete;

 private:
  bool was_listing_;
};

// Looked up once; threads that race here find the same value. (No function
// static with a dynamic initialiser in the recorder: its guard would need
// libstdc++, whose start-up allocates 72,704 B in every recorded program.)
uintptr_t page_size() {
  static std::atomic<uintptr_t> size{0};
  uintptr_t s = size.load(std::memory_order_relaxed);
  if (!s) size.store(s = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), std::memory_order_relaxed);  // 16 KiB on some arm64 kernels
  return s;
}

uintptr_t page_end(uintptr_t start, size_t length) {
  const uintptr_t page = page_size();
  return start + ((length + page - 1) & ~(page - 1));
}

// What the kernel refuses before touching anything (EINVAL): an unaligned
// start, an empty range, one past any user address space (57 bits with
// five-level paging). Such calls are passed on unrecorded.
bool plausible_range(uintptr_t start, size_t length) {
  const uintptr_t end = page_end(start, length);
  return start % page_size() == 0 && length > 0 && end > start &&
         (sizeof(uintptr_t) == 4 || end <= static_cast<uintptr_t>(uint64_t{1} << 57));
}

// Mappings a failing call can put back; past that many (a munmap over
// hundreds of recorded mappings that the kernel refuses with ENOMEM) the
// rest stay freed in the recording.
constexpr size_t kPutBack = 128;

// Index of the first mapping whose pages end after `address`.
size_t first_ending_after(uintptr_t address) {
  size_t low = 0, high = mapping_count;
  while (low < high) {
    size_t mid = (low + high) / 2;
    if (page_end(mappings[mid].start, mappings[mid].length) <= address) low = mid + 1;
    else high = mid;
  }
  return low;
}

// Joins reservation [start, end) to a reservation it touches page for page,
// as the kernel joins their areas: nothing recorded tells them apart, and a
// page committed and given back a million times must not fill the table.
// Under mappings_lock; false when it touches none. `i`: first_ending_after(start).
bool join_reservation(size_t i, uintptr_t start, uintptr_t end) {
  const bool before = i > 0 && mappings[i - 1].reserved && page_end(mappings[i - 1].start, mappings[i - 1].length) == start;
  const bool after = i < mapping_count && mappings[i].reserved && mappings[i].start == end;
  if (!before && !after) return false;
  if (after) end = page_end(mappings[i].start, mappings[i].length);
  if (before) {
    mappings[i - 1].length = end - mappings[i - 1].start;
    if (after) {
      --mapping_count;
      memmove(&mappings[i], &mappings[i + 1], (mapping_count - i) * sizeof(Mapping));
    }
  } else {
    mappings[i] = {start, end - start, true};
  }
  return true;
}

// False when the table is full: the mapping is then not recorded at all
// (recorded, its unmapping could not be followed).
bool remember(uintptr_t start, size_t length, bool reserved = false) {
  pthread_mutex_lock(&mappings_lock);
  size_t i = first_ending_after(start);
  if (reserved && join_reservation(i, start, page_end(start, length))) {
    pthread_mutex_unlock(&mappings_lock);
    return true;
  }
  const bool room = mapping_count < kSlots;
  if (room) {
    memmove(&mappings[i + 1], &mappings[i], (mapping_count - i) * sizeof(Mapping));
    mappings[i] = {start, length, reserved};
    ++mapping_count;
  }
  pthread_mutex_unlock(&mappings_lock);
  return room;
}

// Takes the first recorded mapping with a page in [start, end) out of the table.
bool take_overlapping(uintptr_t start, uintptr_t end, Mapping& out) {
  pthread_mutex_lock(&mappings_lock);
  size_t i = first_ending_after(start);
  bool found = i < mapping_count && mappings[i].start < end;
  if (found) {
    out = mappings[i];
    --mapping_count;
    memmove(&mappings[i], &mappings[i + 1], (mapping_count - i) * sizeof(Mapping));
  }
  pthread_mutex_unlock(&mappings_lock);
  return found;
}

// A copy of the first mapping with a page in [start, end), left in the table.
bool find_overlapping(uintptr_t start, uintptr_t end, Mapping& out) {
  pthread_mutex_lock(&mappings_lock);
  size_t i = first_ending_after(start);
  bool found = i < mapping_count && mappings[i].start < end;
  if (found) out = mappings[i];
  pthread_mutex_unlock(&mappings_lock);
  return found;
}

bool any_overlapping(uintptr_t start, uintptr_t end) {
  Mapping m;
  return find_overlapping(start, end, m);
}

bool any_reserved_overlapping(uintptr_t start, uintptr_t end) {
  pthread_mutex_lock(&mappings_lock);
  bool found = false;
  for (size_t i = first_ending_after(start); i < mapping_count && mappings[i].start < end && !found; ++i)
    found = mappings[i].reserved;
  pthread_mutex_unlock(&mappings_lock);
  return found;
}

// Before a call that may change mappings takes edits_lock: the thread set
// up (its first record may scan the loader's list), unless it never
// recorded and the range holds no mapping it could change, for which no
// file is opened (a forked child's inherited mappings). That look is taken
// under edits_lock too: without it, a thread's first mprotect missed the
// reservation while another thread held its entry out of the table, and
// the page it committed went unrecorded (CI: 3,999 of 4,000 pages, no data
// loss said). The lock is let go before ensure_ready(), which may ask the
// loader; the call looks again under it.
bool ready_for_edit(uintptr_t start, uintptr_t end) {
  if (thread_recording()) return ensure_ready();
  pthread_mutex_lock(&edits_lock);
  const bool touches = any_overlapping(start, end);
  pthread_mutex_unlock(&edits_lock);
  return touches && ensure_ready();
}

void record_mapping(uintptr_t start, size_t length) {
  if (!remember(start, length)) return;
  if (edit_node_walked) record_alloc_at(e2::kPoolMmap, take_seq(), reinterpret_cast<void*>(start), length, edit_node);
  else record_alloc(e2::kPoolMmap, take_seq(), reinterpret_cast<void*>(start), length, 0);
}

// A mapping the program made, reserved (PROT_NONE) or recorded.
void add_mapping(uintptr_t start, size_t length, bool reserved) {
  if (reserved) remember(start, length, true);
  else record_mapping(start, length);
}

// What [start, end) takes from mapping m, already out of the table: all of
// it is freed in the recording; part of it is resized there (RESIZE): what
// is left is the same mapping, made at the same stack, not a new one (a
// mapping trimmed to alignment is no temporary). Its head stays the
// mapping; a tail left beside the head is recorded as a mapping of its own,
// at the stack of the call that cut it (stack ids are per thread: the
// mapping's may be another thread's). A reservation's parts stay in the
// table, unrecorded.
void cut_one(const Mapping& m, uintptr_t start, uintptr_t end) {
  const uintptr_t m_end = m.start + m.length;
  const bool head = m.start < start, tail = m_end > end;
  if (m.reserved) {
    if (head) remember(m.start, start - m.start, true);
    if (tail) remember(end, m_end - end, true);
    return;
  }
  if (!head && !tail) {
    record_free(e2::kPoolMmap, take_seq(), reinterpret_cast<void*>(m.start));
    return;
  }
  const Mapping kept = head ? Mapping{m.start, start - m.start, false} : Mapping{end, m_end - end, false};
  if (remember(kept.start, kept.length))
    record_resize(e2::kPoolMmap, take_seq(), reinterpret_cast<void*>(m.start), reinterpret_cast<void*>(kept.start),
                  kept.length);
  else
    record_free(e2::kPoolMmap, take_seq(), reinterpret_cast<void*>(m.start));
  if (head && tail) record_mapping(end, m_end - end);
}

// What [start, end) takes from the mappings (cut_one). The ones taken (at
// most `room` kept) go to `taken`, for putting back when the call fails;
// returns how many there were. `all_reserved`: whether every one was a
// reservation (an mremap's destination is what its source was).
size_t cut(uintptr_t start, uintptr_t end, Mapping* taken, size_t room, bool* all_reserved = nullptr) {
  size_t n = 0;
  bool reserved = true;
  Mapping m;
  while (take_overlapping(start, end, m)) {
    if (n < room) taken[n] = m;
    ++n;
    reserved = reserved && m.reserved;
    cut_one(m, start, end);
  }
  if (all_reserved) *all_reserved = n > 0 && reserved;
  return n;
}

// Undoes cut() after the call failed: a tail it recorded apart goes, and
// the mappings come back whole (the part it kept resized back).
void put_back(uintptr_t start, uintptr_t end, const Mapping* taken, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const Mapping& m = taken[i];
    const uintptr_t m_end = m.start + m.length;
    const bool head = m.start < start, tail = m_end > end;
    Mapping part;
    if (m.reserved) {  // the range cut out of it, which joins what cut() left
      const uintptr_t from = head ? start : m.start, to = tail ? end : m_end;
      remember(from, to - from, true);
      continue;
    }
    if (head && tail && take_overlapping(end, end + 1, part))
      record_free(e2::kPoolMmap, take_seq(), reinterpret_cast<void*>(part.start));
    const uintptr_t kept = head ? m.start : end;
    if ((head || tail) && take_overlapping(kept, kept + 1, part)) {
      if (remember(m.start, m.length))
        record_resize(e2::kPoolMmap, take_seq(), reinterpret_cast<void*>(part.start),
                      reinterpret_cast<void*>(m.start), m.length);
      else
        record_free(e2::kPoolMmap, take_seq(), reinterpret_cast<void*>(part.start));
      continue;
    }
    record_mapping(m.start, m.length);
  }
}

// After an mprotect of [start, end) succeeded: the parts of mappings whose
// state it changed (reserved, or accessible) are cut out of them and made
// again in the new state, a page made accessible recorded at the mprotect's
// stack. Under edits_lock.
void reprotect(uintptr_t start, uintptr_t end, bool reserved) {
  Mapping m;
  uintptr_t at = start;
  while (at < end && find_overlapping(at, end, m)) {
    at = page_end(m.start, m.length);
    if (m.reserved == reserved) continue;  // RW to RX, or PROT_NONE again: no change in what is memory
    Mapping taken;
    if (!take_overlapping(m.start, m.start + 1, taken)) continue;
    const uintptr_t m_end = m.start + m.length;
    const uintptr_t from = m.start > start ? m.start : start, to = m_end < end ? m_end : end;
    cut_one(taken, from, to);
    add_mapping(from, to - from, reserved);
  }
}

// What an mremap made of [from, from_end) (the mappings `taken` from it, in
// address order): at `to`, `length` bytes. A source of one kind is one
// mapping there, made at the mremap's stack. One of reservations and
// committed pages (the kernel moves or shrinks such a range, and grows only
// a single area) keeps each part's kind at its offset: recorded whole, the
// reservation's pages read as memory that was never there.
void remap(uintptr_t to, size_t length, uintptr_t from, uintptr_t from_end, const Mapping* taken, size_t n,
           bool reserved) {
  bool mixed = false;
  for (size_t i = 1; i < n && i < kPutBack; ++i) mixed = mixed || taken[i].reserved != taken[0].reserved;
  if (!mixed || n > kPutBack) {
    add_mapping(to, length, reserved);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const Mapping& m = taken[i];
    const uintptr_t a = m.start > from ? m.start : from;
    const uintptr_t m_end = page_end(m.start, m.length), b = m_end < from_end ? m_end : from_end;
    if (a - from >= length) break;
    const uintptr_t b_at = b - from < length ? b - from : length;
    add_mapping(to + (a - from), b_at - (a - from), m.reserved);
  }
}

bool anonymous(int flags) { return flags & MAP_ANONYMOUS; }

// mprotect's and pkey_mprotect's bookkeeping around `call`, the real one.
template <typename Call>
int protect(void* addr, size_t length, int prot, Call call) {
  Busy busy;
  const auto start = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t end = page_end(start, length);
  if (!busy.entered() || !recording() || !plausible_range(start, length) || !ready_for_edit(start, end)) return call();
  // Committing walks the stack first; RW to RX and back (W^X) does not.
  MappingEdit edit(prot != PROT_NONE && any_reserved_overlapping(start, end));
  if (!any_overlapping(start, end)) return call();
  int result = call();
  if (result == 0) reprotect(start, end, prot == PROT_NONE);
  return result;
}

}  // namespace

void edgemem::preload::lock_mapping_edits_for_fork() { pthread_mutex_lock(&edits_lock); }
void edgemem::preload::unlock_mapping_edits_after_fork() { pthread_mutex_unlock(&edits_lock); }
void edgemem::preload::lock_mappings_for_fork() { pthread_mutex_lock(&mappings_lock); }
void edgemem::preload::unlock_mappings_after_fork() { pthread_mutex_unlock(&mappings_lock); }
void edgemem::preload::forget_mappings_after_fork() {
  // The count alone: the table's pages stay shared with the parent, not copied.
  mapping_count = 0;
}

extern "C" {

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (!real.mmap) resolve_real_functions();
  if (!real.mmap) return reinterpret_cast<void*>(syscall(SYS_mmap, addr, length, prot, flags, fd, offset));  // resolving
  const auto wanted = reinterpret_cast<uintptr_t>(addr);
  // A file mapped with MAP_FIXED over recorded mappings replaces them too.
  const bool over_recorded = (flags & MAP_FIXED) && plausible_range(wanted, length) &&
                             any_overlapping(wanted, page_end(wanted, length));
  if (!anonymous(flags) && !over_recorded) return real.mmap(addr, length, prot, flags, fd, offset);
  Busy busy;
  if (!busy.entered() || !recording() || !ensure_ready()) return real.mmap(addr, length, prot, flags, fd, offset);
  std::optional<MappingEdit> edit;
  if (flags & MAP_FIXED) edit.emplace(anonymous(flags) && prot != PROT_NONE);  // a fresh mapping elsewhere changes none
  void* p = real.mmap(addr, length, prot, flags, fd, offset);
  if (!anonymous(flags)) {
    if (p != MAP_FAILED) cut(wanted, page_end(wanted, length), nullptr, 0);
    return p;
  }
  if (p == MAP_FAILED) {
    // Address space refused is not memory refused (V8 probes how much it can reserve).
    if (prot != PROT_NONE) record_alloc_failed(e2::kPoolMmap, take_seq(), length, 0);
    return p;
  }
  // MAP_FIXED over recorded mappings replaces what it covers.
  const auto start = reinterpret_cast<uintptr_t>(p);
  cut(start, page_end(start, length), nullptr, 0);
  add_mapping(start, length, prot == PROT_NONE);
  return p;
}

// Programs built with _FILE_OFFSET_BITS=64 (CPython, much of Debian) call
// mmap64: the same function under another name where off_t is 64 bits.
// Without it a recording of CPython missed its 7 MiB of arenas.
void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off64_t offset) {
  if (sizeof(off_t) == sizeof(off64_t) || anonymous(flags))  // an anonymous mapping has no offset
    return mmap(addr, length, prot, flags, fd, static_cast<off_t>(offset));
  using Mmap64 = void* (*)(void*, size_t, int, int, int, off64_t);
  static std::atomic<Mmap64> real64{nullptr};
  Mmap64 call = real64.load(std::memory_order_relaxed);
  if (!call) real64.store(call = reinterpret_cast<Mmap64>(next_symbol("mmap64")), std::memory_order_relaxed);
  return call(addr, length, prot, flags, fd, offset);
}

int munmap(void* addr, size_t length) {
  if (!real.munmap) resolve_real_functions();
  if (!real.munmap) return static_cast<int>(syscall(SYS_munmap, addr, length));  // resolving
  Busy busy;
  const auto start = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t end = page_end(start, length);
  // Not over a recorded mapping (a file's, or a forked child's inherited
  // one): no file is opened for it. A call the kernel refuses at once
  // (unaligned, empty) changes nothing.
  if (!busy.entered() || !recording() || !plausible_range(start, length) || !ready_for_edit(start, end))
    return real.munmap(addr, length);
  MappingEdit edit(false);  // only the rare tail of a middle cut is made: walked by frame pointers
  if (!any_overlapping(start, end)) return real.munmap(addr, length);
  // Freed in the recording before the call, as any free: another thread may
  // be given the range as soon as it is unmapped.
  Mapping taken[kPutBack];
  size_t n = cut(start, end, taken, kPutBack);
  int result = real.munmap(addr, length);
  if (result != 0) put_back(start, end, taken, n < kPutBack ? n : kPutBack);
  return result;
}

void* mremap(void* old, size_t old_length, size_t new_length, int flags, ...) {
  if (!real.mremap) resolve_real_functions();
  void* wanted = nullptr;
  // The kernel reads the fifth argument with MREMAP_DONTUNMAP too (a hint there).
  if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
    va_list args;
    va_start(args, flags);
    wanted = va_arg(args, void*);
    va_end(args);
  }
  if (!real.mremap)  // resolving
    return reinterpret_cast<void*>(syscall(SYS_mremap, old, old_length, new_length, flags, wanted));
  Busy busy;
  const auto from = reinterpret_cast<uintptr_t>(old);
  const uintptr_t from_end = page_end(from, old_length);
  if (!busy.entered() || !recording() || !plausible_range(from, old_length) || !ready_for_edit(from, from_end))
    return real.mremap(old, old_length, new_length, flags, wanted);
  MappingEdit edit(true);
  if (!any_overlapping(from, from_end)) return real.mremap(old, old_length, new_length, flags, wanted);
  // In place, growing or keeping its pages, the call unmaps nothing another
  // thread could be given before it returns: recorded after it, so one the
  // kernel refuses (no room to grow there) leaves no trace. Each refusal
  // once read as a free and a new mapping at the mremap.
  const bool moves = flags & (MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP);
  const uintptr_t new_end = page_end(from, new_length);
  if (!moves && new_end == from_end) return real.mremap(old, old_length, new_length, flags, wanted);  // changes nothing
  if (!(flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) && new_end < from_end) {
    // Shrunk where it lies (the kernel never moves a mapping it shrinks):
    // its tail is unmapped, as by munmap, and what is left is the mapping
    // the program made, not a free and a new mapping at the mremap (which
    // read as a temporary of the whole old size).
    Mapping taken[kPutBack];
    size_t n = cut(new_end, from_end, taken, kPutBack);
    void* p = real.mremap(old, old_length, new_length, flags, wanted);
    if (p == MAP_FAILED) put_back(new_end, from_end, taken, n < kPutBack ? n : kPutBack);
    return p;
  }
  const bool after = !moves && new_end > from_end;
  // Otherwise the range moved (or resized) leaves the recorded mappings
  // before the call; the rest of a mapping it was part of stays.
  Mapping taken[kPutBack];
  bool reserved = false;
  size_t n = after ? 0 : cut(from, from_end, taken, kPutBack, &reserved);
  void* p = real.mremap(old, old_length, new_length, flags, wanted);
  if (p == MAP_FAILED) {
    if (!after) put_back(from, from_end, taken, n < kPutBack ? n : kPutBack);
    return p;
  }
  if (after) n = cut(from, from_end, taken, kPutBack, &reserved);
  const auto to = reinterpret_cast<uintptr_t>(p);
  cut(to, page_end(to, new_length), nullptr, 0);  // MREMAP_FIXED replaces what was there
  remap(to, new_length, from, from_end, taken, n, reserved);
  if (flags & MREMAP_DONTUNMAP) add_mapping(from, old_length, reserved);  // still mapped, emptied
  return p;
}

int mprotect(void* addr, size_t length, int prot) {
  if (!real.mprotect) resolve_real_functions();
  if (!real.mprotect) return static_cast<int>(syscall(SYS_mprotect, addr, length, prot));  // resolving
  return protect(addr, length, prot, [&] { return real.mprotect(addr, length, prot); });
}

// mprotect with a protection key (V8 on CPUs with PKU): the same pages change.
int pkey_mprotect(void* addr, size_t length, int prot, int pkey) {
  if (!real.pkey_mprotect) resolve_real_functions();
  if (!real.pkey_mprotect) return static_cast<int>(syscall(SYS_pkey_mprotect, addr, length, prot, pkey));  // resolving
  return protect(addr, length, prot, [&] { return real.pkey_mprotect(addr, length, prot, pkey); });
}

}  // extern "C"
