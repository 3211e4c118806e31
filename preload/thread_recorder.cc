#include "thread_recorder.h"

#include <malloc.h>

#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "attached_blocks.h"
#include "edgemem/emt_v2.h"
#include "module_map.h"
#include "real_functions.h"
#include "stack_walk.h"
#include "trace_file.h"

namespace edgemem::preload {

std::atomic<bool> recording_enabled{false};

namespace {

namespace e2 = edgemem::emt2;

// Call-stack tree: node = (parent node, return address), numbered per
// thread from 1; an open-addressing table in anonymous memory (never
// malloc, which is what is being recorded).
struct TreeEntry {
  uint64_t address;
  uint32_t parent, id;
};

// What compact records are encoded against (emt_v2.h, kRecent): the
// chunk's compact allocations by address (direct-mapped: a collision only
// costs a FREE its short form) and, per size slot, the block last freed.
// Entries from an earlier chunk are told apart by the chunk's epoch, so a
// new chunk starts afresh without clearing the tables.
struct RecentAlloc {
  uint64_t address, size;
  uint32_t number, epoch;
};
struct RecentFree {
  uint64_t address;
  uint32_t epoch;
};
constexpr uint32_t kRecentAllocSlots = 2048;
struct RecentTables {
  RecentAlloc allocs[kRecentAllocSlots];
  RecentFree frees[e2::kSizeSlots];
  // The last stack, outermost frame first, and the tree node of each of its
  // prefixes: the next stack looks up only the frames past what it shares.
  uintptr_t stack_frames[kMaxFrames];
  uint32_t stack_nodes[kMaxFrames];
  uint32_t stack_depth;
};

uint32_t alloc_slot(uint64_t address) {
  return static_cast<uint32_t>(((address >> 4) * 0x9E3779B97F4A7C15ull) >> 53);
}
static_assert(kRecentAllocSlots == 1u << (64 - 53));

struct ThreadState {
  bool busy;
  bool ready;     // slot, chunk and bounds are set for `generation`
  bool stopped;   // the file could not grow: this thread records nothing more
  uint32_t generation;
  uint32_t slot;
  uint8_t* chunk;
  uint32_t used;
  uint64_t last_address;  // of the chunk's previous ALLOC or FREE: addresses are deltas from it
  uint64_t last_seq;
  uint32_t epoch;         // of the current chunk, from 1
  uint32_t small_allocs;  // compact ALLOCs in the current chunk
  RecentTables* recent;
  StackBounds bounds;
  TreeEntry* tree;
  uint32_t tree_capacity;  // a power of two
  uint32_t tree_nodes;
  uint32_t renames_seen;  // `renames` when the thread last wrote its name
  char name[16];          // the name it last wrote
};

__thread ThreadState self __attribute__((tls_model("initial-exec")));

// Renames of any thread so far. A thread cannot write into another's chunk,
// so one renamed by another thread finds out here, at its next record, and
// writes its own new name (one load on the hot path; renames are rare).
std::atomic<uint32_t> renames{0};

pthread_key_t exit_key;
pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

void on_thread_exit(void*) { retire_thread(); }
void make_exit_key() { pthread_key_create(&exit_key, on_thread_exit); }

void write_record(const uint8_t* bytes, size_t n);

bool make_room(size_t n);

class ChunkSink final : public ModuleSink {
 public:
  void loaded(const ModuleInfo& m) override {
    size_t len = strlen(m.path);
    if (len > 4000) len = 4000;
    // The text is the path, then a NUL and the build ID when the object has one.
    size_t text = m.build_id ? len + 1 + m.build_id_size : len;
    uint8_t buf[4096 + 64 + kMaxBuildIdBytes];
    if (!make_room(text + 64)) return;
    size_t n = 0;
    buf[n++] = e2::kModule;
    n += e2::put_varint(buf + n, seq_delta(next_seq()));
    n += e2::put_varint(buf + n, m.bias);
    n += e2::put_varint(buf + n, m.start);
    n += e2::put_varint(buf + n, m.end);
    n += e2::put_varint(buf + n, text);
    memcpy(buf + n, m.path, len);
    if (m.build_id) {
      buf[n + len] = 0;
      memcpy(buf + n + len + 1, m.build_id, m.build_id_size);
    }
    write_record(buf, n + text);
  }
  void gone(uint64_t start) override {
    uint8_t buf[32];
    if (!make_room(sizeof buf)) return;
    size_t n = 0;
    buf[n++] = e2::kModuleGone;
    n += e2::put_varint(buf + n, seq_delta(next_seq()));
    n += e2::put_varint(buf + n, start);
    write_record(buf, n);
  }
  static uint64_t seq_delta(uint64_t seq);
};

// When the file can no longer be opened again or grow (a program that
// closed every descriptor and then chroots or drops privileges, a file size
// limit), the recording stops; what was written stays. The first thread
// that stops writes a STOPPED record into the chunk it holds, and every
// call not recorded from then on is counted in it, in place: the chunk
// stays mapped for good, so the count reaches the file however the
// process ends, and the reader says the recording is incomplete instead of
// reading what it has as the whole run.
struct StopNote {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  uint8_t* count = nullptr;  // the STOPPED record's 9 count bytes, in a chunk kept mapped
  uint64_t calls = 0;
};
constinit StopNote stop_note;

void write_stop_count(uint8_t* at, uint64_t calls) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<uint8_t>(((calls >> (7 * i)) & 0x7f) | 0x80);
  at[8] = static_cast<uint8_t>((calls >> 56) & 0x7f);
}

// One call (or record) this thread could not record.
void note_unrecorded() {
  if (trace_file_closed()) return;  // at exit, after the file was closed: not lost, never recorded
  pthread_mutex_lock(&stop_note.lock);
  ++stop_note.calls;
  if (stop_note.count) write_stop_count(stop_note.count, stop_note.calls);
  pthread_mutex_unlock(&stop_note.lock);
}

void stop_recording_thread() {
  self.stopped = true;
  pthread_mutex_lock(&stop_note.lock);
  if (!stop_note.count && self.chunk && self.used + e2::kStoppedBytes <= e2::kChunkPayloadBytes) {
    uint8_t* at = self.chunk + e2::kChunkHeaderBytes + self.used;
    at[0] = e2::kStopped;
    write_stop_count(at + 1, stop_note.calls);
    stop_note.count = at + 1;
    self.used += e2::kStoppedBytes;
    __atomic_store_n(reinterpret_cast<uint32_t*>(self.chunk + e2::kUsedAt), self.used, __ATOMIC_RELEASE);
    self.chunk = nullptr;  // kept mapped: never released
  }
  pthread_mutex_unlock(&stop_note.lock);
}

// Claims a chunk if the thread has none or it cannot hold `n` more bytes
// (and, after them, a STOPPED record).
bool make_room(size_t n) {
  constexpr size_t kRoom = e2::kChunkPayloadBytes - e2::kStoppedBytes;
  if (self.chunk && self.used + n <= kRoom) return true;
  if (n > kRoom) return false;
  if (self.stopped) {
    note_unrecorded();
    return false;
  }
  uint8_t* next = claim_chunk(self.slot, self.last_seq);
  if (!next) {
    if (trace_file_closed()) {  // the process is exiting: what comes now was never to be recorded
      self.stopped = true;
      return false;
    }
    stop_recording_thread();
    note_unrecorded();
    return false;
  }
  release_chunk(self.chunk);
  self.chunk = next;
  self.used = 0;
  self.last_address = 0;
  ++self.epoch;
  self.small_allocs = 0;
  return true;
}

void write_record(const uint8_t* bytes, size_t n) {
  if (!make_room(n)) return;
  memcpy(self.chunk + e2::kChunkHeaderBytes + self.used, bytes, n);
  self.used += static_cast<uint32_t>(n);
  // The reader trusts `used`: the record is complete before it counts.
  __atomic_store_n(reinterpret_cast<uint32_t*>(self.chunk + e2::kUsedAt), self.used, __ATOMIC_RELEASE);
}

// The chunk's base is the thread's sequence before its first record; a
// record's delta is taken once it is known which chunk it goes into.
uint64_t ChunkSink::seq_delta(uint64_t seq) {
  uint64_t d = seq - self.last_seq;
  self.last_seq = seq;
  return d;
}

// `address_at`: index of a field holding an address (-1 none), written as
// the zigzag delta from the chunk's previous one: heap blocks lie close
// together, so a few bytes instead of six.
void write_seq_record(uint8_t tag, uint64_t seq, uint64_t* fields, size_t count, int address_at = -1) {
  uint8_t buf[16 * 10 + 1];
  // Room first: a new chunk's base is last_seq (and its addresses start
  // from 0), which the deltas are taken from.
  size_t worst = 1 + 10 * (count + 1);
  if (!make_room(worst)) return;
  if (address_at >= 0) {
    uint64_t address = fields[address_at];
    fields[address_at] = e2::zigzag(address - self.last_address);
    self.last_address = address;
  }
  size_t n = 0;
  buf[n++] = tag;
  n += e2::put_varint(buf + n, seq - self.last_seq);
  self.last_seq = seq;
  for (size_t i = 0; i < count; ++i) n += e2::put_varint(buf + n, fields[i]);
  write_record(buf, n);
}

size_t put_seq(uint8_t* out, uint8_t& tag, uint64_t seq) {
  uint64_t d = seq - self.last_seq;
  self.last_seq = seq;
  if (d == 1) return 0;
  tag |= e2::kSeqGiven;
  return e2::put_varint(out, d);
}

size_t put_address(uint8_t* out, uint8_t& tag, uint64_t address) {
  tag |= e2::kAddressGiven;
  return e2::put_varint(out, e2::zigzag(address - self.last_address));
}

// A malloc-pool block of default alignment: no pool or alignment field, and
// the address left out when it is the block last freed with a size of this
// size slot (what an allocator's per-size free lists hand out next).
void write_small_alloc(uint64_t seq, uint64_t address, uint64_t size, uint32_t node) {
  uint8_t buf[1 + 4 * 10];
  if (!make_room(sizeof buf) || !self.recent) return;
  uint8_t tag = e2::kSmallAlloc;
  size_t n = 1;
  n += put_seq(buf + n, tag, seq);
  n += e2::put_varint(buf + n, size);
  const RecentFree& freed = self.recent->frees[e2::size_slot(size)];
  if (freed.epoch != self.epoch || freed.address != address) n += put_address(buf + n, tag, address);
  self.last_address = address;
  n += e2::put_varint(buf + n, node);
  buf[0] = tag;
  self.recent->allocs[alloc_slot(address)] = {address, size, self.small_allocs++, self.epoch};
  write_record(buf, n);
}

// A malloc-pool free: the distance back to its compact ALLOC when the chunk
// still holds it among its last kRecent, else the address.
void write_small_free(uint64_t seq, uint64_t address) {
  uint8_t buf[1 + 2 * 10];
  if (!make_room(sizeof buf) || !self.recent) return;
  uint8_t tag = e2::kSmallFree;
  size_t n = 1;
  n += put_seq(buf + n, tag, seq);
  RecentAlloc& a = self.recent->allocs[alloc_slot(address)];
  uint32_t distance = self.small_allocs - 1 - a.number;
  if (a.epoch == self.epoch && a.address == address && distance < e2::kRecent) {
    n += e2::put_varint(buf + n, distance);
    self.recent->frees[e2::size_slot(a.size)] = {address, self.epoch};
    a.epoch = 0;
  } else {
    n += put_address(buf + n, tag, address);
  }
  self.last_address = address;
  buf[0] = tag;
  write_record(buf, n);
}

void grow_tree() {
  uint32_t capacity = self.tree_capacity ? self.tree_capacity * 2 : 4096;
  void* m = real.mmap(nullptr, capacity * sizeof(TreeEntry), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return;
  auto* table = static_cast<TreeEntry*>(m);
  for (uint32_t i = 0; i < self.tree_capacity; ++i) {
    const TreeEntry& e = self.tree[i];
    if (!e.id) continue;
    uint64_t h = (e.address * 0x9E3779B97F4A7C15ull) ^ (e.parent * 0xC2B2AE3D27D4EB4Full);
    for (uint32_t j = static_cast<uint32_t>(h >> 32) & (capacity - 1);; j = (j + 1) & (capacity - 1)) {
      if (!table[j].id) {
        table[j] = e;
        break;
      }
    }
  }
  if (self.tree) real.munmap(self.tree, self.tree_capacity * sizeof(TreeEntry));
  self.tree = table;
  self.tree_capacity = capacity;
}

// The node for (parent, address), written as a NODE record the first time.
uint32_t tree_node(uint32_t parent, uint64_t address) {
  if (self.tree_nodes * 2 >= self.tree_capacity) grow_tree();
  if (!self.tree) return 0;
  uint64_t h = (address * 0x9E3779B97F4A7C15ull) ^ (parent * 0xC2B2AE3D27D4EB4Full);
  uint32_t mask = self.tree_capacity - 1;
  for (uint32_t j = static_cast<uint32_t>(h >> 32) & mask;; j = (j + 1) & mask) {
    TreeEntry& e = self.tree[j];
    if (e.id && e.address == address && e.parent == parent) return e.id;
    if (e.id) continue;
    e = {address, parent, ++self.tree_nodes};
    uint8_t buf[32];
    size_t n = 0;
    buf[n++] = e2::kNode;
    n += e2::put_varint(buf + n, e.id);
    n += e2::put_varint(buf + n, parent);
    n += e2::put_varint(buf + n, address);
    write_record(buf, n);
    return e.id;
  }
}

uint32_t stack_node_here() {
  uintptr_t frames[kMaxFrames];
  size_t n = capture_stack(frames, kMaxFrames, self.bounds);
  RecentTables* t = self.recent;
  uint32_t node = 0;
  if (!t) {
    for (size_t i = n; i-- > 0;) node = tree_node(node, frames[i]);
    return node;
  }
  size_t shared = 0;
  while (shared < n && shared < t->stack_depth && frames[n - 1 - shared] == t->stack_frames[shared]) ++shared;
  if (shared) node = t->stack_nodes[shared - 1];
  for (size_t j = shared; j < n; ++j) {
    node = tree_node(node, frames[n - 1 - j]);
    t->stack_frames[j] = frames[n - 1 - j];
    t->stack_nodes[j] = node;
  }
  t->stack_depth = static_cast<uint32_t>(n);
  return node;
}

// The thread's id and its name now: its first record, and again after a
// rename (readers take a thread's last THREAD record as its name).
void write_thread_record() {
  self.renames_seen = renames.load(std::memory_order_acquire);  // before reading the name: a later rename bumps it again
  char name[16] = {};
  syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);  // not through our own prctl
  size_t len = strnlen(name, sizeof name);
  memcpy(self.name, name, sizeof name);
  uint8_t buf[64];
  if (!make_room(sizeof buf)) return;
  size_t n = 0;
  buf[n++] = e2::kThread;
  uint64_t seq = next_seq();
  n += e2::put_varint(buf + n, seq - self.last_seq);
  self.last_seq = seq;
  n += e2::put_varint(buf + n, static_cast<uint64_t>(syscall(SYS_gettid)));
  n += e2::put_varint(buf + n, len);
  memcpy(buf + n, name, len);
  write_record(buf, n + len);
}

void write_name_if_renamed() {
  char name[16] = {};
  syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);
  if (memcmp(name, self.name, sizeof name) != 0) write_thread_record();
  else self.renames_seen = renames.load(std::memory_order_acquire);
}

void write_process_records() {
  timespec wall{}, mono{};
  clock_gettime(CLOCK_REALTIME, &wall);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  uint64_t fields[] = {static_cast<uint64_t>(wall.tv_sec) * 1000000000ull + static_cast<uint64_t>(wall.tv_nsec),
                       static_cast<uint64_t>(mono.tv_sec) * 1000000000ull + static_cast<uint64_t>(mono.tv_nsec)};
  write_seq_record(e2::kWall, next_seq(), fields, 2);
  if (recording_after_attach) {
    // The process had blocks before the recorder came: said once, so a
    // reader does not take the peak and live bytes for the whole heap's.
    const uint8_t attached[] = {e2::kAttached, 0};
    write_record(attached, sizeof attached);
  }
  ChunkSink sink;
  report_all_modules(sink);  // a forked child's file names every module again
}

}  // namespace

uint32_t current_stack_node() { return stack_node_here(); }

bool thread_recording() { return self.ready && self.generation == generation(); }

void forget_chunk_after_fork() {
  self.chunk = nullptr;
  // The parent's STOPPED record is in a mapping the child does not inherit.
  stop_note.lock = PTHREAD_MUTEX_INITIALIZER;
  stop_note.count = nullptr;
  stop_note.calls = 0;
}

// Sets the thread up for the current generation (first record, after a
// fork, after its exit destructor ran for an allocation in a later one).
bool ensure_ready() {
  uint32_t g = generation();
  if (self.ready && self.generation == g) {
    if (self.stopped) [[unlikely]] {
      note_unrecorded();
      return false;
    }
    if (renames.load(std::memory_order_relaxed) != self.renames_seen) write_name_if_renamed();
    return true;
  }
  if (self.ready) {
    // A forked child: the chunk and tree belong to the parent's recording.
    release_chunk(self.chunk);
    if (self.tree) real.munmap(self.tree, self.tree_capacity * sizeof(TreeEntry));
    if (self.recent) real.munmap(self.recent, sizeof(RecentTables));
  }
  pthread_once(&exit_key_once, make_exit_key);
  pthread_setspecific(exit_key, &self);
  self = ThreadState{};
  self.busy = true;
  self.ready = true;
  self.generation = g;
  self.slot = next_slot();
  // Its first chunk's base: where the process's sequence stands now, not 0,
  // so the chunk sorts among those written at the same time when the file
  // is packed (a late thread's chunk of base 0 came first and held back
  // every record of the threads before it in the reader's merge).
  self.last_seq = current_seq();
  self.bounds = current_stack_bounds();
  void* recent = real.mmap(nullptr, sizeof(RecentTables), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (recent != MAP_FAILED) self.recent = static_cast<RecentTables*>(recent);
  write_thread_record();
  if (take_process_records()) write_process_records();
  return !self.stopped;
}

Busy::Busy() : entered_(!self.busy) { self.busy = true; }
Busy::~Busy() {
  if (entered_) self.busy = false;
}

std::atomic<int> dlopens_running{0};

uint64_t take_seq() {
  // An object dlopen is loading is in the loader's list before its
  // constructors run, and they may allocate: its MODULE record goes first,
  // so their frames are named (dlopen returns only after they ran).
  // Not while the loader must not be asked (stack_walk.h, listing_objects).
  if (dlopens_running.load(std::memory_order_relaxed) > 0 && !listing_objects) [[unlikely]]
    if (modules_added_since_scan()) {
      ChunkSink sink;
      scan_modules_unless_busy(sink);
    }
  return next_seq();
}

void record_alloc_at(uint8_t pool, uint64_t seq, const void* address, uint64_t size, uint32_t node) {
  uint64_t fields[] = {pool, reinterpret_cast<uintptr_t>(address), size, 0, node};
  write_seq_record(e2::kAlloc, seq, fields, 5, 1);
}

void record_alloc(uint8_t pool, uint64_t seq, const void* address, uint64_t size, uint64_t align) {
  uint32_t node = current_stack_node();
  if (pool == e2::kPoolMalloc && align == 0 && self.recent)
    return write_small_alloc(seq, reinterpret_cast<uintptr_t>(address), size, node);
  uint64_t fields[] = {pool, reinterpret_cast<uintptr_t>(address), size, align, node};
  write_seq_record(e2::kAlloc, seq, fields, 5, 1);
}

void record_unseen_free(size_t usable_bytes) {
  uint8_t buf[1 + 10];
  buf[0] = e2::kUnseenFree;
  const size_t n = 1 + e2::put_varint(buf + 1, usable_bytes);
  write_record(buf, n);
}

void record_free(uint8_t pool, uint64_t seq, const void* address) {
  if (pool == e2::kPoolMalloc && self.recent) return write_small_free(seq, reinterpret_cast<uintptr_t>(address));
  uint64_t fields[] = {pool, reinterpret_cast<uintptr_t>(address)};
  write_seq_record(e2::kFree, seq, fields, 2, 1);
}

void record_alloc_failed(uint8_t pool, uint64_t seq, uint64_t size, uint64_t align) {
  uint64_t fields[] = {pool, size, align, current_stack_node()};
  write_seq_record(e2::kAllocFail, seq, fields, 4);
}

void record_resize(uint8_t pool, uint64_t seq, const void* old_address, const void* address, uint64_t size) {
  uint64_t fields[] = {pool, reinterpret_cast<uintptr_t>(old_address), reinterpret_cast<uintptr_t>(address), size};
  write_seq_record(e2::kResize, seq, fields, 4);
}

void record_inference(bool begin, uint64_t index) {
  if (!ensure_ready()) return;
  write_seq_record(begin ? e2::kInferBegin : e2::kInferEnd, next_seq(), &index, 1);
}

void record_module_changes() {
  if (!ensure_ready()) return;
  ChunkSink sink;
  scan_modules(sink);
}

void note_thread_renamed(bool renamed_self) {
  renames.fetch_add(1, std::memory_order_release);
  if (!renamed_self) return;
  Busy busy;
  if (busy.entered() && recording_enabled) ensure_ready();  // writes the new name
}

void retire_thread() {
  if (!self.ready) return;
  bool was_busy = self.busy;
  self.busy = true;
  release_chunk(self.chunk);
  if (self.tree) real.munmap(self.tree, self.tree_capacity * sizeof(TreeEntry));
  if (self.recent) real.munmap(self.recent, sizeof(RecentTables));
  self = ThreadState{};
  self.busy = was_busy;
}

}  // namespace edgemem::preload
