#include "record/ebpf_output_parser.h"

#include <sys/mman.h>

#include <charconv>

namespace edgemem {

namespace {

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

bool number(std::string_view text, uint64_t& out, int base = 10) {
  if (text.starts_with('-')) {  // an int the script printed signed (posix_memalign's result)
    int64_t v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v, base);
    out = static_cast<uint64_t>(v);
    return r.ec == std::errc() && r.ptr == text.data() + text.size();
  }
  auto r = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

}  // namespace

void BpftraceOutputParser::feed(std::string_view bytes, std::vector<UprobeRecord>& out) {
  for (char c : bytes) {
    if (c != '\n') {
      partial_ += c;
      continue;
    }
    line(partial_, out);
    partial_.clear();
  }
}

void BpftraceOutputParser::finish(std::vector<UprobeRecord>& out) {
  if (!partial_.empty()) line(partial_, out);
  partial_.clear();
  complete(out);
}

void BpftraceOutputParser::complete(std::vector<UprobeRecord>& out) {
  // The records of one line share its stack: an mremap's source (what is
  // left of its mapping is made again at that stack) and its return.
  for (UprobeRecord& r : held_) {
    if (r.stack.empty() && !held_.empty()) r.stack = held_.back().stack;
    if (r.entry_return) {  // as a return probe would have walked it: from the caller on
      if (!r.stack.empty()) r.stack.erase(r.stack.begin());
      if (r.stack.empty() || r.stack.front() != r.entry_return) r.stack.insert(r.stack.begin(), r.entry_return);
      r.entry_return = 0;
    }
    out.push_back(std::move(r));
  }
  held_.clear();
  expecting_stack_ = false;
}

void BpftraceOutputParser::line(std::string_view text, std::vector<UprobeRecord>& out) {
  if (text.starts_with('\t')) {
    // "\tADDRESS SYMBOL (MODULE)" in bpftrace's perf stack mode.
    std::string_view frame = text.substr(1);
    frame = frame.substr(0, frame.find(' '));
    uint64_t address = 0;
    if (number(frame, address, 16) && !held_.empty()) held_.back().stack.push_back(address);
    return;
  }
  if (text.empty()) {
    // The stack is printed between two empty lines: the second ends it.
    if (expecting_stack_ && !held_.empty() && !held_.back().stack.empty()) complete(out);
    return;
  }
  complete(out);
  header(text, out);
}

// The script's lines (ebpf_script.cc writes them), each ending in the CPU
// whose buffer carried it:
//   A TID NSECS SIZE ALIGN PTR CPU        an allocation returned PTR (0: failed), stack follows
//   N TID NSECS SIZE ALIGN PTR RET CPU    operator new(SIZE, ALIGN) got PTR from the allocator it
//                                         called; the stack follows, taken at new's entry, RET its return address
//   P TID NSECS SIZE ALIGN RC PTR CPU     posix_memalign returned RC, PTR stored; stack follows
//   R TID T0 NSECS OLD SIZE NEW CPU       realloc entered at T0, returned NEW; stack follows
//   F TID NSECS PTR CPU                   free(PTR)
//   M TID NSECS SIZE PTR PROT CPU         an anonymous mmap returned PTR (MAP_FAILED: -1); stack follows
//   V TID NSECS PTR LEN PROT RC CPU       mprotect(PTR, LEN, PROT) returned RC; stack follows
//   U TID T0 PTR LEN RC CPU               munmap(PTR, LEN) entered at T0 returned RC; stack follows
//   X TID T0 NSECS OLD OLDLEN SIZE NEW FLAGS CPU  mremap entered at T0 returned NEW (-1: failed); stack follows
//   B TID NSECS CPU / E TID NSECS CPU     the --inference-fn function entered / returned
//   H NSECS CPU                           that CPU's clock (a heartbeat, ten times a second)
//   READY 1 / READY 2                     the script's first / last tracepoint is attached
//   __BPFTRACE_NOTIFY_PROBES_ATTACHED     every probe is attached (bpftrace 0.23 on; stderr before)
void BpftraceOutputParser::header(std::string_view text, std::vector<UprobeRecord>& out) {
  if (text == "READY 1" || text == "READY 2") {
    ready_ends_ |= text.back() == '1' ? 1 : 2;
    return;
  }
  if (text.starts_with("Attaching ")) return;
  if (text == kBpftraceAttachedNotice) {
    probes_attached_ = true;
    return;
  }
  auto w = words(text);
  if (w.size() == 3 && w[0] == "Lost" && w[2] == "events") {
    uint64_t n = 0;
    if (number(w[1], n)) lost_ += n;
    return;
  }
  std::vector<uint64_t> v;
  for (size_t i = 1; i < w.size(); ++i) {
    uint64_t n = 0;
    if (!number(w[i], n)) break;
    v.push_back(n);
  }
  auto tag = w.empty() ? std::string_view() : w[0];
  if (tag == "H" && v.size() == 2) {
    UprobeRecord r;
    r.kind = UprobeRecord::Kind::heartbeat;
    r.time = v[0];
    r.cpu = static_cast<int32_t>(v[1]);
    out.push_back(r);
    return;
  }
  // The CPU ends every other line.
  const int32_t cpu = v.size() > 1 ? static_cast<int32_t>(v.back()) : -1;
  if (v.size() > 1) v.pop_back();
  using K = UprobeRecord::Kind;
  auto rec = [&](K kind, uint64_t time, uint64_t address, uint64_t size, uint64_t align) {
    UprobeRecord r;
    r.kind = kind;
    r.tid = static_cast<uint32_t>(v[0]);
    r.cpu = cpu;
    r.time = time;
    r.address = address;
    r.size = size;
    r.align = align;
    return r;
  };
  if (tag == "A" && v.size() == 5) {
    held_.push_back(rec(v[4] ? K::alloc : K::alloc_failed, v[1], v[4], v[2], v[3]));
    expecting_stack_ = true;
  } else if (tag == "N" && v.size() == 6) {
    // new(0) asks its allocator for 1 B (libstdc++ does; the preload records it so).
    held_.push_back(rec(v[4] ? K::alloc : K::alloc_failed, v[1], v[4], v[2] ? v[2] : 1, v[3]));
    held_.back().entry_return = v[5];
    expecting_stack_ = true;
  } else if (tag == "P" && v.size() == 6) {
    held_.push_back(rec(v[4] == 0 ? K::alloc : K::alloc_failed, v[1], v[4] == 0 ? v[5] : 0, v[2], v[3]));
    expecting_stack_ = true;
  } else if (tag == "R" && v.size() == 6) {
    // A moving realloc frees the old block when it is entered (another
    // thread may be handed the address before it returns) and allocates
    // the new one when it returns; realloc(p, 0) only frees; a failed one
    // leaves the old block.
    uint64_t old = v[3], size = v[4], fresh = v[5];
    if (old && (fresh || size == 0)) out.push_back(rec(K::free, v[1], old, 0, 0));
    if (fresh) held_.push_back(rec(K::alloc, v[2], fresh, size, 0));
    else if (size) held_.push_back(rec(K::alloc_failed, v[2], 0, size, 0));
    expecting_stack_ = !held_.empty();
  } else if (tag == "M" && v.size() == 5) {
    bool failed = v[3] == UINT64_MAX;
    held_.push_back(rec(failed ? K::alloc_failed : K::alloc, v[1], failed ? 0 : v[3], v[2], 0));
    held_.back().mapping = true;
    held_.back().reserved = v[4] == PROT_NONE;
    expecting_stack_ = true;
  } else if (tag == "V" && v.size() == 6) {
    held_.push_back(rec(K::protect, v[1], v[2], v[3], 0));
    held_.back().mapping = true;
    held_.back().reserved = v[4] == PROT_NONE;
    held_.back().result = static_cast<int64_t>(v[5]);
    expecting_stack_ = true;
  } else if (tag == "U" && v.size() == 5) {
    held_.push_back(rec(K::unmap, v[1], v[2], v[3], 0));
    held_.back().mapping = true;
    held_.back().result = static_cast<int64_t>(v[4]);
    expecting_stack_ = true;
  } else if (tag == "X" && v.size() == 8) {
    // As the preload records it: the old mapping freed when mremap is
    // entered, and the one it returned made when it returns. One that
    // failed changed no mapping: no record (a free and the mapping made
    // again at the mremap once stood for each refused growth in place).
    if (v[6] != UINT64_MAX) {
      held_.push_back(rec(K::remap_from, v[1], v[3], v[4], 0));
      held_.back().mapping = true;
      held_.push_back(rec(K::remap_to, v[2], v[6], v[5], 0));
      held_.back().mapping = true;
      held_.back().old = v[3];
      held_.back().keeps_old = v[7] & MREMAP_DONTUNMAP;
    }
    expecting_stack_ = true;
  } else if (tag == "F" && v.size() == 3) {
    out.push_back(rec(K::free, v[1], v[2], 0, 0));
  } else if ((tag == "B" || tag == "E") && v.size() == 2) {
    out.push_back(rec(tag == "B" ? K::inference_enter : K::inference_leave, v[1], 0, 0, 0));
  } else {
    if (other_++ == 0) first_other_ = std::string(text);
  }
}

}  // namespace edgemem
