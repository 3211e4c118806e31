#include "trace_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "attached_blocks.h"
#include "edgemem/emt_v2.h"
#include "module_map.h"
#include "real_functions.h"
#include "stack_walk.h"
#include "thread_recorder.h"

namespace edgemem::preload {
namespace {

namespace e2 = edgemem::emt2;

// The file grows in steps (sparse) so a chunk claim rarely needs a syscall
// beyond its mmap.
constexpr uint64_t kGrowBytes = 4 * 1024 * 1024;
constexpr uint64_t kClosed = uint64_t{1} << 40;

struct File {
  int fd = -1;
  bool pending_open = false;  // forked child: open FILE.PID on first use
  char base_path[4096] = {};
  char path[4200] = {};  // the file this process records into
  dev_t dev = 0;         // and its identity: the program may close the
  ino_t ino = 0;         // descriptor, or open one of its own files on its number
  std::atomic<uint64_t> next_chunk{0};
  std::atomic<uint64_t> bytes{0};
  alignas(64) std::atomic<uint32_t> generation{1};
  std::atomic<uint32_t> slot{0};
  std::atomic<uint32_t> process_records_for{0};
  pthread_mutex_t grow = PTHREAD_MUTEX_INITIALIZER;
};

File file;

}  // namespace
}  // namespace edgemem::preload

// The global sequence counter, written by every thread on every record: on a
// cache line of its own, so the fields each allocation only reads
// (generation) do not bounce between cores with it. Exported by name: the
// gdb script of `edgemem record --inference-fn` takes numbers from it for
// the calls it sees while every thread is stopped (src/record/inference_probe.h).
extern "C" {
alignas(64) __attribute__((visibility("default"))) std::atomic<uint64_t> edgemem_record_seq{0};
}

namespace edgemem::preload {
namespace {

// The program's file size limit (RLIMIT_FSIZE): no file may be made or
// truncated to a larger size without SIGXFSZ, which kills by default.
uint64_t file_size_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return limit.rlim_cur;
}

void complain(const char* what) {
  char line[512];
  int n = snprintf(line, sizeof line, "edgemem-preload: %s (%s); recording stopped\n", what, strerror(errno));
  if (n > 0) (void)!write(2, line, static_cast<size_t>(n) < sizeof line ? n : sizeof line - 1);
}

// The first process takes PATH; a forked child or an exec'd program takes
// PATH.PID (PATH.PID.N if an earlier image of the same pid has it).
int create_file(const char* base, char (&path)[4200]) {
  snprintf(path, sizeof path, "%s", base);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  for (int n = 0; fd < 0 && errno == EEXIST && n < 10; ++n) {
    if (n == 0) snprintf(path, sizeof path, "%s.%d", base, static_cast<int>(getpid()));
    else snprintf(path, sizeof path, "%s.%d.%d", base, static_cast<int>(getpid()), n);
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  }
  return fd;
}

}  // namespace

int descriptor_floor() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 512;
  if (limit.rlim_cur <= 64) return static_cast<int>(limit.rlim_cur);  // no room: none is out of the way
  return static_cast<int>(limit.rlim_cur > 1024 + 64 ? 1024 : limit.rlim_cur - 64);
}

namespace {

// Out of the way of the program: open() hands out the lowest free number,
// so a low one would be the program's next file after it closed ours (or
// its stdin, when started with it closed). Near the top of its limit.
int out_of_the_way(int fd) {
  int high = fcntl(fd, F_DUPFD_CLOEXEC, descriptor_floor());
  if (high < 0) return fd;
  close(fd);
  return high;
}

bool is_ours(int fd) {
  struct stat st {};
  return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == file.dev && st.st_ino == file.ino;
}

// The descriptor to grow and map the file through, under file.grow: the
// program may have closed ours (daemons close every descriptor) or put a
// file of its own on its number, which must never be written. Opened again
// by path then; -1 if that fails too.
int usable_fd() {
  if (is_ours(file.fd)) return file.fd;
  int fd = open(file.path, O_RDWR | O_CLOEXEC);
  if (fd >= 0 && !is_ours(fd)) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    file.fd = -1;
    return -1;
  }
  fd = out_of_the_way(fd);
  flock(fd, LOCK_SH);  // closing the old descriptor let go of it
  file.fd = fd;
  return fd;
}

bool write_header(int fd) {
  uint8_t page[64] = {0x7E, 'e', 'm', 't', '!', 0x00, 0x01};
  size_t n = 7;
  n += e2::put_varint(page + n, e2::kVersion3);
  n += e2::put_varint(page + n, 0);  // Event time is the sequence number: no clock
  page[n++] = e2::kLayoutChunked;
  if (e2::kHeaderBytes > file_size_limit()) {  // even the header would raise SIGXFSZ
    errno = EFBIG;
    return false;
  }
  if (ftruncate(fd, static_cast<off_t>(e2::kHeaderBytes)) != 0) return false;
  return pwrite(fd, page, n, 0) == static_cast<ssize_t>(n);
}

bool open_locked() {
  int fd = create_file(file.base_path, file.path);
  struct stat st {};
  if (fd < 0 || !write_header(fd) || fstat(fd, &st) != 0) {
    complain("cannot create the recording");
    if (fd >= 0) {
      close(fd);
      unlink(file.path);  // no empty file left for `record` to take for a recording
    }
    return false;
  }
  file.dev = st.st_dev;
  file.ino = st.st_ino;
  fd = out_of_the_way(fd);
  // Held while the process lives: `edgemem record` packs the file only
  // once no process writes it (src/record/trace_packer.h).
  flock(fd, LOCK_SH);
  file.fd = fd;
  file.bytes.store(e2::kHeaderBytes);
  file.next_chunk.store(0);
  return true;
}

// Whether the calling thread is the process's only one (/proc/self/task
// holds one entry besides . and ..), by raw system calls: a fork handler
// must not allocate. False when it cannot tell.
bool only_thread() {
  const int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  alignas(8) char buf[512];
  int tasks = 0;
  for (long n; (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0 && tasks <= 1;)
    for (long at = 0; at < n;) {
      const char* name = buf + at + 19;  // linux_dirent64: d_ino 8, d_off 8, d_reclen 2, d_type 1, then d_name
      const auto reclen = *reinterpret_cast<const unsigned short*>(buf + at + 16);
      if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) ++tasks;
      at += reclen;
    }
  close(fd);
  return tasks == 1;
}
bool single_threaded_at_fork = false;

// Every lock of the recorder is taken around fork(), so the child finds
// none held by a thread it does not have.
void before_fork() {
  // A process of one thread holds no loader lock while it forks: its
  // child may ask the loader (and unwind with libunwind) from the start.
  // Nor one forking from inside a dl_iterate_phdr callback of its own.
  single_threaded_at_fork = !listing_objects && only_thread();
  lock_mapping_edits_for_fork();
  lock_modules_for_fork();
  lock_mappings_for_fork();
  lock_attached_blocks_for_fork();
  pthread_mutex_lock(&file.grow);
}
void after_fork_parent() {
  pthread_mutex_unlock(&file.grow);
  unlock_attached_blocks_after_fork();
  unlock_mappings_after_fork();
  unlock_modules_after_fork();
  unlock_mapping_edits_after_fork();
}
void after_fork_child() {
  dlopens_running.store(0, std::memory_order_relaxed);  // the threads inside a dlopen are the parent's
  if (!single_threaded_at_fork) distrust_loader_after_fork();
  track_blocks_made_after_fork();
  unlock_attached_blocks_after_fork();
  forget_mappings_after_fork();
  unlock_mappings_after_fork();
  unlock_modules_after_fork();
  unlock_mapping_edits_after_fork();
  // The parent's descriptor and chunks stay the parent's.
  forget_chunk_after_fork();
  program_markers = true;  // the probe does not follow a fork
  if (is_ours(file.fd)) close(file.fd);  // a descriptor the program reused is the program's
  file.fd = -1;
  file.pending_open = true;
  edgemem_record_seq.store(0);
  file.generation.fetch_add(1);
  pthread_mutex_unlock(&file.grow);
}

}  // namespace

bool open_trace_file() {
  const char* path = getenv("EDGEMEM_OUTPUT");
  if (!path || !*path || strlen(path) >= sizeof file.base_path) return false;
  strcpy(file.base_path, path);
  if (!open_locked()) return false;
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  return true;
}

bool trace_file_open() { return file.fd >= 0 || file.pending_open; }
bool trace_file_closed() { return file.next_chunk.load(std::memory_order_relaxed) >= kClosed; }

uint8_t* claim_chunk(uint32_t slot, uint64_t base_seq) {
  if (file.pending_open) {
    pthread_mutex_lock(&file.grow);
    if (file.pending_open && open_locked()) file.pending_open = false;
    pthread_mutex_unlock(&file.grow);
    if (file.fd < 0) return nullptr;
  }
  uint64_t k = file.next_chunk.fetch_add(1);
  if (k >= kClosed) return nullptr;
  uint64_t offset = e2::kHeaderBytes + k * e2::kChunkBytes, end = offset + e2::kChunkBytes;
  // Under the lock, with the descriptor checked: a chunk claim is a few
  // thousand records apart, and a write through a descriptor that is no
  // longer ours would land in the program's file.
  pthread_mutex_lock(&file.grow);
  const int fd = usable_fd();
  bool ok = fd >= 0;
  bool over_limit = false;
  if (ok && end > file.bytes.load(std::memory_order_acquire)) {
    uint64_t now = file.bytes.load();
    uint64_t grown = now + kGrowBytes > end ? now + kGrowBytes : end;
    // Growing past the program's file size limit (RLIMIT_FSIZE) would kill
    // it with SIGXFSZ: the recording stops there instead.
    if (const uint64_t limit = file_size_limit(); grown > limit) {
      grown = std::max(end, limit);
      over_limit = end > limit;
      if (over_limit) errno = EFBIG;
    }
    ok = !over_limit && ftruncate(fd, static_cast<off_t>(grown)) == 0;
    if (ok) file.bytes.store(grown, std::memory_order_release);
  }
  void* m = ok ? real.mmap(nullptr, e2::kChunkBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset))
               : MAP_FAILED;
  pthread_mutex_unlock(&file.grow);
  if (!ok) {
    complain(fd < 0        ? "cannot open the recording again after the program closed it"
             : over_limit ? "the recording would pass the program's file size limit (ulimit -f)"
                          : "cannot grow the recording");
    return nullptr;
  }
  if (m == MAP_FAILED) {
    complain("cannot map a chunk of the recording");
    return nullptr;
  }
  // Not inherited by a forked child: a mapping of the file would hold the
  // parent's lock on it (so `edgemem record` would not pack it) for as long
  // as the child lives, and the child records into its own file anyway.
  madvise(m, e2::kChunkBytes, MADV_DONTFORK);
  auto* c = static_cast<uint8_t*>(m);
  e2::put_u32(c + e2::kSlotAt, slot);
  e2::put_u32(c + e2::kIndexAt, static_cast<uint32_t>(k));
  e2::put_u32(c + e2::kUsedAt, 0);
  e2::put_u64(c + e2::kBaseSeqAt, base_seq);
  std::atomic_thread_fence(std::memory_order_release);
  memcpy(c + e2::kMagicAt, e2::kChunkMagic, sizeof e2::kChunkMagic);
  return c;
}

void release_chunk(uint8_t* chunk) {
  if (chunk) real.munmap(chunk, e2::kChunkBytes);
}

uint64_t next_seq() { return edgemem_record_seq.fetch_add(1, std::memory_order_relaxed) + 1; }
uint64_t current_seq() { return edgemem_record_seq.load(std::memory_order_relaxed); }
uint32_t next_slot() { return file.slot.fetch_add(1, std::memory_order_relaxed) + 1; }
uint32_t generation() { return file.generation.load(std::memory_order_relaxed); }

bool take_process_records() {
  uint32_t g = generation();
  return file.process_records_for.exchange(g) != g;
}

void close_trace_file() {
  if (file.fd < 0) return;
  pthread_mutex_lock(&file.grow);
  uint64_t claimed = file.next_chunk.fetch_add(kClosed);
  const int fd = usable_fd();
  // A truncate to a size past the file size limit raises SIGXFSZ even when
  // it shrinks the file: then the file keeps its size.
  const uint64_t size = e2::kHeaderBytes + claimed * e2::kChunkBytes;
  if (claimed < kClosed && fd >= 0 && size <= file_size_limit() && ftruncate(fd, static_cast<off_t>(size)) == 0)
    file.bytes.store(size);
  pthread_mutex_unlock(&file.grow);
}

}  // namespace edgemem::preload
