// Format detection on positive evidence. A trace format is chosen only when
// the bytes show it (emt's SYNC marker, "[MEM]" lines, a run of well-formed
// seed records with plausible sizes, ITM packets on edgemem's ports, TPIU
// frames around such ITM); anything else is refused with what it looks
// like. Decoders are the judges, so detection and decoding cannot disagree
// about what a valid record is, but every decoder explains *some* share of
// any bytes, so "best score wins" is never enough on its own.
#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "edgemem/decoder.h"
#include "emt_decoder.h"
#include "itm_port_router.h"
#include "non_trace_signatures.h"
#include "report/units.h"
#include "seedbin_decoder.h"
#include "textlog_decoder.h"
#include "tpiu_deframer.h"

namespace edgemem {
namespace {

// Counts what a decoder produced, to judge whether it is plausible.
struct Tally : EventSink {
  uint64_t events = 0, blocks = 0, plausible_sizes = 0, plausible_addresses = 0;
  void on_event(const Event& e) override {
    ++events;
    if (e.kind != EventKind::alloc && e.kind != EventKind::realloc && e.kind != EventKind::free) return;
    ++blocks;
    // Heap addresses are non-zero and at least word-aligned; requests are
    // at most a few MiB on the devices that write these records.
    plausible_addresses += e.address != 0 && e.address % 4 == 0;
    plausible_sizes += e.kind == EventKind::free || (e.size > 0 && e.size <= (uint64_t{16} << 20));
  }
};

double share(uint64_t part, uint64_t whole) { return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0; }

struct Evidence {
  bool ok = false;
  std::string why_not;  // for the refusal's "tried ..." list
};

Evidence emt_evidence(std::span<const uint8_t> head) {
  TraceContext ctx;
  Tally tally;
  EmtDecoder emt(ctx, tally, false);  // the stacks' names do not tell the format
  emt.feed(head);
  emt.finish();
  const DecodeStats& s = emt.stats();
  // A file that opens with SYNC is emt however damaged what follows (the
  // decoder reports the damage and keeps what came before it), even that
  // SYNC's own time or check byte; a SYNC further in may be chance.
  // ("~emt!", or "~emt#" for records with check bytes.)
  static constexpr std::string_view kOpening = "~emt";
  const bool opens_with_sync = head.size() > kOpening.size() &&
                               std::equal(kOpening.begin(), kOpening.end(), head.begin()) &&
                               (head[kOpening.size()] == '!' || head[kOpening.size()] == '#');
  if (s.syncs == 0 && !opens_with_sync) return {false, "emt: no SYNC marker"};
  if (!opens_with_sync && share(s.corrupt_bytes, s.bytes) > 0.1)
    return {false, "emt: SYNC found but most bytes are not emt records"};
  return {true, {}};
}

// Serial terminals add colour escapes (ESC); anything else below 0x20 is binary.
bool mostly_text(std::span<const uint8_t> head) {
  size_t binary = static_cast<size_t>(std::count_if(head.begin(), head.end(), [](uint8_t b) {
    return b < 0x20 && b != '\n' && b != '\r' && b != '\t' && b != 0x1b;
  }));
  return share(binary, head.size()) <= 0.05;
}

Evidence log_evidence(std::span<const uint8_t> head) {
  std::string_view text(reinterpret_cast<const char*>(head.data()), head.size());
  const bool is_text = mostly_text(head);
  if (text.find("[MEM][") == std::string_view::npos)
    return {false, is_text ? fmt::format("log: text, but no [MEM] lines in its first {}", units::counted(head.size(), "byte", "bytes"))
                           : "log: no [MEM] lines"};
  if (!is_text) return {false, "log: [MEM] found inside binary data"};
  return {true, {}};
}

Evidence seedbin_evidence(std::span<const uint8_t> head) {
  TraceContext ctx;
  Tally tally;
  SeedBinDecoder seed(ctx, tally);
  seed.feed(head);
  seed.finish();
  const DecodeStats& s = seed.stats();
  if (share(s.corrupt_bytes, s.bytes) > 0.02)
    return {false, fmt::format("seedbin: {:.0f} % of bytes start no A1/F1 record", 100 * share(s.corrupt_bytes, s.bytes))};
  if (tally.events < 3) return {false, "seedbin: fewer than 3 records"};
  if (tally.blocks && (share(tally.plausible_sizes, tally.blocks) < 0.9 || share(tally.plausible_addresses, tally.blocks) < 0.9))
    return {false, "seedbin: records with implausible sizes or addresses"};
  return {true, {}};
}

// ITM is a dense code: most bytes parse as *some* packet. The evidence is
// structure: few reserved bytes, stimulus traffic on edgemem's ports (0-2)
// rather than the 29 others, and something only a real capture has -- sync
// packets, or memory records / text that decode cleanly from the ports.
Evidence itm_evidence(std::span<const uint8_t> bytes) {
  TraceContext ctx;
  Tally tally;
  ItmDecoder itm(ctx, tally);
  itm.feed(bytes);
  itm.finish();
  const DecodeStats& s = itm.stats();
  if (s.bytes == 0) return {false, "itm: no bytes"};
  uint64_t other_ports = 0, edgemem_ports = 0;
  for (unsigned port = 0; port < 256; ++port) (port <= 2 ? edgemem_ports : other_ports) += itm.port_packets(port);
  if (share(itm.reserved_bytes(), s.bytes) > 0.05)
    return {false, fmt::format("itm: {:.0f} % of bytes start no ITM packet", 100 * share(itm.reserved_bytes(), s.bytes))};
  if (other_ports > edgemem_ports / 20)
    return {false, fmt::format("itm: {} of {} stimulus packets on ports other than 0-2", other_ports,
                               other_ports + edgemem_ports)};
  if (s.syncs == 0 && tally.events == 0) return {false, "itm: no sync packets and nothing decodable on ports 0-2"};
  return {true, {}};
}

Evidence tpiu_evidence(std::span<const uint8_t> head, unsigned stream) {
  std::vector<uint8_t> itm_bytes;
  std::array<uint64_t, 128> id_bytes{};
  TpiuDeframer deframer([&](uint8_t id, uint8_t byte) {
    ++id_bytes[id & 0x7f];
    if (id == stream) itm_bytes.push_back(byte);
  });
  for (uint8_t b : head) deframer.push(b);
  // Any bytes read as frames scatter over many random source IDs; a real
  // capture has a few sources (ITM, ETM) and, before its first sync, maybe
  // a misaligned frame or two.
  std::sort(id_bytes.begin(), id_bytes.end(), std::greater<>());
  uint64_t all = 0;
  for (uint64_t n : id_bytes) all += n;
  if (share(id_bytes[0] + id_bytes[1] + id_bytes[2], all) < 0.95) return {false, "tpiu: frames scatter over many sources"};
  if (itm_bytes.empty()) return {false, fmt::format("tpiu: no bytes for source {}", stream)};
  Evidence itm = itm_evidence(itm_bytes);
  if (!itm.ok) return {false, fmt::format("tpiu: stream {} is not ITM ({})", stream, itm.why_not)};
  return {true, {}};
}

}  // namespace

std::string SniffVerdict::refusal(std::string_view path) const {
  std::string advice = instead;
  // A stream (stdin, a TCP source) is no file the advice's command could open.
  const bool stream = path == "-" || path.starts_with("tcp://");
  std::string_view file = path;
  if (stream && advice.find("{file}") != std::string::npos) {
    advice = "save it to a FILE, then " + advice;
    file = "FILE";
  }
  // Search on past each replacement: the path itself may contain "{file}".
  for (size_t at = 0; (at = advice.find("{file}", at)) != std::string::npos; at += file.size()) advice.replace(at, 6, file);
  return advice.empty() ? fmt::format("{}: {}", path, looks_like) : fmt::format("{}: {}; {}", path, looks_like, advice);
}

SniffVerdict sniff_trace(std::span<const uint8_t> head, unsigned tpiu_stream) {
  SniffVerdict v;
  if (head.empty()) {
    v.looks_like = "empty input, expected a trace";
    return v;
  }
  // Signatures of files that are not traces come first: an ELF's or a
  // map's text may well contain "[MEM]" or a stray SYNC.
  if (auto other = recognise_non_trace(head)) {
    v.looks_like = std::move(other->looks_like);
    v.instead = std::move(other->instead);
    v.other_kind = true;
    v.reads_compressed = other->reads_compressed;
    return v;
  }
  std::vector<std::string> tried;
  auto attempt = [&](Format f, const Evidence& e) {
    if (e.ok && !v.format) v.format = f;
    if (!e.ok) tried.push_back(e.why_not);
  };
  attempt(Format::emt, emt_evidence(head));
  attempt(Format::log, log_evidence(head));
  if (!v.format) attempt(Format::seedbin, seedbin_evidence(head));
  // Frames first: a TPIU capture's bytes can pass as ITM (its idle frames
  // are zeros, which ITM takes for an idle line), while raw ITM read as
  // frames scatters over many source IDs and fails.
  if (!v.format) attempt(Format::tpiu, tpiu_evidence(head, tpiu_stream));
  if (!v.format) attempt(Format::itm, itm_evidence(head));
  if (v.format) return v;
  v.looks_like = fmt::format("not a trace edgemem can read (tried {})", fmt::join(tried, "; "));
  // A device's boot messages can fill the window the format is judged on.
  v.instead = mostly_text(head) ? "if its [MEM] lines come later, run with --format log; else force a decoder with --format"
                                : "force a decoder with --format";
  return v;
}

}  // namespace edgemem
