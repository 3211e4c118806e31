#include "record/ebpf_recording.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "record/clock_ns.h"
#include "record/ebpf_elf_functions.h"
#include "record/ebpf_process_maps.h"

namespace edgemem {

namespace {

bool is_runtime(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  return name.starts_with("libc.so") || name.starts_with("libc-") || name.starts_with("ld-linux") ||
         name.starts_with("ld-musl") || name.starts_with("libc.musl");
}

}  // namespace

void UprobeRecording::add(UprobeRecord r) {
  if (r.cpu >= 0) {
    uint64_t& heard = heard_[r.cpu];
    heard = std::max(heard, r.time);
  }
  if (r.kind == UprobeRecord::Kind::heartbeat) return;
  uint64_t n = arrivals_++;
  order_.push({r.time, n});
  waiting_.emplace(n, std::move(r));
}

void UprobeRecording::lost(uint64_t events) {
  stats_.lost += events;
  writer_.lost(events);
}

void UprobeRecording::refresh_modules() {
  last_refresh_ = monotonic_ns();
  add_modules(read_mapped_objects(pid_));
}

void UprobeRecording::add_modules(const std::vector<MappedObject>& objects) {
  for (const MappedObject& o : objects) {
    if (!o.executable || o.offset0 == 0) continue;
    // Known already (the kernel's records end an object at its .bss, its
    // /proc maps at its last file page: the wider one is kept, written once).
    if (auto it = modules_.find(o.start); it != modules_.end() && it->second.path == o.path && it->second.end >= o.end)
      continue;
    auto object = objects_.find(o.path);
    if (object == objects_.end()) {
      std::string error;
      Object read;
      if (auto elf = read_elf_functions(o.path, error)) {
        read.first_load_page = elf->first_load_page;
        read.build_id = std::move(elf->build_id);
        if (is_runtime(o.path)) read.runtime_loads = std::move(elf->loads);
      }
      object = objects_.emplace(o.path, std::move(read)).first;
    }
    const uint64_t bias = o.offset0 - object->second.first_load_page;
    modules_[o.start] = {o.end, is_runtime(o.path), o.path, bias};
    writer_.module(bias, o.start, o.end, o.path, object->second.build_id);
  }
}

const UprobeRecording::Module* UprobeRecording::module_at(uint64_t address) const {
  auto it = modules_.upper_bound(address);
  if (it == modules_.begin()) return nullptr;
  --it;
  return address < it->second.end ? &it->second : nullptr;
}

// The frames outside the program at the outer end of a stack (libc calling
// main or a thread's function, _start) are dropped, as the preload's
// unwinder stops before them: one site is one stack string whichever
// recorder took it. A stack all inside the runtime (the loader's own
// allocations at start-up) is kept whole.
void UprobeRecording::trim_start_up_frames(std::vector<uint64_t>& stack) const {
  size_t keep = stack.size();
  while (keep > 0) {
    const Module* m = module_at(stack[keep - 1]);
    if (m && !m->runtime) break;
    --keep;
  }
  if (keep > 0) stack.resize(keep);
}

// mmap returned into the C library (or the loader) after a direct call
// there: the library's own mapping (its code calls only itself directly).
// A function of the program that the library called (a thread's start
// routine, a signal handler) and that ends in `return mmap(...)` jumps to
// mmap, which then returns into the library too, but after a call through
// a register: that mapping is the program's. Where the call cannot be
// read, the library's.
bool UprobeRecording::runtime_maps_for_itself(const UprobeRecord& r) const {
  if (r.stack.empty()) return false;
  const Module* m = module_at(r.stack.front());
  if (!m || !m->runtime) return false;
  const Object& o = objects_.at(m->path);
  if (!o.runtime_loads) return true;
  return direct_call_before(m->path, *o.runtime_loads, r.stack.front() - m->bias).value_or(true);
}

const std::string& UprobeRecording::thread_name(uint32_t tid) {
  auto [it, fresh] = names_.try_emplace(tid);
  if (fresh) {
    std::ifstream comm(fmt::format("/proc/{}/task/{}/comm", pid_, tid));
    std::getline(comm, it->second);
  }
  return it->second;
}

uint64_t UprobeRecording::heard_up_to() const {
  if (heard_.size() < cpus_) return 0;
  uint64_t all_heard = UINT64_MAX;
  for (const auto& [cpu, time] : heard_) all_heard = std::min(all_heard, time);
  return all_heard;
}

void UprobeRecording::write_settled(uint64_t entered_slack, size_t max_waiting) {
  if (uint64_t all_heard = heard_up_to(); all_heard > entered_slack) write_before(all_heard - entered_slack);
  while (waiting_.size() > max_waiting) write_before(order_.top().first + 1);
}

void UprobeRecording::write_before(uint64_t time) {
  while (!order_.empty() && order_.top().first < time) {
    auto node = waiting_.extract(order_.top().second);
    order_.pop();
    write(node.mapped());
  }
}

void UprobeRecording::write(UprobeRecord& r) {
  using K = UprobeRecord::Kind;
  // A frame in no known object: a library mapped since the last look.
  for (uint64_t address : r.stack) {
    if (module_at(address)) continue;
    if (monotonic_ns() - last_refresh_ > 20'000'000) refresh_modules();
    break;
  }
  // The C library mapping memory for itself (a thread's stack): the preload
  // does not see those calls either.
  if (r.mapping && (r.kind == K::alloc || r.kind == K::alloc_failed) && runtime_maps_for_itself(r)) return;
  trim_start_up_frames(r.stack);
  const std::string& name = thread_name(r.tid);
  if (r.mapping) return write_mapping(r, name);
  switch (r.kind) {
    case K::alloc:
      ++stats_.allocations;
      live_.insert(r.address);
      writer_.alloc(r.tid, name, r.address, r.size, r.align, r.stack);
      break;
    case K::alloc_failed:
      ++stats_.failed;
      writer_.alloc_failed(r.tid, name, r.size, r.align, r.stack);
      break;
    case K::free:
      // A block allocated before the attach: left out, or `analyze` would
      // take its free for the sign of a lost allocation; counted in the
      // recording, as the preload counts them.
      ++stats_.frees;
      if (!live_.erase(r.address)) {
        ++stats_.unknown_frees;
        if (attached_) writer_.unseen_free();
        break;
      }
      writer_.free(r.tid, name, r.address);
      break;
    case K::inference_enter:
      // Only the outermost call of a recursive function is an inference.
      if (depth_[r.tid]++ == 0) {
        index_[r.tid] = ++stats_.inferences;
        writer_.inference(r.tid, name, true, index_[r.tid]);
      }
      break;
    case K::inference_leave:
      // A return from a call entered before the probes were attached is not one.
      if (depth_[r.tid] > 0 && --depth_[r.tid] == 0) writer_.inference(r.tid, name, false, index_[r.tid]);
      break;
    case K::unmap:
    case K::remap_from:
    case K::remap_to:
    case K::protect:
      break;  // mappings only
    case K::heartbeat:
      break;  // never queued (add())
  }
}

// The preload's rules (preload/mmap_interposers.cc): only mappings the
// recording saw made are unmapped, by address range: a munmap (a MAP_FIXED
// mapping, an mremap's source or destination) frees the recorded mappings
// it covers and resizes one it covers in part to its head (or its tail when
// the head went); a tail left beside the head is made again, at the stack
// of the call that cut it. PROT_NONE mappings are followed, not recorded;
// what an mprotect makes accessible inside them is made at its stack, what
// it makes PROT_NONE again is cut as by a munmap.
void UprobeRecording::write_mapping(UprobeRecord& r, const std::string& name) {
  using K = UprobeRecord::Kind;
  const uint8_t pool = emt2::kPoolMmap;
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));  // the recorded program's: same kernel
  auto page_end = [](uint64_t start, uint64_t length) { return start + ((length + page - 1) & ~(page - 1)); };
  // A reservation is joined to those it touches page for page, as the
  // preload joins them (and the kernel their areas): a range committed
  // again whole after page-by-page changes is one mapping, as there.
  auto make = [&](uint64_t start, uint64_t length, bool reserved) {
    if (!reserved) {
      mappings_[start] = {length, false};
      ++stats_.allocations;
      writer_.alloc(r.tid, name, start, length, 0, r.stack, pool);
      return;
    }
    uint64_t end = page_end(start, length);
    if (auto next = mappings_.find(end); next != mappings_.end() && next->second.reserved) {
      end = page_end(next->first, next->second.length);
      mappings_.erase(next);
    }
    if (auto before = mappings_.lower_bound(start); before != mappings_.begin()) {
      --before;
      if (before->second.reserved && page_end(before->first, before->second.length) == start) {
        before->second.length = end - before->first;
        return;
      }
    }
    mappings_[start] = {end - start, true};
  };
  // What [start, end) takes from mapping m, already out of the table.
  auto cut_one = [&](uint64_t m_start, const Mapping& m, uint64_t start, uint64_t end) {
    const uint64_t m_end = m_start + m.length;
    const bool head = m_start < start, tail = m_end > end;
    if (m.reserved) {
      if (head) mappings_[m_start] = {start - m_start, true};
      if (tail) mappings_[end] = {m_end - end, true};
      return;
    }
    if (!head && !tail) {
      ++stats_.frees;
      writer_.free(r.tid, name, m_start, pool);
      return;
    }
    const auto [kept, length] = head ? std::pair{m_start, start - m_start} : std::pair{end, m_end - end};
    mappings_[kept] = {length, false};
    writer_.resize(r.tid, name, m_start, kept, length, pool);
    if (head && tail) make(end, m_end - end, false);
  };
  // The mappings with a page in [start, end), in address order.
  auto overlapping = [&](uint64_t start, uint64_t end) {
    auto it = mappings_.upper_bound(start);
    if (it != mappings_.begin() && page_end(std::prev(it)->first, std::prev(it)->second.length) > start) --it;
    std::vector<std::pair<uint64_t, Mapping>> taken;
    for (; it != mappings_.end() && it->first < end; ++it) taken.push_back(*it);
    return taken;
  };
  // Returns whether [start, end) touched a mapping, and whether all it touched were reserved.
  auto cut = [&](uint64_t start, uint64_t end) {
    auto taken = overlapping(start, end);
    bool reserved = true;
    for (auto& [m_start, m] : taken) {
      mappings_.erase(m_start);
      reserved = reserved && m.reserved;
      cut_one(m_start, m, start, end);
    }
    return std::pair{!taken.empty(), reserved};
  };
  switch (r.kind) {
    case K::alloc:
      cut(r.address, page_end(r.address, r.size));  // MAP_FIXED over recorded mappings replaces them
      make(r.address, r.size, r.reserved);
      break;
    case K::alloc_failed:
      if (r.reserved) break;  // address space refused, not memory
      ++stats_.failed;
      writer_.alloc_failed(r.tid, name, r.size, 0, r.stack, pool);
      break;
    case K::unmap:
      if (r.result == 0 && r.address % page == 0 && r.size > 0) cut(r.address, page_end(r.address, r.size));
      break;
    case K::remap_from:
      if (r.size > 0) {
        const uint64_t end = page_end(r.address, r.size);
        RemapSource source;
        for (const auto& [m_start, m] : overlapping(r.address, end)) {
          const uint64_t from = std::max(m_start, r.address), to = std::min(page_end(m_start, m.length), end);
          source.parts.push_back({from - r.address, {to - from, m.reserved}});
        }
        if (auto [touched, reserved] = cut(r.address, end); touched) {
          source.whole = {r.size, reserved};
          remapping_[r.address] = std::move(source);
        }
      }
      break;
    case K::remap_to:
      if (auto from = remapping_.find(r.old); from != remapping_.end()) {
        const RemapSource old = std::move(from->second);
        remapping_.erase(from);
        cut(r.address, page_end(r.address, r.size));  // MREMAP_FIXED replaces what was there
        // A source of reservation and committed pages keeps each part's kind
        // where it lands, cut at the new length (the kernel grows only a
        // single area): recorded whole, a reservation read as memory.
        const bool mixed = std::any_of(old.parts.begin(), old.parts.end(),
                                       [&](const auto& p) { return p.second.reserved != old.whole.reserved; });
        if (!mixed) {
          make(r.address, r.size, old.whole.reserved);
        } else {
          for (const auto& [offset, part] : old.parts)
            if (offset < r.size) make(r.address + offset, std::min(part.length, r.size - offset), part.reserved);
        }
        if (r.keeps_old) make(r.old, old.whole.length, old.whole.reserved);  // MREMAP_DONTUNMAP: still mapped, emptied
      }
      break;
    case K::protect:
      // The parts whose state it changed are cut out and made again in the new one.
      if (r.result != 0 || r.address % page != 0 || r.size == 0) break;
      for (auto& [m_start, m] : overlapping(r.address, page_end(r.address, r.size))) {
        if (m.reserved == r.reserved) continue;
        const uint64_t end = page_end(r.address, r.size), m_end = m_start + m.length;
        const uint64_t from = std::max(m_start, r.address), to = std::min(m_end, end);
        mappings_.erase(m_start);
        cut_one(m_start, m, from, to);
        make(from, to - from, r.reserved);
      }
      break;
    default:
      break;
  }
}

}  // namespace edgemem
