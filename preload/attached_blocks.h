// After an attach (`edgemem record --pid`), the malloc blocks allocated
// since: the program frees blocks it made before the recorder was loaded,
// and a free of a block the recording never saw allocated reads as a lost
// allocation. Such frees are left out of the recording, as the eBPF
// recorder leaves them out. A forked child, which records into a file of
// its own, tracks the blocks it makes the same way: the blocks it inherited
// are in its parent's recording. A recording started with the program
// tracks nothing here until it forks.
#pragma once

#include <cstdint>

#pragma GCC visibility push(hidden)

namespace edgemem::preload {

// Set when the recording starts after an attach, and in a forked child.
extern bool tracking_attached_blocks;
// Set when the recording starts after an attach only (not in a forked
// child, whose unseen blocks are in its parent's recording): the recording
// says so (an ATTACHED record) and counts the frees of blocks made before
// it (UNSEEN FREE records), docs/formats/emt.md.
extern bool recording_after_attach;

// Both with the thread's Busy guard held.
void attached_block_made(const void* p);
// True if `p` was made since the attach (it is then forgotten).
bool attached_block_freed(const void* p);

// Held across fork, so the child's table is whole (trace_file.cc).
void lock_attached_blocks_for_fork();
void unlock_attached_blocks_after_fork();
// In a forked child, with the locks still held: forget the parent's blocks
// and track the child's own from now on.
void track_blocks_made_after_fork();

}  // namespace edgemem::preload

#pragma GCC visibility pop
