// The recording file of this process: a page of header, then 64 KiB chunks
// claimed by threads with one atomic add each and written through a shared
// mapping, so every record written before a SIGKILL, a crash or _exit is in
// the page cache and reaches the file (docs/formats/emt.md, version 2).
#pragma once

#include <cstddef>
#include <cstdint>

// Internal to the library: bound at link time, no PLT call on the hot path.
#pragma GCC visibility push(hidden)

namespace edgemem::preload {

// Opens the file named by EDGEMEM_OUTPUT (set by `edgemem record`); false
// when unset or when it cannot be created, and then nothing is recorded.
bool open_trace_file();
// The lowest descriptor number kept out of the program's way (1,024, or 64
// below its limit); the limit itself when that leaves no room.
int descriptor_floor();
bool trace_file_open();
// Closed at exit (close_trace_file): no chunk is handed out any more, and
// that is no failure of the recording.
bool trace_file_closed();

// Maps a fresh chunk for thread `slot`; nullptr when the file cannot grow
// (the thread then stops recording and says so once on stderr).
uint8_t* claim_chunk(uint32_t slot, uint64_t base_seq);
void release_chunk(uint8_t* chunk);

// Global order of records across threads: taken after an allocation
// returns and before a free starts, so a reused address is always freed
// before it is handed out again in the recording.
uint64_t next_seq();
// The last number next_seq() handed out (a new thread's first chunk base).
uint64_t current_seq();
uint32_t next_slot();

// Bumped in a forked child, which records into FILE.PID from its first
// allocation on; threads notice and start afresh.
uint32_t generation();
// True once per generation: the caller writes the process records (wall
// clock, module map) into its chunk.
bool take_process_records();

// The anonymous-mapping table's lock (mmap_interposers.cc), around fork().
// A call changing mappings records while it holds its lock: taken before any other.
void lock_mapping_edits_for_fork();
void unlock_mapping_edits_after_fork();
void lock_mappings_for_fork();
void unlock_mappings_after_fork();
// In a forked child, with the lock held: the parent's mappings are in the
// parent's recording, so their munmap is not the child's to record.
void forget_mappings_after_fork();
// Whether the program's own inference markers are recorded (library.cc): not
// in a process `record --inference-fn` probes; again in its forked children.
extern bool program_markers;

// At exit: no more chunks; the file is cut to the chunks claimed.
void close_trace_file();

}  // namespace edgemem::preload

#pragma GCC visibility pop
