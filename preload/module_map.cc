#include "module_map.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <type_traits>
#include <cstring>

namespace edgemem::preload {
namespace {

constexpr size_t kMaxModules = 512;

struct Range {
  uintptr_t lo, hi;
};

// Executable ranges only ever grow (a dlclose'd range stays): readers on the
// hot path read them without a lock.
Range exec_ranges[kMaxModules * 2];
std::atomic<size_t> exec_count{0};

// As reported: a forked child reports it again from here, so the path and
// the build ID are copies (a thread of the parent may have unloaded the
// object since: the loader's memory for it is gone, and reading it crashed
// the child). Trivial, so the table needs no constructor at start-up: a
// dynamic one ran after the recorder's own constructor had filled it.
struct Known {
  uint64_t start, end;
  bool seen;
  uint64_t bias;
  uint32_t path_at, path_size;  // in path_pool; path_size 0: not kept (the pool was full)
  uint8_t build_id[kMaxBuildIdBytes];
  uint8_t build_id_size;
};
static_assert(std::is_trivially_default_constructible_v<Known>);
Known known[kMaxModules];
size_t known_count = 0;
// The paths of `known`, in its order (compacted with it).
char path_pool[64 * 1024];
size_t path_pool_used = 0;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
char exe_path[4096];
// The loader's counts of objects added and removed, as of the last scan.
struct LoadCounts {
  unsigned long long adds = 0, subs = 0;
  bool operator==(const LoadCounts&) const = default;
};
// Read without the lock: the check runs inside allocations, and a thread
// allocating in its own dl_iterate_phdr callback holds the loader's lock
// while it waits for ours (a deadlock with a thread scanning).
std::atomic<unsigned long long> scanned_adds{0}, scanned_subs{0};

int read_load_counts(dl_phdr_info* info, size_t size, void* data) {
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    *static_cast<LoadCounts*>(data) = {info->dlpi_adds, info->dlpi_subs};
  return 1;  // every object carries the same counts: the first is enough
}

LoadCounts load_counts() {
  LoadCounts c;
  dl_iterate_phdr(read_load_counts, &c);
  return c;
}

void add_exec_range(uintptr_t lo, uintptr_t hi) {
  size_t n = exec_count.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; ++i)
    if (exec_ranges[i].lo == lo && exec_ranges[i].hi == hi) return;
  if (n == sizeof exec_ranges / sizeof exec_ranges[0]) return;
  exec_ranges[n] = {lo, hi};
  exec_count.store(n + 1, std::memory_order_release);
}

struct ScanContext {
  ModuleSink* sink;
};

// A note segment inside a loaded, readable segment: mapped, so safe to read.
bool mapped(const dl_phdr_info* info, const ElfW(Phdr)& note) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_R) && note.p_vaddr >= ph.p_vaddr && note.p_memsz <= ph.p_filesz &&
        note.p_vaddr - ph.p_vaddr <= ph.p_filesz - note.p_memsz)
      return true;
  }
  return false;
}

// The object's GNU build ID, read from its note as mapped (so it is the
// build that ran, whatever is on disk later): nullptr when it has none.
const uint8_t* build_id(const dl_phdr_info* info, size_t& size) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE || !mapped(info, ph)) continue;
    auto at = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    if (const uint8_t* id = find_gnu_build_id(at, ph.p_memsz, ph.p_align, size)) return id;
  }
  return nullptr;
}

int visit(dl_phdr_info* info, size_t, void* data) {
  auto* ctx = static_cast<ScanContext*>(data);
  const char* path = info->dlpi_name;
  if (!path || !*path) path = exe_path;
  if (strncmp(path, "linux-vdso", 10) == 0 || strncmp(path, "linux-gate", 10) == 0) return 0;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uint64_t a = info->dlpi_addr + ph.p_vaddr, b = a + ph.p_memsz;
    if (a < lo) lo = a;
    if (b > hi) hi = b;
    if (ph.p_flags & PF_X) add_exec_range(a, b);
  }
  if (lo >= hi) return 0;
  if (strstr(path, "/libc.so")) libc_range = {lo, hi};
  if (strstr(path, "/libstdc++.so")) cxx_range = {lo, hi};
  auto self = reinterpret_cast<uintptr_t>(&visit);
  if (self >= lo && self < hi) self_range = {lo, hi};
  for (size_t i = 0; i < known_count; ++i) {
    if (known[i].start == lo && known[i].end == hi) {
      known[i].seen = true;
      return 0;
    }
  }
  if (known_count == kMaxModules) return 0;
  // The path and the build ID are the loader's and the object's own memory,
  // valid while it is loaded: the table keeps copies for a forked child.
  ModuleInfo module{info->dlpi_addr, lo, hi, path};
  module.build_id = build_id(info, module.build_id_size);
  Known& k = known[known_count++];
  k = {lo, hi, true, module.bias, 0, 0, {}, static_cast<uint8_t>(module.build_id_size)};
  if (module.build_id) memcpy(k.build_id, module.build_id, module.build_id_size);
  const size_t length = strlen(path);
  if (length && length <= sizeof path_pool - path_pool_used) {
    memcpy(path_pool + path_pool_used, path, length);
    k.path_at = static_cast<uint32_t>(path_pool_used);
    k.path_size = static_cast<uint32_t>(length);
    path_pool_used += length;
  }
  ctx->sink->loaded(module);
  return 0;
}

}  // namespace

AddressRange libc_range, cxx_range, self_range;

namespace {

// A forked child of a process with other threads may have inherited the
// loader's lock held by one of them (inside dlopen or dl_iterate_phdr), and
// no thread of the child will release it: dl_iterate_phdr (and libunwind,
// which calls it) would wait forever (an audit: a program forking while a
// thread dlopened hung after 4 forks). Until the child's own dlopen adds
// an object (which takes and releases that lock), it reports the modules
// the parent knew and its stacks are walked by frame pointers only.
std::atomic<bool> loader_untrusted{false};

// Under `lock`.
void scan_locked(ModuleSink& sink) {
  if (loader_untrusted.load(std::memory_order_relaxed)) return;
  if (!exe_path[0]) {
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[n > 0 ? n : 0] = 0;
  }
  for (size_t i = 0; i < known_count; ++i) known[i].seen = false;
  const LoadCounts counts = load_counts();
  scanned_adds.store(counts.adds, std::memory_order_relaxed);
  scanned_subs.store(counts.subs, std::memory_order_relaxed);
  ScanContext ctx{&sink};
  dl_iterate_phdr(visit, &ctx);
  size_t kept = 0, pool_kept = 0;
  for (size_t i = 0; i < known_count; ++i) {
    if (!known[i].seen) {
      sink.gone(known[i].start);
      continue;
    }
    Known& k = known[kept++] = known[i];
    // Paths lie in the pool in table order: each moves down, never over one still to move.
    memmove(path_pool + pool_kept, path_pool + k.path_at, k.path_size);
    k.path_at = static_cast<uint32_t>(pool_kept);
    pool_kept += k.path_size;
  }
  known_count = kept;
  path_pool_used = pool_kept;
}

}  // namespace

void scan_modules(ModuleSink& sink) {
  pthread_mutex_lock(&lock);
  scan_locked(sink);
  pthread_mutex_unlock(&lock);
}

void scan_modules_unless_busy(ModuleSink& sink) {
  if (pthread_mutex_trylock(&lock) != 0) return;  // another thread scans: it records them
  scan_locked(sink);
  pthread_mutex_unlock(&lock);
}

bool modules_added_since_scan() {
  if (loader_untrusted.load(std::memory_order_relaxed)) return false;
  const LoadCounts now = load_counts();
  return now.adds != scanned_adds.load(std::memory_order_relaxed) ||
         now.subs != scanned_subs.load(std::memory_order_relaxed);
}

void report_all_modules(ModuleSink& sink) {
  pthread_mutex_lock(&lock);
  if (loader_untrusted.load(std::memory_order_relaxed)) {
    for (size_t i = 0; i < known_count; ++i) {
      const Known& k = known[i];
      if (!k.path_size || k.path_size >= 4096) continue;
      static char path[4096];  // under `lock`; off the stack: this runs inside an allocation
      memcpy(path, path_pool + k.path_at, k.path_size);
      path[k.path_size] = 0;
      ModuleInfo module{k.bias, k.start, k.end, path};
      module.build_id = k.build_id_size ? k.build_id : nullptr;
      module.build_id_size = k.build_id_size;
      sink.loaded(module);
    }
  } else {
    known_count = 0;
    path_pool_used = 0;
    scan_locked(sink);
  }
  pthread_mutex_unlock(&lock);
}

size_t loaded_objects() {
  size_t n = 0;
  for (const link_map* m = _r_debug.r_map; m; m = m->l_next) ++n;  // a debugger's walk: no lock
  return n;
}

void distrust_loader_after_fork() { loader_untrusted.store(true, std::memory_order_relaxed); }
void trust_loader() { loader_untrusted.store(false, std::memory_order_relaxed); }
bool loader_trusted() { return !loader_untrusted.load(std::memory_order_relaxed); }

void lock_modules_for_fork() { pthread_mutex_lock(&lock); }
void unlock_modules_after_fork() { pthread_mutex_unlock(&lock); }

bool in_executable_code(uintptr_t address) {
  size_t n = exec_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i)
    if (address >= exec_ranges[i].lo && address < exec_ranges[i].hi) return true;
  return false;
}


}  // namespace edgemem::preload
