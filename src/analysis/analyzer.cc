#include "edgemem/analyzer.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fragmentation_analysis.h"
#include "layout_analysis.h"
#include "leak_analysis.h"
#include "lifo_analysis.h"
#include "overflow_analysis.h"
#include "peak_analysis.h"
#include "pool_tracker.h"
#include "report/units.h"
#include "size_analysis.h"
#include "temporary_analysis.h"
#include "thread_analysis.h"
#include "timeline_analysis.h"
#include "watermark_analysis.h"

namespace edgemem {

struct Analyzer::Impl {
  Impl(TraceContext& c, AnalyzerOptions o) : context(c), options(o), tracker(c), watermark(o.warm_up_inferences) {}

  TraceContext& context;
  AnalyzerOptions options;
  PoolTracker tracker;
  LeakAnalysis leaks;
  WatermarkAnalysis watermark;
  FragmentationAnalysis fragmentation;
  OverflowAnalysis overflow;
  LifoAnalysis lifo;
  PeakAnalysis peak;
  SizeAnalysis sizes;
  LayoutAnalysis layout;
  TimelineAnalysis timeline;
  ThreadAnalysis threads;
  TemporaryAnalysis temporaries;
  EventCounts counts;
  size_t sized_pools = 0;
  std::vector<InferenceObserver*> observers;
  uint64_t failed_at_begin = 0;
  uint64_t failed_at_end = 0;  // firmware that marks only the end: failures since the previous end are this one's
  bool ends_seen = false;  // an end marker came: a begin no longer ends the inference before it
  // Inferences begun and not ended, by their span's position (the order
  // they began). Threads may run them at once (a pool of workers;
  // --inference-fn on several threads): an end closes its own thread's
  // inference, not the latest begun (three threads' 120 inferences read as
  // 121, with spans left open and duplicated). At most kMaxOpen: past it the
  // oldest is taken for one that will not end.
  struct OpenInference {
    uint32_t thread = 0;
    uint64_t number = 0;    // the device's number, as the tracker gave it
    uint64_t position = 0;  // its span's, in the timeline
  };
  static constexpr size_t kMaxOpen = 1024;
  std::map<uint64_t, OpenInference> open;
  std::unordered_map<uint32_t, uint64_t> open_of_thread;  // position
  std::unordered_map<uint32_t, uint32_t> opens_of_thread;  // how many, when a thread ran ahead
  // Until an end marker is seen a begin ends the open inference, whichever
  // thread began it (firmware may mark only begins). If its end then comes
  // — from the thread that began it, or by its number from a thread it was
  // handed to while the first ran ahead — it is counted already: the end is
  // its, not another's. Bounded (kMaxOpen).
  struct EndedByABegin {
    uint64_t position = 0;
    uint64_t number = 0;  // 0: unnumbered
    uint32_t thread = 0;
  };
  std::unordered_map<uint32_t, EndedByABegin> ended_by_a_begin;  // by the thread that began it
  std::unordered_map<uint64_t, EndedByABegin> ended_by_a_begin_number;  // by its number
  // Threads that began a numbered inference while their previous one was
  // open: a dispatcher that hands each inference on and runs ahead, whose
  // open ones another thread ends by number; or a thread whose end was
  // missed (an exception past --inference-fn's return probe), whose older
  // open ones are abandoned when it next ends its own.
  std::unordered_set<uint32_t> began_ahead;
  uint64_t begins_of_other_threads = 0;  // while another thread's was open
  uint64_t restarts_seen = 0;  // TraceContext::device_restarts the leak analysis was told of
  uint64_t boot_began_after = 0;  // inferences completed when the latest boot began
  // When the latest boot began: what a boot before it ran out of says
  // nothing of the pools now.
  std::optional<uint64_t> boot_began_at;
  bool boot_without_inference = false;  // the latest boot has begun none yet (its blocks so far are its setup)
  // Boots before the latest whose leak check could not run, by whether they
  // ended an inference; the first of each, without its leaks.
  struct Unjudged {
    uint64_t count = 0;
    std::optional<Restart> first;
  };
  Unjudged unjudged_with_inferences, unjudged_without_inferences;
  // The resets a restart sends, one per pool, still to come: their blocks
  // were lost with the boot, not freed (a site that never frees read "30
  // allocations, 10 frees" after a reboot).
  size_t restart_resets_left = 0;
  Restarts restarts;
  std::vector<uint64_t> summary_failures;  // per pool, refused requests told by summary records
  // Per pool, the boot and inference of its latest refusal of a request it
  // could hold (not one larger than the whole pool).
  struct Refusal {
    uint64_t boot = 0;
    uint64_t inference = 0;  // inferences begun, counting one between inferences as the next's
    uint64_t run = 0;        // consecutive inferences with a refusal, up to this one
  };
  std::vector<std::optional<Refusal>> latest_refusal;
  // Largest free blocks told by summary records, measured once the device's
  // run of summaries is over: the two ends of a shared arena report the same
  // instant, and the second one's usage is part of the first one's free bytes.
  struct PendingLevel {
    PoolId pool;
    uint64_t time, largest_free;
  };
  std::vector<PendingLevel> pending_levels;
  bool summaries_untold = false;  // summary records came since the pools' usage together was counted
  uint64_t summary_time = 0;      // of the latest
  uint64_t last_time = 0;  // of the latest event

  // Pools appear as decoders meet them; give new ones the --arena-size.
  void size_new_pools() {
    while (sized_pools < context.pools.size()) {
      PoolInfo& p = context.pools.at(static_cast<PoolId>(sized_pools++));
      if (p.size == 0) p.size = options.default_pool_size;
    }
  }
  const PoolInfo& pool_info(PoolId id) {
    size_new_pools();
    return context.pools.at(id);
  }

  void usage_changed(uint64_t time) {
    watermark.usage_changed(tracker.total_usage());
    peak.usage_changed(tracker, time);
    layout.usage_changed(tracker.total_usage());
  }
  // After every event aimed at a pool, whether or not its usage moved.
  void sampled(const Event& e) { timeline.sample(e.pool, e.time, tracker.pool(e.pool)); }

  // `thread_clock`: the event's number on its thread's own clock (LeakAnalysis::thread_active).
  void allocate(const Event& e, float thread_clock) {
    const PoolInfo& info = pool_info(e.pool);
    // A kind a decoder guessed and then settled, before the pool held a block.
    if (PoolState& p = tracker.pool(e.pool); p.kind != info.kind && p.live.size() == 0) [[unlikely]]
      p.kind = info.kind;
    bool replaced = false;
    Block old;
    const Block& b = tracker.alloc(e, leaks.group_of(e.pool, e.site, e.size), thread_clock, replaced, old);
    if (replaced) {
      ++counts.replaced_blocks;
      fragmentation.released(e.pool, info, old, e.time);
      leaks.removed(old);
      layout.closed(e.pool, old, e.time);
      threads.dropped(old);
    }
    temporaries.allocated(e.pool, e.thread, b);
    leaks.added(b, tracker.inference());
    layout.opened(e.pool, b);
    // One lookup of the other end serves the free space of both and the overflow check.
    auto partner = context.pools.partner(e.pool);
    const bool two_ended = partner && *partner != e.pool;
    if (two_ended) [[unlikely]] reserve(e.pool, *partner, e.time);
    // Over part of a live block (at its own address, replaced above): a lost free too.
    if (!fragmentation.allocated(e.pool, info, b)) [[unlikely]] {
      ++counts.replaced_blocks;
      drop_overlapped(e.pool, info, b);
    }
    // After the blocks it lay over are gone: its thread's peak counts them no more.
    threads.allocated(e.thread, b);
    const uint64_t other_end = partner ? tracker.pool(*partner).usage() : 0;
    // An arena's usage is its top, from a lazily pruned heap: asked once.
    PoolState& own = tracker.pool(e.pool);
    const uint64_t usage = own.usage();
    overflow.allocated(e.pool, info, b, other_end, usage);
    if (info.kind == PoolKind::arena) lifo.allocated(usage, own.live_bytes);
    if (partner) [[unlikely]] own.shared_peak = std::max(own.shared_peak, usage + other_end);
    sizes.allocated(b);
    usage_changed(e.time);
    if (two_ended) [[unlikely]] reserve(*partner, e.pool, e.time);
  }

  // The live blocks a new one lies over lost their frees: gone, as a block
  // replaced at its own address is (kept, 3 blocks of 100 B laid 8 B apart
  // read as a 100 B-per-inference leak). Found by a scan of the pool's live
  // blocks, a rare path; a hostile trace's scans stop at kOverlapScans
  // blocks in all, and later overlapped blocks stay counted live.
  static constexpr uint64_t kOverlapScans = uint64_t{1} << 26;
  uint64_t overlap_scans = 0;
  std::vector<Block> overlapped;
  // The latest blocks dropped so: a free of one that comes after all was
  // logged late (two threads' lines out of order), not lost.
  // One allocation over several blocks is one count of replaced_blocks: it
  // is taken back when the frees of all of them came late.
  struct Dropped {
    PoolId pool;
    Block block;
    uint64_t by;  // the allocation that lay over it, counted from 1
    bool sibling_lost = false;  // another block that allocation dropped was never freed
  };
  std::array<std::optional<Dropped>, 16> recently_dropped;
  size_t next_dropped = 0;
  uint64_t overlaps = 0;
  void remember_dropped(PoolId pool, const Block& old) {
    auto& slot = recently_dropped[next_dropped++ % recently_dropped.size()];
    if (slot)  // its free never came: its allocation's count stays
      for (auto& d : recently_dropped)
        if (d && d->by == slot->by) d->sibling_lost = true;
    slot = Dropped{pool, old, overlaps};
  }
  bool freed_late(PoolId pool, uint64_t address, uint32_t thread) {
    for (size_t i = 1; i <= recently_dropped.size(); ++i)  // the latest first
      if (auto& d = recently_dropped[(next_dropped - i) % recently_dropped.size()];
          d && d->pool == pool && d->block.address == address) {
        tracker.freed_late(d->block);
        threads.freed_late(thread, d->block);
        const Dropped late = *d;
        d.reset();
        if (!late.sibling_lost &&
            std::none_of(recently_dropped.begin(), recently_dropped.end(),
                         [&](const auto& other) { return other && other->by == late.by; }))
          --counts.replaced_blocks;
        return true;
      }
    return false;
  }
  void drop_overlapped(PoolId pool, const PoolInfo& info, const Block& b) {
    PoolState& p = tracker.pool(pool);
    overlapped.clear();
    if (overlap_scans + p.live.size() <= kOverlapScans) {
      overlap_scans += p.live.size();
      const uint64_t end = b.address + b.size;
      p.live.for_each([&](const Block& old) {
        if (old.address != b.address && old.size && old.address < end && b.address < old.address + old.size)
          overlapped.push_back(old);
      });
    }
    ++overlaps;
    for (const Block& old : overlapped) {
      remember_dropped(pool, old);
      tracker.drop(pool, old.address);
      leaks.removed(old);
      layout.closed(pool, old, b.time);
      threads.dropped(old);
    }
    if (!overlapped.empty()) tracker.settle_peaks(pool);
    fragmentation.overlapped(pool, info, overlapped, b);
  }

  // The share of `size` (%) a pool left at its peak (since its size was last
  // declared). A shared arena's is what both ends left at the moment they
  // held the most together. When that moment was not followed (the device
  // reported only summaries, or declared the sharing after the ends were in
  // use: the common peak then reads below an end's own), the sum of the
  // ends' peaks is the bound.
  double margin_now(PoolId pool, uint64_t size) {
    // (Copied first: looking the partner up may add its state and move this one.)
    const PoolState& own = tracker.pool(pool);
    const uint64_t own_peak = own.peak_usage, own_shared_peak = own.shared_peak;
    const bool own_summarized = own.summarized;
    uint64_t held = own_peak;
    if (auto partner = context.pools.partner(pool)) {
      const PoolState& other = tracker.pool(*partner);
      const uint64_t together = std::max(own_shared_peak, other.shared_peak);
      const bool followed = !own_summarized && !other.summarized && together >= own_peak &&
                            together >= other.peak_usage;
      held = followed ? together : own_peak + other.peak_usage;
    }
    return 100.0 * (static_cast<double>(size) - static_cast<double>(held)) / static_cast<double>(size);
  }
  // A pool declared again with another size: its margin under the old size
  // is kept, and its peak counts anew for the new one (a 600 B peak of a
  // 1,024 B arena, declared 512 B after a reset, read "margin -17.2 %" beside
  // "[OK] no overflow"). The least margin of any size is the one reported.
  // By pool: the least margin (%) of its earlier sizes, and that size.
  std::vector<std::optional<std::pair<double, uint64_t>>> margin_of_earlier_sizes;
  // A size or base declared again since the pool's last event, taken in:
  // its gaps (FragmentationAnalysis) and, for another size, its margin.
  // Inline: its check runs before every event (a call there cost 1 %).
  [[gnu::always_inline]] void take_in_size(PoolId pool, const PoolInfo& info, uint64_t time) {
    if (const uint64_t before = fragmentation.sized(pool, info, tracker, time)) [[unlikely]]
      resized(pool, before);
  }
  void resized(PoolId pool, uint64_t before) {
    if (margin_of_earlier_sizes.size() <= pool) margin_of_earlier_sizes.resize(pool + 1);
    auto& kept = margin_of_earlier_sizes[pool];
    const double m = margin_now(pool, before);
    if (!kept || m < kept->first) kept = std::pair(m, before);
    uint64_t other_end = 0;
    if (auto partner = context.pools.partner(pool); partner && *partner != pool) other_end = tracker.pool(*partner).usage();
    tracker.size_declared_again(pool, other_end);
  }

  // Pool `to` of a shared arena: the bytes its other end `from` uses are not free there.
  void reserve(PoolId to, PoolId from, uint64_t time) {
    // A size declared again for `to` since its last event is taken in
    // first, or its old top would clamp what the other end uses.
    take_in_size(to, pool_info(to), time);
    const uint64_t used = tracker.pool(from).usage();
    fragmentation.partner_used(to, pool_info(to), used, tracker.pool(to).usage(), time);
  }
  // The other end of a shared arena: this pool's bytes are not free there.
  void tell_partner(PoolId pool, uint64_t time) {
    if (auto partner = context.pools.partner(pool); partner && *partner != pool) [[unlikely]]
      reserve(*partner, pool, time);
  }
  // Before this pool's free space is measured: its partner's bytes as they
  // stand (a sharing or a size declared after the partner was in use).
  void hear_partner(PoolId pool, uint64_t time) {
    if (auto partner = context.pools.partner(pool); partner && *partner != pool) [[unlikely]]
      reserve(pool, *partner, time);
  }

  // `zero_is_null`: address 0 with nothing there is NULL, not a lost allocation.
  // `resized`: the realloc that releases it. A block it resizes where it lies
  // (the new one overlaps it: grown or shrunk in place, a mapping trimmed)
  // was never given back, so it is no temporary.
  bool release(PoolId pool, uint64_t address, uint64_t time, uint32_t thread, Block& freed, bool zero_is_null = false,
               const Event* resized = nullptr) {
    const PoolInfo& info = pool_info(pool);
    if (!tracker.free(pool, address, freed)) {
      if (freed_late(pool, address, thread)) return false;
      if (address != 0 || !zero_is_null) ++counts.unknown_frees;
      return false;
    }
    fragmentation.released(pool, info, freed, time);
    leaks.removed(freed);
    layout.closed(pool, freed, time);
    threads.freed(thread, freed);
    const bool in_place = resized && resized->address < freed.address + std::max<uint64_t>(freed.size, 1) &&
                          freed.address < resized->address + std::max<uint64_t>(resized->size, 1);
    if (!in_place) temporaries.freed(pool, thread, freed);
    if (info.kind == PoolKind::arena) lifo.freed(tracker.pool(pool), freed);
    tell_partner(pool, time);
    return true;
  }

  // A heap's address 0 is NULL; an arena's is its first block.
  bool null_in_heap(PoolId pool, uint64_t address) { return address == 0 && pool_info(pool).kind == PoolKind::heap; }

  // The old block of a realloc, unless it was NULL (realloc(NULL, n) is
  // malloc; an arena's "old=0" with nothing there is taken for that too).
  bool release_old(const Event& e, Block& freed) {
    return !null_in_heap(e.pool, e.old_address) &&
           release(e.pool, e.old_address, e.time, e.thread, freed, true, e.size ? &e : nullptr);
  }

  void request_failed(const Event& e) {
    ++counts.failed;
    hear_partner(e.pool, e.time);
    PoolState& own = tracker.pool(e.pool);
    fragmentation.failed(e.pool, pool_info(e.pool), e.size, e.align, e.time, e.site, tracker.current_inference(),
                         own.live.size(), own.usage());
    leaks.failed(e.pool, e.site, e.size);
    const uint64_t size = pool_info(e.pool).size;
    if (size == 0 || e.size <= size) {
      if (latest_refusal.size() <= e.pool) latest_refusal.resize(e.pool + 1);
      // Counted by inferences begun, not the device's numbers (which may
      // skip); a refusal between inferences belongs to the next one.
      const uint64_t now = tracker.inference() + (tracker.in_inference() ? 0 : 1);
      std::optional<Refusal>& last = latest_refusal[e.pool];
      uint64_t run = 1;
      if (last && last->boot == tracker.boot())
        run = now == last->inference ? last->run : now == last->inference + 1 ? last->run + 1 : 1;
      last = Refusal{tracker.boot(), now, run};
    }
  }

  // The pool refused a request it could hold in each of the last
  // kRefusingInferences inferences: it serves this program no longer,
  // however many bytes are free. One refusal (a huge request, with 90 %
  // free and every other request served) is not that.
  static constexpr uint64_t kRefusingInferences = 3;
  bool refusing_at_end(std::string_view pool) const {
    for (size_t i = 0; i < latest_refusal.size(); ++i) {
      if (!latest_refusal[i] || context.pools.at(static_cast<PoolId>(i)).name != pool) continue;
      const Refusal& r = *latest_refusal[i];
      return r.boot == tracker.boot() && tracker.inference() > 0 && r.inference >= tracker.inference() &&
             r.run >= kRefusingInferences;
    }
    return false;
  }

  // An allocation that returned NULL (a wrapper logging what malloc gave):
  // the request failed; malloc(0) may return NULL and made nothing.
  void allocation_returned_null(const Event& e) {
    if (e.size > 0) {
      request_failed(e);
    }
    sampled(e);
  }

  // A realloc that returned NULL: realloc(p, 0) freed p; for a size, in a
  // heap (where 0 is NULL, not an arena's first byte), it failed and left p.
  void realloc_returned_null(const Event& e) {
    Block freed;
    if (e.size == 0) {
      ++counts.reallocs;
      release_old(e, freed);
      usage_changed(e.time);
    } else {
      request_failed(e);
    }
    sampled(e);
    leaks.tick();
  }

  // Called before the new boot's resets, while the pools still hold what
  // the device held when it went down.
  void restarted(uint64_t time) {
    Restart r;
    r.time = time;
    r.bytes_in_use = tracker.total_usage();
    if (tracker.in_inference()) {
      // Never ended, so not counted as completed. Without end markers so far
      // (firmware that marks only begins, or one that went down in its first
      // inference) it is left as the last inference of a trace is: open.
      r.during_inference = tracker.device_inference();
      tracker.abandon_inference();
      for (const auto& [position, o] : open) timeline.abandoned(position);
      open.clear();
      open_of_thread.clear();
      opens_of_thread.clear();
      began_ahead.clear();
    } else if (!tracker.boot_began_no_inference()) {  // not one of the boot before (BOOT, BOOT)
      r.after_inference = tracker.device_inference();
    }
    // An end lost before the boot does not come after it: its number is the new boot's.
    ended_by_a_begin.clear();
    ended_by_a_begin_number.clear();
    judge_boot_leaks(r);
    if (restarts.kept.size() < Restarts::kKept) restarts.kept.push_back(std::move(r));
    ++restarts.total;
    restart_resets_left = context.restart_resets;
    boot_began_after = tracker.completed();
    boot_began_at = time;
    boot_without_inference = true;
    tracker.device_restarted();
    fragmentation.device_restarted();
    overflow.device_restarted();
    leaks.device_restarted(tracker.inference());
    watermark.device_restarted(tracker.completed());
  }

  static constexpr const char* kNoMarkersAfterARestart =
      "no inference markers: growth over event time is measured with the boots before it, so no leak found there "
      "is no proof";
  // The boot going down, judged for leaks as if the trace ended here: the
  // pools still hold its blocks and the groups count its growth.
  void judge_boot_leaks(Restart& r) {
    AnalysisResult boot;
    boot.restarts.total = restarts.total;  // the wording of its reasons; not the kept list (a copy per restart)
    leaks.finish(tracker, context, boot, true);
    r.boot = tracker.boot();
    r.inferences = tracker.completed() - boot_began_after;
    r.leak_check = std::move(boot.checks.leaks);
    // Summary records carry no blocks: a summarised pool's growth is judged
    // from its usage over the latest boot only (WatermarkAnalysis), so a boot
    // before it that found no leak in its traced pools is not judged for its
    // summarised ones (one that grew 100 B per inference once passed).
    const bool markers = tracker.inference() > 0;
    if (counts.summaries > 0 && r.leak_check.status != CheckStatus::found)
      r.leak_check = {CheckStatus::not_checked,
                      "summary records carry no blocks, and a summarised pool's growth is judged over the latest "
                      "boot only"};
    // Without inference markers growth is measured over windows of event
    // time that span the boots before: after the first boot, no leak found
    // is no proof (a leak twice as large in boot 2 as in boot 1 read as none).
    if (!markers && r.boot > 1 && r.leak_check.status == CheckStatus::clean)
      r.leak_check = {CheckStatus::not_checked, kNoMarkersAfterARestart};
    r.leaking_groups = boot.leaks.size();
    for (const SiteLeak& l : boot.leaks) {
      r.leaked_bytes += l.bytes;
      if (l.bytes_per_inference) r.leak_bytes_per_inference += *l.bytes_per_inference;
      else r.leak_rate_known = false;
    }
    if (!r.leak_rate_known && !restarts.first_unrated_leak_boot) restarts.first_unrated_leak_boot = r.boot;
    if (boot.leaks.size() > Restart::kLeaksKept) boot.leaks.resize(Restart::kLeaksKept);
    r.leaks = std::move(boot.leaks);
    if (r.leak_check.status == CheckStatus::found) {
      ++restarts.leaking_boots;
      restarts.leaked_bytes += r.leaked_bytes;
      if (!restarts.most_leaked || r.leaked_bytes > restarts.most_leaked->leaked_bytes) restarts.most_leaked = r;
      if (!restarts.fastest_leak || r.leak_bytes_per_inference > restarts.fastest_leak->leak_bytes_per_inference)
        restarts.fastest_leak = r;
    } else if (r.leak_check.status == CheckStatus::not_checked) {
      // One that ended no inference hides no leak per inference, if the
      // trace turns out to mark inferences (not known yet at a boot banner).
      Unjudged& u = r.inferences > 0 ? unjudged_with_inferences : unjudged_without_inferences;
      if (u.count++ == 0) {
        u.first = r;
        u.first->leaks.clear();
      }
    }
  }

  // A leak found in a boot before the latest is a leak of the trace, whatever
  // the latest boot shows (a device often restarts because it leaked, and
  // the capture ends soon after); one that could not be judged is said.
  void leaks_of_earlier_boots(AnalysisResult& out) {
    Check& c = out.checks.leaks;
    Restarts& rs = out.restarts;
    const bool markers = tracker.inference() > 0;
    const Unjudged& with = unjudged_with_inferences;
    const Unjudged& without = unjudged_without_inferences;
    rs.unjudged_boots = with.count + (markers ? 0 : without.count);
    rs.first_unjudged = markers || !without.first || (with.first && with.first->boot < without.first->boot)
                            ? with.first
                            : without.first;
    // A capture stopped just after the device rebooted: the latest boot
    // ended no inference and hides no leak per inference, as such a boot
    // before it does not (check holds there, so analyze's gate agrees).
    if (rs.total > 0 && markers && tracker.completed() == boot_began_after && c.status == CheckStatus::not_checked &&
        out.leaks.empty())
      c = {CheckStatus::clean, "the latest boot ended no inference: nothing in it to judge"};
    rs.latest_boot = c;
    if (rs.total > 0 && !markers && c.status == CheckStatus::clean)
      rs.latest_boot = {CheckStatus::not_checked, kNoMarkersAfterARestart};
    const Check& latest = rs.latest_boot;
    std::vector<std::string> said;
    if (rs.leaking_boots > 0) {
      const Restart* first = rs.first_leaking_kept();
      said.push_back(fmt::format("leaks found in {} before the device started again ({}boot {})",
                                 units::counted(rs.leaking_boots, "boot", "boots"),
                                 rs.leaking_boots == 1 ? ""
                                 : first               ? "the first: "
                                                       : "the most bytes: ",
                                 units::grouped(first ? first->boot : rs.most_leaked->boot)));
      if (latest.status == CheckStatus::clean) said.push_back("none in the latest boot");
      else if (latest.status == CheckStatus::not_checked) said.push_back("the latest boot: " + latest.reason);
      else if (!latest.reason.empty()) said.push_back(latest.reason);
      c.status = CheckStatus::found;
    } else {
      if (!c.reason.empty()) said.push_back(c.reason);
      if (latest.status != c.status) said.push_back("the latest boot: " + latest.reason);
    }
    if (rs.unjudged_boots > 0 && rs.first_unjudged)
      said.push_back(fmt::format("{} before the latest could not be judged (boot {}: {})",
                                 units::counted(rs.unjudged_boots, "boot", "boots"),
                                 units::grouped(rs.first_unjudged->boot), rs.first_unjudged->leak_check.reason));
    c.reason = fmt::format("{}", fmt::join(said, "; "));
    // No leak found, but a boot was not judged: the gates neither hold nor
    // break, and the check says so too ("[OK] no leak" once stood beside them).
    if (c.status == CheckStatus::clean && (rs.unjudged_boots > 0 || latest.status == CheckStatus::not_checked))
      c.status = CheckStatus::not_checked;
  }

  // Restarts inside an inference, once the whole trace tells whether the
  // firmware marks ends: without end markers the inference may have finished.
  void judge_restarts(AnalysisResult& out) {
    out.restarts = restarts;
    if (ends_seen) return;
    for (Restart& r : out.restarts.kept)
      if (r.during_inference) r.after_inference = std::exchange(r.during_inference, std::nullopt);
  }

  // `begun`: the open inference it ends; none when its begin marker was not
  // seen (some firmware marks only the end), `number` is then the end's.
  void end_inference(uint64_t time, uint64_t number, std::optional<OpenInference> begun) {
    if (!begun) begin_inference(number, failed_at_end, true);
    const uint64_t device = begun ? begun->number : *tracker.device_inference();
    tracker.end_inference();
    timeline.inference_end(time, device, begun ? std::optional<uint64_t>(begun->position) : std::nullopt);
    watermark.inference_end(time, tracker, device);
    leaks.inference_end(tracker.completed(), device);
    tell_observers(time, device);
    failed_at_end = counts.failed;
    // Marked by its end only: the next inference runs from here.
    if (!begun) tracker.inference_peaks_restart();
  }

  OpenInference take_open(uint64_t position) {
    auto it = open.find(position);
    const OpenInference o = it->second;
    open.erase(it);
    if (auto t = open_of_thread.find(o.thread); t != open_of_thread.end() && t->second == position) open_of_thread.erase(t);
    if (auto c = opens_of_thread.find(o.thread); c != opens_of_thread.end() && --c->second == 0) opens_of_thread.erase(c);
    return o;
  }

  // The open inference an end marker closes: its thread's, else (an
  // inference handed to another thread to finish while its own waits) the
  // one of its number, else the latest begun.
  std::optional<OpenInference> ended_by(const Event& e) {
    if (auto t = open_of_thread.find(e.thread); t != open_of_thread.end()) {
      const OpenInference own = take_open(t->second);
      if (began_ahead.erase(e.thread)) abandon_older(e.thread, own.position);
      return own;
    }
    if (e.size)
      for (auto it = open.rbegin(); it != open.rend(); ++it)
        if (it->second.number == e.size) return take_open(it->first);
    if (!open.empty()) return take_open(open.rbegin()->first);
    return std::nullopt;
  }

  // An inference that will not end: its thread began again, or too many are open.
  void abandon(uint64_t position) {
    take_open(position);
    tracker.abandon_one();
    timeline.abandoned(position);
  }

  // The thread ended its own latest inference: those it began before and
  // nobody ended will not end.
  void abandon_older(uint32_t thread, uint64_t position) {
    std::vector<uint64_t> older;
    for (auto it = open.begin(); it != open.end() && it->first < position; ++it)
      if (it->second.thread == thread) older.push_back(it->first);
    for (uint64_t p : older) abandon(p);
  }

  void begin_marked(const Event& e) {
    const auto own = opens_of_thread.find(e.thread);
    if (open.size() > (own == opens_of_thread.end() ? 0 : own->second)) ++begins_of_other_threads;  // another thread's is open
    ended_by_a_begin.erase(e.thread);
    if (e.size) ended_by_a_begin_number.erase(e.size);  // an end of that number is this one's now
    if (!ends_seen && !open.empty()) {
      // Firmware that marks only the begins: each one ends the inference before it.
      const OpenInference before = take_open(open.rbegin()->first);
      const EndedByABegin ended{before.position, before.number, before.thread};
      if (before.thread != e.thread && ended_by_a_begin.size() < kMaxOpen) ended_by_a_begin[before.thread] = ended;
      if (before.number != 0 && before.number != e.size && ended_by_a_begin_number.size() < kMaxOpen)
        ended_by_a_begin_number[before.number] = ended;
      end_inference(e.time, e.size, before);
    } else if (auto same = open_of_thread.find(e.thread); same != open_of_thread.end()) {
      if (e.size != 0 && open.at(same->second).number != e.size) {
        // Numbered: another thread may end that one by its number.
        began_ahead.insert(e.thread);
      } else {
        // Its thread began again without ending the one before (an
        // exception past --inference-fn's return probe): that one never ends.
        abandon(same->second);
      }
    }
    if (open.size() == kMaxOpen) abandon(open.begin()->first);
    begin_inference(e.size, counts.failed);
    watermark.inference_begin(e.time, usage_known_now());
    const uint64_t device = *tracker.device_inference();
    const uint64_t position = timeline.inference_begin(e.time, device);
    open.emplace(position, OpenInference{e.thread, device, position});
    open_of_thread[e.thread] = position;
    ++opens_of_thread[e.thread];
  }

  void end_marked(const Event& e) {
    ends_seen = true;
    // A begin of another thread ended its inference before ends were seen:
    // counted then; this is that inference's end.
    if (!open_of_thread.contains(e.thread)) {
      std::optional<EndedByABegin> ended;
      if (auto t = ended_by_a_begin.find(e.thread); t != ended_by_a_begin.end()) {
        ended = t->second;
      } else if (auto n = e.size ? ended_by_a_begin_number.find(e.size) : ended_by_a_begin_number.end();
                 n != ended_by_a_begin_number.end()) {
        ended = n->second;
      }
      if (ended) {
        timeline.end_again(e.time, ended->position);
        if (auto t = ended_by_a_begin.find(ended->thread); t != ended_by_a_begin.end() && t->second.position == ended->position)
          ended_by_a_begin.erase(t);
        if (auto n = ended_by_a_begin_number.find(ended->number); n != ended_by_a_begin_number.end() && n->second.position == ended->position)
          ended_by_a_begin_number.erase(n);
        return;
      }
    }
    end_inference(e.time, e.size, ended_by(e));
  }

  void begin_inference(uint64_t number, uint64_t failed_before, bool by_its_end = false) {
    // The flag first: a boot after ones that began no inference (a boot loop
    // in setup) still clears it at its first inference, not its second.
    if (std::exchange(boot_without_inference, false) || tracker.inference() == 0)
      leaks.first_inference_begins(by_its_end);
    const bool first_of_boot = tracker.boot_began_no_inference();
    tracker.begin_inference(number, by_its_end);
    peak.inference_begun(tracker, by_its_end);
    if (first_of_boot && by_its_end) {
      fragmentation.first_inference_by_its_end(*tracker.device_inference());
      overflow.first_inference_by_its_end(*tracker.device_inference());
    }
    failed_at_begin = failed_before;
  }

  // A device in summary mode sends a pool's numbers instead of its blocks:
  // usage, peak and failures feed the same analyses a full trace does.
  void summarize(const Event& e) {
    ++counts.summaries;
    const PoolInfo& info = pool_info(e.pool);
    const uint64_t peak_bytes = std::max(e.address, e.size);
    tracker.summary(e.pool, e.size, peak_bytes);
    // This pool's peak fell at some moment since its previous record, when
    // what the others held is not known (they may have freed and made
    // again since): all that is proven is the peak itself, and the pools'
    // usage together once the run of records is over (summaries_told).
    watermark.usage_changed(peak_bytes);
    peak.summarized(peak_bytes, e.time, tracker);
    summary_time = e.time;
    summaries_untold = true;
    overflow.summarized(e.pool, info, peak_bytes, e.time);
    const bool largest_known = info.size > 0 && e.old_address != kUnknownLargestFree;
    if (e.align) {
      counts.failed += e.align;
      fragmentation.failed_in_summary(e.align, largest_known);
      if (summary_failures.size() <= e.pool) summary_failures.resize(e.pool + 1);
      summary_failures[e.pool] += e.align;
    }
    if (largest_known) pending_levels.push_back({e.pool, e.time, e.old_address});
    timeline.summary(e.pool, e.time, e.size, peak_bytes);
  }

  // All pools' usage at this moment, less what summary records told: that
  // was true at the record, and the pool may have freed since.
  uint64_t usage_known_now() {
    uint64_t told = 0;
    for (PoolState& p : tracker.pools())
      if (p.summarized) told += p.usage();
    return tracker.total_usage() - told;
  }

  // The device sends its pools' records at one moment (an inference end,
  // em_summary()): once they are all in, their usage added is what all
  // pools held together then.
  void summaries_told() {
    if (!summaries_untold) return;
    summaries_untold = false;
    watermark.usage_changed(tracker.total_usage());
    peak.summarized(tracker.total_usage(), summary_time, tracker);
  }

  // Free bytes are the pool's size less what both ends of a shared arena use.
  void measure_summaries() {
    for (const PendingLevel& l : pending_levels) {
      uint64_t size = context.pools.at(l.pool).size;
      auto partner = context.pools.partner(l.pool);
      uint64_t used = tracker.pool(l.pool).usage() + (partner ? tracker.pool(*partner).usage() : 0);
      fragmentation.summarized(l.pool, l.time, size > used ? size - used : 0, l.largest_free);
    }
    pending_levels.clear();
  }

  void tell_observers(uint64_t time, uint64_t device) {
    if (observers.empty()) return;
    size_new_pools();
    InferenceRecord r;
    r.number = device + (tracker.numbered() ? 0 : 1);
    r.boot = tracker.boot();
    r.time = time;
    r.failed_allocations = counts.failed - failed_at_begin;
    for (size_t i = 0; i < context.pools.size(); ++i) {
      auto id = static_cast<PoolId>(i);
      if (context.pools.at(id).placement) continue;
      PoolState& state = tracker.pool(id);
      r.pools.push_back({context.pools.at(id).name, state.usage(), std::max(state.inference_peak, state.usage()),
                         state.live.size(), fragmentation.rate_now(id), fragmentation.known_extent(id),
                         watermark.trend(id)});
    }
    for (InferenceObserver* o : observers) o->on_inference(r);
  }

  void on_event(const Event& e) {
    const bool pooled = e.kind != EventKind::inference_begin && e.kind != EventKind::inference_end &&
                        e.kind != EventKind::mark && e.kind != EventKind::counter;
    if (pooled) {
      const PoolInfo& info = pool_info(e.pool);
      if (info.placement) [[unlikely]] {
        ++counts.placements;
        return;
      }
      // Before a restart's resets too: they leave the gaps as the new size holds them.
      take_in_size(e.pool, info, e.time);
    }
    last_time = e.time;
    if (restarts_seen < context.device_restarts) [[unlikely]] boot_again();
    if (e.kind != EventKind::pool_summary) {
      if (!pending_levels.empty()) measure_summaries();
      summaries_told();
    }
    Block freed;
    layout.seen(e.time);
    float thread_clock = 0;
    if (e.kind == EventKind::alloc || e.kind == EventKind::free || e.kind == EventKind::realloc) {
      thread_clock = leaks.thread_active(e.thread, e.time);
    } else if (e.kind == EventKind::inference_begin || e.kind == EventKind::inference_end) {
      leaks.marks_inferences(e.thread);
      threads.marks_inferences(e.thread);
    }
    switch (e.kind) {
      case EventKind::alloc:
        if (null_in_heap(e.pool, e.address) && !pool_info(e.pool).kind_guessed) [[unlikely]] {
          allocation_returned_null(e);
          break;
        }
        ++counts.allocs;
        allocate(e, thread_clock);
        sampled(e);
        leaks.tick();
        break;
      case EventKind::free: {
        // free(NULL) does nothing; an arena's offset 0 with nothing there is a lost allocation.
        const bool null = null_in_heap(e.pool, e.address);
        if (!release(e.pool, e.address, e.time, e.thread, freed, null) && null) [[unlikely]]
          break;
        ++counts.frees;
        usage_changed(e.time);
        sampled(e);
        leaks.tick();
        break;
      }
      case EventKind::realloc: {
        if ((e.address == 0 && e.size == 0) || null_in_heap(e.pool, e.address)) [[unlikely]] {
          realloc_returned_null(e);
          break;
        }
        ++counts.reallocs;
        Event grown = e;
        grown.kind = EventKind::alloc;
        // realloc(NULL, n) is malloc; a resized block keeps its call site.
        if (release_old(e, freed) && grown.site == kUnknownSite)
          grown.site = freed.site;
        allocate(grown, thread_clock);
        sampled(e);
        leaks.tick();
        break;
      }
      case EventKind::alloc_failed:
        request_failed(e);
        sampled(e);
        break;
      case EventKind::inference_begin:
        begin_marked(e);
        break;
      case EventKind::inference_end:
        end_marked(e);
        break;
      case EventKind::arena_reset:
        ++counts.resets;
        pool_info(e.pool);
        {
          const bool lost = restart_resets_left > 0;
          if (lost) --restart_resets_left;
          tracker.pool(e.pool).live.for_each([&](const Block& b) {
            leaks.removed(b, !lost);
            layout.closed(e.pool, b, e.time);
            threads.dropped(b);
          });
          tracker.reset(e.pool, !lost);
          if (lost) {  // with end markers only, the next inference ran from here
            tracker.pool(e.pool).inference_peak = tracker.pool(e.pool).usage();
            watermark.lost_at_restart(tracker.total_usage());
          }
          // Its dropped blocks went with the rest: a free after this is none of theirs.
          for (auto& d : recently_dropped)
            if (d && d->pool == e.pool) d.reset();
        }
        fragmentation.reset(e.pool, e.time);
        tell_partner(e.pool, e.time);
        usage_changed(e.time);
        sampled(e);
        leaks.tick();
        break;
      case EventKind::guard_check:
        overflow.guard(e.pool, e.size != 0, e.time, e.site, tracker.current_inference());
        break;
      case EventKind::mark:
        ++counts.marks;
        break;
      case EventKind::counter:
        ++counts.counters;
        break;
      case EventKind::pool_summary:
        summarize(e);
        break;
    }
  }

  // A new boot: at the first of its pools' resets, or at the next event or
  // the trace's end when it had no pool yet (its restart was once counted in
  // the input only, and its inferences numbered on from the boot before).
  void boot_again() {
    while (restarts_seen < context.device_restarts) {
      ++restarts_seen;
      restarted(context.restart_time);
    }
  }

  AnalysisResult snapshot() {
    if (restarts_seen < context.device_restarts) boot_again();
    measure_summaries();
    summaries_told();
    size_new_pools();
    // A size declared again after a pool's last event, then the ends of a
    // shared arena as they stand (one declared late that did not allocate since).
    for (size_t i = 0; i < context.pools.size(); ++i)
      if (const auto id = static_cast<PoolId>(i); fragmentation.known_extent(id))
        take_in_size(id, pool_info(id), last_time);
    for (size_t i = 0; i < context.pools.size(); ++i) hear_partner(static_cast<PoolId>(i), last_time);
    AnalysisResult out;
    out.counts = counts;
    out.inferences = tracker.completed();
    out.overlapping_inferences = ends_seen ? begins_of_other_threads : 0;
    judge_restarts(out);
    leaks.finish(tracker, context, out);
    leaks_of_earlier_boots(out);
    threads.finish(context, out);
    temporaries.finish(tracker, context, out);
    watermark.finish(tracker, context, options.clock_hz, out);
    fragmentation.finish(context, tracker.completed(), out);
    overflow.finish(context, out);
    lifo.finish(tracker, context, out);
    peak.finish(tracker, context, out);
    sizes.finish(out);
    layout.finish(tracker, context, out);
    timeline.finish(context, out);
    if (context.time_base == TimeBase::cycles && options.clock_hz && *options.clock_hz > 0) out.clock_hz = options.clock_hz;
    for (size_t i = 0; i < context.pools.size(); ++i) {
      const PoolInfo& info = context.pools.at(static_cast<PoolId>(i));
      if (info.placement) continue;
      PoolState& state = tracker.pool(static_cast<PoolId>(i));
      PoolSummary s;
      s.name = info.name;
      s.kind = info.kind;
      s.size = info.size;
      s.peak_bytes = std::max(state.peak_usage, state.peak_of_earlier_sizes);
      s.final_bytes = state.usage();
      if (!state.summarized || state.live.size()) s.live_count = state.live.size();
      if (i < summary_failures.size()) s.refused_in_summaries = summary_failures[i];
      // Null without a size now (declared again as size=0), as without any.
      if (info.size > 0) {
        s.peak_margin_pct = margin_now(static_cast<PoolId>(i), info.size);
        s.margin_size = info.size;
        s.sized_again = i < margin_of_earlier_sizes.size() && margin_of_earlier_sizes[i];
        if (s.sized_again && margin_of_earlier_sizes[i]->first < *s.peak_margin_pct)
          s.peak_margin_pct = margin_of_earlier_sizes[i]->first, s.margin_size = margin_of_earlier_sizes[i]->second;
      }
      out.pools.push_back(std::move(s));
    }
    if (counts.summaries > 0) {
      // Each pool at its own peak at once: more than all ever held together.
      out.peak.exact = false;
      uint64_t sum = 0;
      for (const PoolSummary& p : out.pools) sum += p.peak_bytes;
      out.peak.at_most = std::max(sum, out.peak.bytes);
    }
    if (tracker.inference() > 0 && !tracker.numbered()) count_inferences_from_one(out);
    judge_lifo(out);
    say_what_summaries_cannot_tell(out);
    no_forecast_for_exhausted_pools(out);
    return out;
  }

  // Pools the device summarised have no blocks: whatever needs a block or a
  // site was not checked in them.
  void say_what_summaries_cannot_tell(AnalysisResult& out) {
    if (counts.summaries == 0) return;
    std::string names;
    for (size_t i = 0; i < tracker.pools().size(); ++i)
      if (tracker.pools()[i].summarized)
        names += fmt::format("{}'{}'", names.empty() ? "" : ", ", context.pools.at(static_cast<PoolId>(i)).name);
    const std::string why = fmt::format(
        "summary records carry no sites or blocks (pools {}): leaks by site, out-of-order frees, request sizes and "
        "what held the peak are not known; the leak rate per inference is measured from the pools' usage",
        names);
    bool blocks = counts.allocs + counts.reallocs > 0;
    for (Check* c : {&out.checks.leaks, &out.checks.lifo}) {
      // A pool traced in full beside summarised ones keeps its verdict; the reason says what it covers.
      if (!blocks || c->status == CheckStatus::not_checked) c->status = CheckStatus::not_checked;
      c->reason = c->reason.empty() || !blocks ? why : c->reason + "; " + why;
    }
    if (out.checks.fragmentation.status == CheckStatus::not_checked && out.fragmentation.pools.empty()) {
      out.checks.fragmentation.reason = "summary records gave no largest free block (the allocator cannot tell) or "
                                        "the pool size is unknown (declare it, or pass --arena-size N)";
      return;
    }
    // Summarised pools with no curve: their fragmentation, and the failures
    // there, are not known; a clean verdict on the others does not cover them.
    std::string unmeasured;
    uint64_t refused = 0;
    for (size_t i = 0; i < tracker.pools().size(); ++i) {
      if (!tracker.pools()[i].summarized) continue;
      const std::string& name = context.pools.at(static_cast<PoolId>(i)).name;
      if (std::any_of(out.fragmentation.pools.begin(), out.fragmentation.pools.end(),
                      [&](const PoolFragmentation& p) { return p.pool == name; }))
        continue;
      unmeasured += fmt::format("{}'{}'", unmeasured.empty() ? "" : ", ", name);
      if (i < summary_failures.size()) refused += summary_failures[i];
    }
    if (unmeasured.empty()) return;
    out.fragmentation.unmeasured_pools = true;
    Check& c = out.checks.fragmentation;
    const std::string unknown = fmt::format(
        "summary records of {} gave no largest free block (the allocator cannot tell, or the pool size is unknown): "
        "fragmentation there is not measured{}",
        unmeasured, refused ? fmt::format(", and its {} refused request{} not judged", refused, refused == 1 ? "" : "s")
                            : "");
    // The others' healthy band is no band of the trace (check once passed
    // max_band: healthy on it); a warning or danger there stands.
    if (c.status == CheckStatus::clean) {
      c.status = CheckStatus::not_checked;
      out.fragmentation.band.reset();
    }
    c.reason = c.reason.empty() ? unknown : c.reason + "; " + unknown;
  }

  // Markers without numbers were counted from 0 during the run; people count
  // unnumbered inferences from 1.
  static void count_inferences_from_one(AnalysisResult& out) {
    auto shift = [](std::optional<uint64_t>& n) {
      if (n) ++*n;
    };
    shift(out.peak.inference);
    if (out.inferences) ++out.peak.max_inference_index;
    for (auto& f : out.fragmentation.failures) shift(f.inference);
    for (auto& g : out.guard_failures) shift(g.inference);
    for (auto& l : out.leaks)
      if (l.growth && l.growth->growth_inferences) {
        ++l.growth->first_inference;
        shift(l.growth->stopped_after_inference);
      }
    for (auto& w : out.watermarks) {
      for (auto& point : w.series) ++point.first;
      if (w.fit_line) {
        ++w.fit_line->from_inference;
        ++w.fit_line->to_inference;
      }
      if (w.floor_trend) ++w.floor_trend->at_inference;
    }
    for (auto& span : out.inference_marks.spans) ++span.number;
    auto shift_boot = [&](Restart& r) {
      shift(r.during_inference);
      shift(r.after_inference);
      for (auto& l : r.leaks)
        if (l.growth && l.growth->growth_inferences) {
          ++l.growth->first_inference;
          shift(l.growth->stopped_after_inference);
        }
    };
    for (auto& r : out.restarts.kept) shift_boot(r);
    for (auto* r : {&out.restarts.most_leaked, &out.restarts.fastest_leak, &out.restarts.first_unjudged})
      if (*r) shift_boot(**r);
  }

  // An arena the device summarised shows no free order: no violation found
  // there is no proof (its summaries once read "[OK] no LIFO violation").
  void judge_lifo(AnalysisResult& out) {
    bool arena = false, summarised = false;
    for (size_t i = 0; i < context.pools.size(); ++i) {
      const PoolState& p = tracker.pool(static_cast<PoolId>(i));
      if (context.pools.at(static_cast<PoolId>(i)).kind != PoolKind::arena ||
          std::max(p.peak_usage, p.peak_of_earlier_sizes) == 0)
        continue;
      arena = true;
      summarised |= p.summarized;
    }
    Check& c = out.checks.lifo;
    if (out.lifo.violations) c.status = CheckStatus::found;
    else if (arena && !summarised) c.status = CheckStatus::clean;
    else if (!arena) c.reason = "no arena pool was used (free order matters only in a stack-like arena)";
  }

  // In the latest boot.

  // A pool that already overflowed or refused a request for want of free
  // bytes has run out: a forecast of when it will is wrong, whatever the
  // slope says. A device's summary records count refusals without their
  // sizes, so they say neither (a 100,000 B request refused by a 12 KiB heap
  // with 43 % free read "already exhausted"). So has one whose leak stopped growing because its requests
  // failed, or that refused requests in each of the last inferences: it
  // refuses now, though bytes are free (a leak of 644 B blocks refused 1,930 times
  // was forecast to fill the pool 304 inferences later). A single refusal
  // with the bytes free (fragmentation) and service after it, or one of
  // more than the whole pool, says nothing of running out.
  void no_forecast_for_exhausted_pools(AnalysisResult& out) {
    // The forecast is of the latest boot: a pool that ran out before a restart was reset there.
    auto this_boot = [&](uint64_t time) { return !boot_began_at || time > *boot_began_at; };
    auto size_of = [&](const std::string& pool) {
      for (const PoolSummary& p : out.pools)
        if (p.name == pool) return p.size;
      return uint64_t{0};
    };
    // A leak stopped by failures says nothing more: one refused request
    // larger than its pool stops it too (a review found "already exhausted"
    // beside an 86 % margin); a pool it filled shows it here.
    auto ran_out = [&](const std::string& pool) {
      const uint64_t pool_size = size_of(pool);
      auto for_want_of_bytes = [&](const AllocFailure& f) {
        return f.pool == pool && this_boot(f.time) && (!f.total_free || *f.total_free < f.size) &&
               !(pool_size && f.size > pool_size);
      };
      // A leak of blocks no larger than the pool whose requests all failed
      // since it stopped, at least 3 of them: the pool refuses it now, though
      // an allocator's headers leave bytes free (a 100 B leak every 2nd
      // inference refused 63 times beside 396 B free had no forecast at all:
      // its refusals never ran 3 inferences in a row).
      auto leak_refused = [&](const SiteLeak& l) {
        return l.pool == pool && l.growth && l.growth->stopped_by_failures() &&
               l.growth->failed_requests >= kRefusingInferences && l.block_size && pool_size &&
               l.block_size <= pool_size;
      };
      return std::any_of(out.overflows.begin(), out.overflows.end(),
                         [&](const Overflow& o) { return o.pool == pool && this_boot(o.time); }) ||
             refusing_at_end(pool) || std::any_of(out.leaks.begin(), out.leaks.end(), leak_refused) ||
             std::any_of(out.fragmentation.failures.begin(), out.fragmentation.failures.end(), for_want_of_bytes);
    };
    if (!out.exhaustion_forecast) {
      // A leak that filled its pool has no rate left to forecast from: its
      // pool is exhausted all the same (the forecast was null), when the
      // pool shows it ran out. One refused request larger than the pool, or
      // refused with the bytes free, filled nothing; nor does a pool of
      // unknown size say it is full (a failed malloc(SIZE_MAX) of a process).
      auto filled = std::find_if(out.leaks.begin(), out.leaks.end(), [&](const SiteLeak& l) {
        return l.growth && l.growth->stopped_by_failures() && size_of(l.pool) > 0 && ran_out(l.pool);
      });
      if (filled == out.leaks.end()) return;
      Forecast fc;
      fc.pool = filled->pool;
      fc.bytes_per_inference = filled->bytes_per_inference.value_or(0);
      if (options.clock_hz && out.cycles_per_inference) fc.seconds = 0.0;
      out.exhaustion_forecast = fc;
    }
    Forecast& fc = *out.exhaustion_forecast;
    if (!ran_out(fc.pool)) return;
    fc.already_exhausted = true;
    fc.inferences = 0;
    fc.remaining_bytes = 0;
    if (fc.seconds) fc.seconds = 0.0;
  }
};

Analyzer::Analyzer(TraceContext& context, AnalyzerOptions options)
    : impl_(std::make_unique<Impl>(context, options)) {}
Analyzer::~Analyzer() = default;
void Analyzer::on_event(const Event& event) { impl_->on_event(event); }
AnalysisResult Analyzer::snapshot() { return impl_->snapshot(); }
void Analyzer::add_observer(InferenceObserver& observer) { impl_->observers.push_back(&observer); }
void Analyzer::set_trace_clock(std::optional<double> hz) {
  if (!impl_->options.clock_hz) impl_->options.clock_hz = hz;
}

}  // namespace edgemem
