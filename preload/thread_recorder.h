// One thread's side of the recording: its chunk of the file, its call-stack
// tree and its re-entrancy guard. Nothing here takes a lock: a record is
// encoded and copied into the thread's own chunk; only claiming the next
// chunk touches shared state (one atomic add).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

// Internal to the library: bound at link time, no PLT call on the hot path.
#pragma GCC visibility push(hidden)

namespace edgemem::preload {

// Set once the file is open (start_recording(), library.cc).
// Atomic: another thread that sees it set sees the open file too.
extern std::atomic<bool> recording_enabled;

// Opens the recording, once per process image: from the library's
// constructor, or earlier, from the first call a library's own constructor
// makes. The program's libraries (libstdc++, protobuf, ONNX Runtime) run
// their constructors before ours; what they allocate there and free later
// would otherwise read as frees of blocks never allocated. True when
// recording.
bool start_recording();
inline bool recording() { return recording_enabled.load(std::memory_order_acquire) || start_recording(); }

// Marks this thread as inside the recorder: allocations made by the
// recorder, libunwind or libc on its behalf go straight through. Also
// refuses allocations in a signal handler that interrupted the recorder.
class Busy {
 public:
  Busy();
  ~Busy();
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;
  // False when this thread was already inside: do not record.
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

// Calls made with a Busy guard held (entered() true). ensure_ready() comes
// first, before the sequence number of the record is taken: setting a
// thread up writes records of its own, and a thread's records go to its
// chunks in sequence order.
bool ensure_ready();
// Whether this thread is set up to record in this process (a cheap look; ensure_ready() sets it up).
bool thread_recording();
// In a forked child, at once: forgets the forking thread's chunk (the
// parent's, and not mapped in the child: chunks are MADV_DONTFORK).
void forget_chunk_after_fork();
// A record's place in the global order.
uint64_t take_seq();
// Threads inside dlopen: while any is, take_seq() first records objects
// loaded since the last scan.
extern std::atomic<int> dlopens_running;
void record_alloc(uint8_t pool, uint64_t seq, const void* address, uint64_t size, uint64_t align);
// The same at a stack walked before (current_stack_node()).
void record_alloc_at(uint8_t pool, uint64_t seq, const void* address, uint64_t size, uint32_t node);
// The calling stack's node in this thread's tree (NODE records as needed).
uint32_t current_stack_node();
void record_free(uint8_t pool, uint64_t seq, const void* address);
void record_alloc_failed(uint8_t pool, uint64_t seq, uint64_t size, uint64_t align);
void record_resize(uint8_t pool, uint64_t seq, const void* old_address, const void* address, uint64_t size);
void record_inference(bool begin, uint64_t index);
// After an attach: a free (or realloc) of a malloc block made before it,
// not in the recording; counted with the block's usable size (the
// program's allocator answers for its own block: ours is not asked).
void record_unseen_free(size_t usable_bytes);
// Module map after dlopen/dlclose.
void record_module_changes();
// After pthread_setname_np or prctl(PR_SET_NAME) succeeded (no guard
// needed): the renamed thread writes a THREAD record with its new name, this
// thread at once when it renamed itself, another at its next record.
void note_thread_renamed(bool renamed_self);

// Thread exit: unmaps the chunk and the stack tree.
void retire_thread();

}  // namespace edgemem::preload

#pragma GCC visibility pop
