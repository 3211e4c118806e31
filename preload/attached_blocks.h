// After an attach (`edgemem record --pid`), the malloc blocks allocated
// since: the program frees blocks it made before the recorder was loaded,
// and a free of a block the recording never saw allocated reads as a lost
// allocation. Such frees are left out of the recording, as the eBPF
// recorder leaves them out. A recording started with the program tracks
// nothing here.
#pragma once

#include <cstdint>

#pragma GCC visibility push(hidden)

namespace edgemem::preload {

// Set once by the library's constructor, before any record.
extern bool tracking_attached_blocks;

// Both with the thread's Busy guard held.
void attached_block_made(const void* p);
// True if `p` was made since the attach (it is then forgotten).
bool attached_block_freed(const void* p);

// Held across fork, so the child's table is whole (trace_file.cc).
void lock_attached_blocks_for_fork();
void unlock_attached_blocks_after_fork();

}  // namespace edgemem::preload

#pragma GCC visibility pop
