// The library's life: opens the recording at the first allocation or when
// loaded, whichever comes first (before main; or when gdb dlopens it into a
// running process), records module changes on dlopen/dlclose, gives
// the program the optional inference markers (examples/linux/edgemem_marker.h)
// and cuts the file to its chunks at exit. A SIGKILL or _exit skips the
// last step; the reader then skips the zero-filled chunks nobody claimed.
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>

#include <atomic>

#include "attached_blocks.h"
#include "got_patcher.h"
#include "module_map.h"
#include "real_functions.h"
#include "stack_walk.h"
#include "thread_recorder.h"
#include "trace_file.h"

using namespace edgemem::preload;

namespace edgemem::preload {

bool start_recording() {
  static std::atomic<bool> tried{false};
  if (tried.load(std::memory_order_relaxed) || tried.exchange(true)) return recording_enabled;
  resolve_real_functions();
  Busy busy;
  if (!open_trace_file()) return false;
  tracking_attached_blocks = recording_after_attach = attached();
  prepare_unwinder();
  recording_enabled = true;
  ensure_ready();  // this thread's records and the module map, before main
  // Injected into a running process: its calls are bound to libc already.
  if (attached()) patch_loaded_objects();
  return true;
}

// Under `record --inference-fn` the recorder marks the inferences itself
// (EDGEMEM_OWN_MARKERS=0): the program's own markers would count each twice.
// Only in the probed process: a forked child and an exec'd program are not
// probed, so their markers count (the setting is read once and removed).
bool program_markers = true;

}  // namespace edgemem::preload

namespace {

__attribute__((constructor)) void start_at_load() {
  if (const char* v = getenv("EDGEMEM_OWN_MARKERS")) {
    program_markers = v[0] != '0';
    // Before main: no other thread reads the environment yet. (Injected by
    // --pid, the process's children never load the recorder anyway.)
    if (!attached()) unsetenv("EDGEMEM_OWN_MARKERS");
  }
  start_recording();
}

__attribute__((destructor)) void stop_recording() {
  if (!recording_enabled) return;
  Busy busy;
  close_trace_file();
}

void record_modules() {
  Busy busy;
  if (busy.entered() && recording_enabled) record_module_changes();
}

}  // namespace

extern "C" {

void* dlopen(const char* file, int mode) {
  if (!real.dlopen) resolve_real_functions();
  dlopens_running.fetch_add(1, std::memory_order_relaxed);
  const size_t before = loaded_objects();
  void* handle = real.dlopen(file, mode);
  dlopens_running.fetch_sub(1, std::memory_order_relaxed);
  // An object added to the list took the loader's write lock (the one
  // dl_iterate_phdr waits for) and released it: a forked child may ask the
  // loader again. A dlopen of what is loaded already, or a dlclose, says
  // nothing about that lock.
  if (handle && loaded_objects() > before) trust_loader();
  if (handle) {
    record_modules();
    if (recording_enabled && attached()) patch_loaded_objects();
  }
  return handle;
}

// Only to know which threads hold the loader's lock (stack_walk.h).
int dl_iterate_phdr(int (*callback)(dl_phdr_info*, size_t, void*), void* data) {
  if (!real.dl_iterate_phdr) resolve_real_functions();
  const bool outer = !listing_objects;
  listing_objects = true;
  const int result = real.dl_iterate_phdr(callback, data);
  if (outer) listing_objects = false;
  return result;
}

int dlclose(void* handle) {
  if (!real.dlclose) resolve_real_functions();
  int result = real.dlclose(handle);
  record_modules();
  return result;
}

__attribute__((visibility("default"))) void edgemem_inference_begin(uint64_t index) {
  Busy busy;
  if (busy.entered() && recording_enabled && program_markers) record_inference(true, index);
}

__attribute__((visibility("default"))) void edgemem_inference_end(uint64_t index) {
  Busy busy;
  if (busy.entered() && recording_enabled && program_markers) record_inference(false, index);
}

}  // extern "C"
