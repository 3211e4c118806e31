#include "record/mmap_watch.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace edgemem {

namespace {
constexpr size_t kDataPages = 64;  // 256 KiB per CPU: thousands of mappings (large mallocs' too) between two reads

// PERF_RECORD_MMAP2 without sample_id_all: after the header, these fields,
// then the NUL-terminated file name.
struct Mmap2 {
  uint32_t pid, tid;
  uint64_t addr, len, pgoff;
  uint32_t maj, min;
  uint64_t ino, ino_generation;
  uint32_t prot, flags;
};
// The largest record: an MMAP2 with a path of PATH_MAX, and its time.
constexpr uint64_t kLargestRecord = sizeof(perf_event_header) + sizeof(Mmap2) + 4096 + sizeof(uint64_t);
}  // namespace

std::unique_ptr<MmapWatch> MmapWatch::open(int pid, std::string& why) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.mmap_data = 1;  // the mapping at file offset 0 is read-only data: it places the object
  attr.comm = 1;
  attr.comm_exec = 1;  // an exec replaces the image: its mappings start again
  attr.sample_id_all = 1;
  attr.sample_type = PERF_SAMPLE_TIME;  // each ring is in order, the rings are merged by time
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const size_t size = (1 + kDataPages) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::unique_ptr<MmapWatch> watch(new MmapWatch(pid));
  const long cpus = sysconf(_SC_NPROCESSORS_CONF);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      if (errno == ENODEV || errno == EINVAL) continue;  // an offline CPU
      why = fmt::format("perf_event_open: {}", strerror(errno));
      return nullptr;
    }
    void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
    if (data == MAP_FAILED) {
      why = fmt::format("mmap of the perf buffer: {}", strerror(errno));
      close(static_cast<int>(fd));
      return nullptr;
    }
    watch->rings_.push_back({static_cast<int>(fd), data, size});
  }
  if (watch->rings_.empty()) {
    why = "perf_event_open: no CPU accepted the event";
    return nullptr;
  }
  return watch;
}

MmapWatch::~MmapWatch() {
  for (Ring& r : rings_) {
    munmap(r.data, r.size);
    close(r.fd);
  }
}

void MmapWatch::read_records(Ring& ring, std::vector<Change>& changes) {
  auto* meta = static_cast<perf_event_mmap_page*>(ring.data);
  auto* data = static_cast<const char*>(ring.data) + meta->data_offset;
  const uint64_t data_size = meta->data_size;
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  if (data_size - (head - tail) < kLargestRecord) found_full_ = true;
  std::vector<char> record;
  while (tail + sizeof(perf_event_header) <= head) {
    // A record may wrap around the end of the buffer: copy it out whole.
    auto copy = [&](uint64_t from, size_t n) {
      record.resize(n);
      for (size_t done = 0; done < n;) {
        size_t at = (from + done) % data_size, chunk = std::min<size_t>(n - done, data_size - at);
        std::memcpy(record.data() + done, data + at, chunk);
        done += chunk;
      }
    };
    copy(tail, sizeof(perf_event_header));
    perf_event_header header;
    std::memcpy(&header, record.data(), sizeof header);
    if (header.size < sizeof header || tail + header.size > head) break;
    copy(tail, header.size);
    tail += header.size;
    // The body, then the sample id: its time, the record's last 8 bytes.
    const char* body = record.data() + sizeof header;
    if (header.size < sizeof header + sizeof(uint64_t)) continue;
    const size_t body_size = header.size - sizeof header - sizeof(uint64_t);
    uint64_t time;
    std::memcpy(&time, body + body_size, sizeof time);
    uint32_t pid;
    if (header.type == PERF_RECORD_LOST && body_size >= 16) {
      uint64_t lost;
      std::memcpy(&lost, body + 8, sizeof lost);
      lost_ += lost;
      continue;
    }
    // Children inherit the event: only the watched process's records count.
    if (body_size < sizeof pid) continue;
    std::memcpy(&pid, body, sizeof pid);
    if (static_cast<int>(pid) != pid_) continue;
    if (header.type == PERF_RECORD_MMAP2 && body_size > sizeof(Mmap2)) {
      Mmap2 m;
      std::memcpy(&m, body, sizeof m);
      std::string path(body + sizeof m, strnlen(body + sizeof m, body_size - sizeof m));
      changes.push_back({time, false, std::move(path), m.addr, m.len, m.pgoff, (m.prot & PROT_EXEC) != 0});
    } else if (header.type == PERF_RECORD_COMM && (header.misc & PERF_RECORD_MISC_COMM_EXEC)) {
      changes.push_back({time, true});
    }
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

std::vector<MappedObject> MmapWatch::objects() {
  std::vector<Change> changes;
  for (Ring& r : rings_) read_records(r, changes);
  std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.time < b.time; });
  for (const Change& c : changes) {
    if (c.exec) by_path_.clear();
    else add_mapping(by_path_, c.path, c.start, c.start + c.length, c.offset, c.executable);
  }
  return in_address_order(by_path_);
}

}  // namespace edgemem
