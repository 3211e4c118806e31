#include "report/textlog_export.h"

#include <algorithm>

#include <fmt/format.h>

#include "ingest/textlog_escape.h"

namespace edgemem {
namespace {

// `offset=` puts a record in an arena pool, `addr=` in a heap (the decoder's rule).
std::string_view address_key(const PoolInfo& pool) { return pool.kind == PoolKind::arena ? "offset" : "addr"; }

void append_site(const Event& e, const TraceContext& context, std::string& out) {
  if (e.site != kUnknownSite) fmt::format_to(std::back_inserter(out), " site={}", textlog_escape(context.sites.name(e.site)));
}

void append_thread(const Event& e, std::string& out) {
  if (e.thread != 0) fmt::format_to(std::back_inserter(out), " thread={}", e.thread);
}

}  // namespace

void TextLogWriter::declare(PoolId pool, uint64_t time, const TraceContext& context, std::string& out) {
  const PoolInfo& info = context.pools.at(pool);
  // Only what the trace stated: a size edgemem assumed (--arena-size) is not
  // the device's, and the decoder needs a size in a POOL line.
  if (!info.declared || info.size == 0) return;
  if (declared_.size() <= pool) declared_.resize(pool + 1u);
  Declared& d = declared_[pool];
  if (d.written && d.kind == info.kind && d.base == info.base && d.size == info.size) return;
  d = {true, info.kind, info.base, info.size};
  fmt::format_to(std::back_inserter(out), "[MEM][{}] POOL name={} kind={} size={}", time, textlog_escape(info.name),
                 to_string(info.kind), info.size);
  // A heap's base is written only when known: base=0 declares one at 0.
  if (info.base_known || info.kind == PoolKind::arena) fmt::format_to(std::back_inserter(out), " base=0x{:x}", info.base);
  if (info.shares) fmt::format_to(std::back_inserter(out), " shares={}", textlog_escape(context.pools.at(*info.shares).name));
  out += '\n';
}

void TextLogWriter::losses(const DecodeStats& s, uint64_t time, std::string& out) {
  // What judge_after_data_loss counts as lost mid-trace, so the log's gates
  // are unjudged exactly where the trace's are.
  const uint64_t records = s.dropped_records + s.failed_checks + s.malformed_lines + s.overflows +
                           s.impossible_events + s.out_of_order_records;
  const uint64_t lost = (records > records_lost_ ? records - records_lost_ : 0) +
                        (s.corrupt_bytes > corrupt_bytes_ ? 1 : 0);
  records_lost_ = std::max(records_lost_, records);
  corrupt_bytes_ = std::max(corrupt_bytes_, s.corrupt_bytes);
  if (lost) fmt::format_to(std::back_inserter(out), "[MEM][{}] DROP {}\n", time, lost);
}

void TextLogWriter::end(const DecodeStats& s, std::string& out) {
  losses(s, last_time_, out);
  // A trace cut off at its end (a record cut short, a chunk or compressed
  // stream that stops early) ends in a cut line, which a reader counts as
  // truncated as the trace's reader did: data lost at the end, not mid-trace.
  if (s.truncated_bytes || s.stream_cut_bytes || s.cut_chunk_missing || s.recording_cut || s.compression_cut ||
      !s.compression_problem.empty())
    fmt::format_to(std::back_inserter(out), "[MEM][{}] (the trace was cut off here)", last_time_);
}

void TextLogWriter::write(const Event& e, const TraceContext& context, std::string& out) {
  last_time_ = e.time;
  auto it = std::back_inserter(out);
  if (context.device_restarts != restarts_written_) [[unlikely]] {
    for (; restarts_written_ < context.device_restarts; ++restarts_written_) fmt::format_to(it, "[MEM][{}] BOOT\n", e.time);
    // device_restarted() resets every pool in order, the first now.
    if (e.kind == EventKind::arena_reset && e.pool == 0) restart_resets_left_ = context.pools.size();
  }
  if (restart_resets_left_ > 0 && e.kind == EventKind::arena_reset) {
    --restart_resets_left_;
    return;
  }
  bool pooled = e.kind == EventKind::alloc || e.kind == EventKind::free || e.kind == EventKind::realloc ||
                e.kind == EventKind::alloc_failed || e.kind == EventKind::arena_reset ||
                e.kind == EventKind::guard_check;
  // Pools the trace declared are written in the trace's own order (reports
  // list pools in that order), as soon as they exist; then any re-declaration.
  for (; pools_checked_ < context.pools.size(); ++pools_checked_)
    declare(static_cast<PoolId>(pools_checked_), e.time, context, out);
  if (pooled) declare(e.pool, e.time, context, out);
  const PoolInfo* pool = pooled ? &context.pools.at(e.pool) : nullptr;
  std::string pool_name = pool ? textlog_escape(pool->name) : std::string();
  switch (e.kind) {
    case EventKind::alloc:
      fmt::format_to(it, "[MEM][{}] ALLOC size={} align={} {}=0x{:x} pool={}", e.time, e.size, e.align,
                     address_key(*pool), e.address, pool_name);
      break;
    case EventKind::free:
      fmt::format_to(it, "[MEM][{}] FREE {}=0x{:x} pool={}", e.time, address_key(*pool), e.address, pool_name);
      break;
    case EventKind::realloc:
      fmt::format_to(it, "[MEM][{}] REALLOC old=0x{:x} size={} align={} {}=0x{:x} pool={}", e.time, e.old_address,
                     e.size, e.align, address_key(*pool), e.address, pool_name);
      break;
    case EventKind::alloc_failed:
      fmt::format_to(it, "[MEM][{}] ALLOC_FAIL size={} align={} pool={}", e.time, e.size, e.align, pool_name);
      break;
    case EventKind::inference_begin:
    case EventKind::inference_end:
      fmt::format_to(it, "[MEM][{}] INFER {} {}", e.time, e.kind == EventKind::inference_begin ? "begin" : "end",
                     e.size);
      break;
    case EventKind::arena_reset:
      fmt::format_to(it, "[MEM][{}] RESET pool={}", e.time, pool_name);
      break;
    case EventKind::guard_check:
      fmt::format_to(it, "[MEM][{}] GUARD {} pool={}", e.time, e.size == 0 ? "ok" : "corrupt", pool_name);
      break;
    case EventKind::mark:
      fmt::format_to(it, "[MEM][{}] MARK {}", e.time, textlog_escape(context.sites.name(e.site)));
      out += '\n';
      return;
    case EventKind::counter:
      fmt::format_to(it, "[MEM][{}] COUNTER name={} value={}", e.time, textlog_escape(context.sites.name(e.site)),
                     e.size);
      out += '\n';
      return;
    case EventKind::pool_summary:
      ++summaries_left_out_;
      return;
  }
  append_site(e, context, out);
  append_thread(e, out);
  out += '\n';
}

}  // namespace edgemem
