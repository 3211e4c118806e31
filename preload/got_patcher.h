// Attaching to a running process (`edgemem record --pid`): the library is
// dlopen'd into it by gdb, too late to come first in symbol lookup, so the
// program's calls still go to libc. Every loaded object's GOT entries for
// the intercepted functions are pointed at ours instead, as heaptrack's
// injection does; objects dlopen'd later are patched from our dlopen.
#pragma once

// Internal to the library: bound at link time, no PLT call on the hot path.
#pragma GCC visibility push(hidden)

namespace edgemem::preload {

// True when this library was injected (EDGEMEM_ATTACH set by the injector).
bool attached();
// Patches the objects not patched yet.
void patch_loaded_objects();

}  // namespace edgemem::preload

#pragma GCC visibility pop
