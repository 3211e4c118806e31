#include "report/thread_sections.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/site_names.h"
#include "report/units.h"

namespace edgemem {

using nlohmann::json;
using units::bytes;
using units::grouped;

namespace {

constexpr size_t kHandOffsShown = 3;

std::string label(const ThreadSummary& t) {
  if (t.other_threads) return "(other threads)";
  return t.name.empty() ? std::to_string(t.tid) : fmt::format("{} '{}'", t.tid, t.name);
}

std::string label_of(const ThreadsResult& r, uint32_t tid) {
  for (const ThreadSummary& t : r.threads)
    if (!t.other_threads && t.tid == tid) return label(t);
  return std::to_string(tid);
}

}  // namespace

std::string threads_text(const ThreadsResult& r) {
  auto busy = [](const ThreadSummary& t) { return t.allocs + t.frees > 0; };
  if (std::count_if(r.threads.begin(), r.threads.end(), busy) < 2) return {};
  std::string out;
  std::string handed = r.cross_thread_frees
                           ? fmt::format("{} block{} ({}) made on one thread and freed on another", grouped(r.cross_thread_frees),
                                         r.cross_thread_frees == 1 ? "" : "s", bytes(r.cross_thread_free_bytes))
                           : "every block freed by the thread that made it";
  out += fmt::format("{:<14}{} threads; {}\n", "Threads", grouped(r.threads.size()), handed);
  size_t width = 6;
  for (const ThreadSummary& t : r.threads) width = std::max(width, label(t).size() + (t.marks_inferences ? 2 : 0));
  out += fmt::format("{:<14}{:<{}} {:>9} {:>9} {:>15} {:>15} {:>15} {:>15}\n", "", "thread", width, "allocs", "frees",
                     "allocated", "peak live", "live at end", "leaked");
  bool marks = false;
  for (const ThreadSummary& t : r.threads) {
    marks |= t.marks_inferences;
    out += fmt::format("{:<14}{:<{}} {:>9} {:>9} {:>15} {:>15} {:>15} {:>15}\n", "",
                       label(t) + (t.marks_inferences ? " *" : ""), width, grouped(t.allocs), grouped(t.frees),
                       bytes(t.alloc_bytes), bytes(t.peak_live_bytes), bytes(t.live_bytes), bytes(t.leaked_bytes));
  }
  if (marks) out += fmt::format("{:<14}* marks the inferences\n", "");
  for (size_t i = 0; i < r.hand_offs.size() && i < kHandOffsShown; ++i) {
    const ThreadHandOff& h = r.hand_offs[i];
    out += fmt::format("{:<14}{} block{} ({}) made on {} freed on {}\n", "", grouped(h.count), h.count == 1 ? "" : "s",
                       bytes(h.bytes), label_of(r, h.from_tid), label_of(r, h.to_tid));
  }
  if (r.hand_offs.size() > kHandOffsShown)
    out += fmt::format("{:<14}(and {} more pairs of threads)\n", "", r.hand_offs.size() - kHandOffsShown);
  return out;
}

std::string temporaries_text(const TemporaryResult& r) {
  if (r.count == 0) return {};
  std::string out = fmt::format(
      "{:<14}{} of {} allocations ({}) freed by their thread right after they were made, with no allocation or free "
      "between: {}\n",
      "Temporary", grouped(r.count), grouped(r.allocations), units::percent(units::fraction(r.count, r.allocations)),
      bytes(r.bytes));
  std::vector<std::string_view> sites;
  for (const TemporarySite& s : r.top) sites.push_back(s.site);
  const std::vector<std::string> names = shown_sites(distinct_tails(sites));
  for (size_t i = 0; i < r.top.size(); ++i) {
    const TemporarySite& s = r.top[i];
    out += fmt::format("{:<14}{:>9} of {} allocations, {}  {}\n", "", grouped(s.count), grouped(s.allocs), bytes(s.bytes),
                       names[i]);
  }
  return out;
}

json thread_shares_json(const std::vector<ThreadShare>& shares) {
  json a = json::array();
  for (const ThreadShare& s : shares) a.push_back({{"tid", s.tid}, {"bytes", s.bytes}, {"count", s.count}});
  return a;
}

json threads_json(const ThreadsResult& r) {
  json threads = json::array();
  for (const ThreadSummary& t : r.threads)
    threads.push_back({{"tid", t.other_threads ? json(nullptr) : json(t.tid)},
                       {"name", t.name.empty() ? json(nullptr) : json(t.name)},
                       {"other_threads", t.other_threads},
                       {"marks_inferences", t.marks_inferences},
                       {"allocs", t.allocs},
                       {"frees", t.frees},
                       {"alloc_bytes", t.alloc_bytes},
                       {"peak_live_bytes", t.peak_live_bytes},
                       {"live_bytes", t.live_bytes},
                       {"live_count", t.live_count},
                       {"leaked_bytes", t.leaked_bytes},
                       {"leaked_count", t.leaked_count},
                       {"frees_of_other_threads_blocks", t.frees_of_others},
                       {"freed_by_other_threads", t.freed_by_others},
                       {"freed_by_other_threads_bytes", t.freed_by_others_bytes}});
  return threads;
}

json cross_thread_frees_json(const ThreadsResult& r) {
  json pairs = json::array();
  for (const ThreadHandOff& h : r.hand_offs)
    pairs.push_back({{"from_tid", h.from_tid}, {"to_tid", h.to_tid}, {"count", h.count}, {"bytes", h.bytes}});
  return {{"count", r.cross_thread_frees}, {"bytes", r.cross_thread_free_bytes}, {"pairs", pairs}};
}

json temporaries_json(const TemporaryResult& r) {
  json top = json::array();
  for (const TemporarySite& s : r.top)
    top.push_back({{"site", s.site}, {"count", s.count}, {"bytes", s.bytes}, {"allocs", s.allocs}});
  return {{"count", r.count},
          {"bytes", r.bytes},
          {"allocations", r.allocations},
          {"share", r.allocations ? json(units::fraction(r.count, r.allocations)) : json(nullptr)},
          {"top_sites", top}};
}

}  // namespace edgemem
