// Whether the trace lost events, judged from what the decoder skipped and
// what the analysis could not match; any of it can hide or fake a finding.
#include <fmt/format.h>

#include "edgemem/analyzer.h"
#include "edgemem/site_table.h"
#include "report/units.h"

namespace edgemem {

Check data_loss_check(const DecodeStats& s, const EventCounts& c) {
  std::string lost;
  // A count, grouped, with the phrase for one or for many, and what both share.
  auto add = [&](uint64_t n, std::string_view one, std::string_view many, std::string_view why = {}) {
    if (n) lost += fmt::format("{}{} {}{}", lost.empty() ? "" : ", ", units::grouped(n), n == 1 ? one : many, why);
  };
  add(s.overflows, "ITM overflow packet", "ITM overflow packets", " (the device dropped trace data)");
  // In a file cut off, most are records written past the cut, not lost by the writer.
  if (s.recording_cut)
    add(s.dropped_records, "record numbered and not in the file", "records numbered and not in the file",
        " (written past where the file is cut, or never written)");
  else
    add(s.dropped_records, "record lost before it was written", "records lost before they were written",
        " (a device's trace buffer was full; in a Linux recording, records the process numbered and never wrote, or "
        "probe events the kernel dropped)");
  add(s.out_of_order_records, "record applied after later ones", "records applied after later ones",
      " (more records waited for an earlier one than the reader holds, 256 MiB packed: a block freed on another "
      "thread near them may read as a lost free and a live block)");
  if (s.recording_stopped)
    lost += fmt::format("{}the recording stopped before the program ended ({} not recorded: the program closed "
                        "the recording's file and it could not be opened again, after chroot or setuid, or it "
                        "could not grow: a file size limit, a full disk)",
                        lost.empty() ? "" : ", ", units::counted(s.calls_not_recorded, "call", "calls"));
  // A failed record's bytes join the corrupt ones when the next SYNC ends
  // the skip: a live watch can see the failure first.
  if (s.corrupt_bytes || s.failed_checks) {
    std::string failed = s.failed_checks ? fmt::format("{} emt record{} failed {} check byte: damaged in transit",
                                                       units::grouped(s.failed_checks), s.failed_checks == 1 ? "" : "s",
                                                       s.failed_checks == 1 ? "its" : "their")
                                         : std::string();
    lost += lost.empty() ? "" : ", ";
    if (!s.corrupt_bytes) lost += failed;
    else lost += fmt::format("{} corrupt byte{} skipped{}", units::grouped(s.corrupt_bytes), s.corrupt_bytes == 1 ? "" : "s",
                             failed.empty() ? "" : " (" + failed + ")");
  }
  add(s.malformed_lines, "malformed [MEM] line skipped", "malformed [MEM] lines skipped");
  if (s.recording_cut) {
    // The file ends where its layout says more must come: the recording's
    // end is not in it. Said as what it is, in the file's own bytes, not as
    // one record (a cut file once read "65209 bytes of a cut-off last record
    // ignored" of a 26,356-byte file missing three quarters of its run).
    std::string where =
        s.cut_in_packed_frame
            ? fmt::format("inside the packed zstd frame that starts at byte {} ({} of its bytes are here, not its end "
                          "or its checksum)",
                          units::grouped(s.cut_at), units::grouped(s.cut_bytes_present))
            : fmt::format("inside the chunk at byte {} ({} of its bytes are here)", units::grouped(s.cut_at),
                          units::grouped(s.cut_bytes_present));
    std::string lost_here;
    if (s.truncated_bytes)
      lost_here += fmt::format("; its last {} could not be decoded{}",
                               s.truncated_bytes == 1 ? std::string("byte") : units::counted(s.truncated_bytes, "byte", "bytes"),
                               s.cut_in_packed_frame ? " (zstd gives a block only whole)" : "");
    if (s.cut_chunk_missing)
      lost_here += fmt::format("; the last chunk read lacks {} bytes of its records{}", units::grouped(s.cut_chunk_missing),
                               s.cut_in_packed_frame ? " (unpacked)" : "");
    lost += fmt::format("{}the recording's file is cut off: it ends {}, so the recording did not end there: the "
                        "rest of the program's run is not in the file, and nothing says how much of it there was; "
                        "read: {} from the file's {}{}",
                        lost.empty() ? "" : ", ", where, units::counted(s.events, "event", "events"),
                        units::counted(s.bytes, "byte", "bytes"), lost_here);
  } else {
    add(s.truncated_bytes, "byte of a cut-off last record ignored", "bytes of a cut-off last record ignored");
  }
  add(s.stream_cut_bytes, "byte", "bytes",
      " of a record cut where the followed file was truncated or replaced (rotated, or written again) or a TCP source hung up ignored");
  add(s.impossible_events, "impossible event dropped (no pool could hold it", "impossible events dropped (no pool could hold them",
      ": corrupt data)");
  const std::string site_table = fmt::format(" did not fit the site table of {} names (counted under '(other sites)')",
                                             units::grouped(SiteTable::kMaxSites));
  add(s.sites_dropped, "event whose call site, marker or counter name", "events whose call site, marker or counter name",
      site_table);
  add(s.pools_dropped, "event whose pool", "events whose pool", " did not fit the pool table (counted under '(other pools)')");
  add(s.strings_dropped, "emt STRING record", "emt STRING records",
      " past the string table's cap (their sites lose the file name)");
  if (!s.compression_problem.empty())
    lost += fmt::format("{}{}{}", lost.empty() ? "" : ", ", s.compression_problem,
                        s.compressed_bytes_unread
                            ? fmt::format(" ({} compressed byte{} unread)", units::grouped(s.compressed_bytes_unread),
                                          s.compressed_bytes_unread == 1 ? "" : "s")
                            : "");
  add(c.unknown_frees, "free of a block that was not live", "frees of blocks that were not live",
      " (allocations lost, or the program freed a block twice)");
  add(c.replaced_blocks, "allocation over a live block", "allocations over a live block", " (frees lost)");
  if (lost.empty()) return {CheckStatus::clean, {}};
  // Damage was seen; where records carry no check byte, more of it may
  // have decoded as events.
  if (s.unchecked_events && (s.corrupt_bytes || s.impossible_events))
    lost += "; the emt records carry no check bytes, so damage that still decodes was read as it came (the device "
            "library writes them unless built with -DEDGEMEM_CHECK=0)";
  return {CheckStatus::found, lost};
}

void judge_after_data_loss(const DecodeStats& s, AnalysisResult& r) {
  const EventCounts& c = r.counts;
  std::string lost;
  auto add = [&](uint64_t n, std::string_view one, std::string_view many) {
    if (n) lost += fmt::format("{}{} {}", lost.empty() ? "" : ", ", units::grouped(n), n == 1 ? one : many);
  };
  add(s.overflows, "ITM overflow packet", "ITM overflow packets");
  add(s.dropped_records, "record dropped", "records dropped");
  add(s.out_of_order_records, "record applied out of order", "records applied out of order");
  add(s.corrupt_bytes, "corrupt byte skipped", "corrupt bytes skipped");
  add(s.corrupt_bytes ? 0 : s.failed_checks, "damaged record", "damaged records");
  add(s.malformed_lines, "malformed line", "malformed lines");
  add(s.impossible_events, "impossible event", "impossible events");
  add(c.unknown_frees, "free of a block never seen", "frees of blocks never seen");
  add(c.replaced_blocks, "allocation over a live block", "allocations over a live block");
  r.lost_mid_trace = lost;
  if (lost.empty()) return;
  FragmentationResult& f = r.fragmentation;
  Check& check = r.checks.fragmentation;
  if (check.status == CheckStatus::not_checked || !f.band) return;
  // A healthy heap read 31 % "danger" from 8 flipped bits.
  check.status = CheckStatus::not_checked;
  check.reason = fmt::format(
      "records were lost mid-trace ({}): a lost allocation reads as a hole the heap does not have, so its free space "
      "is not known; measured on what arrived: {} at worst, {} at the end, not judged",
      lost, f.max_rate ? fmt::format("{:.0f}%", *f.max_rate * 100) : "not measured",
      f.final_rate ? fmt::format("{:.0f}%", *f.final_rate * 100) : "not measured");
  f.band.reset();
}

}  // namespace edgemem
