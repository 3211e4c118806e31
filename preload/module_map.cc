#include "module_map.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
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

struct Known {
  uint64_t start, end;
  bool seen;
};
Known known[kMaxModules];
size_t known_count = 0;
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
  known[known_count++] = {lo, hi, true};
  ModuleInfo module{info->dlpi_addr, lo, hi, path};
  module.build_id = build_id(info, module.build_id_size);
  ctx->sink->loaded(module);
  return 0;
}

}  // namespace

AddressRange libc_range, cxx_range, self_range;

namespace {

// Under `lock`.
void scan_locked(ModuleSink& sink) {
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
  size_t kept = 0;
  for (size_t i = 0; i < known_count; ++i) {
    if (known[i].seen) known[kept++] = known[i];
    else sink.gone(known[i].start);
  }
  known_count = kept;
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
  const LoadCounts now = load_counts();
  return now.adds != scanned_adds.load(std::memory_order_relaxed) ||
         now.subs != scanned_subs.load(std::memory_order_relaxed);
}

void forget_reported_modules() {
  pthread_mutex_lock(&lock);
  known_count = 0;
  pthread_mutex_unlock(&lock);
}

void lock_modules_for_fork() { pthread_mutex_lock(&lock); }
void unlock_modules_after_fork() { pthread_mutex_unlock(&lock); }

bool in_executable_code(uintptr_t address) {
  size_t n = exec_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i)
    if (address >= exec_ranges[i].lo && address < exec_ranges[i].hi) return true;
  return false;
}


}  // namespace edgemem::preload
