#include "itm_port_router.h"

#include <algorithm>

#include <fmt/format.h>

namespace edgemem {

ItmDecoder::ItmDecoder(TraceContext& context, EventSink& sink)
    : context_(context),
      sink_(sink),
      parser_(*this),
      markers_(context, sink),
      memory_(context, sink),
      emt_(context, sink) {
  // Without ITM timestamps the payload keeps its own clock (emt deltas,
  // [MEM] stamps, seed record order), so wrapping a trace in ITM port
  // writes, as target/ does, changes none of its numbers.
  markers_.set_marks_from_plain_lines(true);
}

void ItmDecoder::feed(std::span<const uint8_t> bytes) {
  for (uint8_t b : bytes) {
    parser_.push(b);
    ++offset_;
  }
  stats_.bytes += bytes.size();
}

void ItmDecoder::finish() {
  if (!held_.empty()) release(*tell_port1(true));
  // A port-0 line or marker word still open at the end was cut off:
  // truncated, as in a text log (a word cut short would name a wrong mark).
  markers_.finish();
  note_port0_problem();
  memory_.finish();
  emt_.finish();
  stats_.truncated_bytes += parser_.pending();
  add_port_stats(stats_);
}

DecodeStats ItmDecoder::progress() const {
  DecodeStats s = stats_;
  add_port_stats(s);
  return s;
}

void ItmDecoder::add_port_stats(DecodeStats& s) const {
  // Events are counted by the port decoders; their own problems (a port 1
  // byte that starts no record) are the user's problems too.
  for (size_t k = 0; k < kind_counts_.size(); ++k)
    if (kind_counts_[k]) s.packets[std::string(to_string(static_cast<ItmPacketKind>(k)))] = kind_counts_[k];
  s.events = markers_.stats().events + port1_stats().events + counters_;
  s.corrupt_bytes += port1_stats().corrupt_bytes;
  s.truncated_bytes += port1_stats().truncated_bytes + markers_.stats().truncated_bytes;
  s.dropped_records += emt_.stats().dropped_records;
  s.checked_records += emt_.stats().checked_records;
  s.failed_checks += emt_.stats().failed_checks;
  s.unchecked_events += emt_.stats().unchecked_events;
  s.malformed_lines += markers_.stats().malformed_lines;
  s.skipped_lines += markers_.stats().skipped_lines;
  s.markers_dropped += markers_.stats().markers_dropped;
  if (!s.time_went_back) s.time_went_back_line = markers_.stats().time_went_back_line;
  s.time_went_back += markers_.stats().time_went_back;
  s.strings_dropped += emt_.stats().strings_dropped;
  // A second HEADER on port 1, or a BOOT line on port 0: the device started again.
  s.device_restarts += port1_stats().device_restarts + markers_.stats().device_restarts;
}

void ItmDecoder::note_port0_problem() {
  // Placed at the packet that ended the bad line, not where the stream
  // happened to be when the stats were merged.
  if (auto& q = markers_.stats().first_problem; q && !stats_.first_problem)
    stats_.note_problem(offset_, 0, fmt::format("ITM port 0 line {}: {}", q->line, q->what));
}

void ItmDecoder::on_corrupt(uint8_t byte, size_t back) {
  if (!held_.empty()) {  // in its place among the held packets: the first problem is the first one
    ItmPacket p;
    p.size = byte;
    return hold({p, offset_, true, back});
  }
  ++stats_.corrupt_bytes;
  ++reserved_bytes_;
  stats_.note_problem(offset_ - back, 0, fmt::format("expected an ITM packet header, found reserved byte 0x{:02X}", byte));
}

// Port 1's record set, from its first bytes (docs/formats/itm.md): emt
// where a SYNC marker comes (a stream read from its start opens with one; a
// capture that began later meets one within 256 records), seed records
// where eight whole records chain from some byte on (a capture that began
// inside seed records is aligned within a record or two; emt bytes chain
// eight with odds of about one in 10^11). After 4,096 packets with neither,
// or at the end, port 1 is read as seed records, as it always was.
std::optional<ItmDecoder::Port1> ItmDecoder::tell_port1(bool at_end) {
  static constexpr uint8_t kSyncMarker[] = {0x7E, 0x65, 0x6D, 0x74};
  static constexpr size_t kSeedRecords = 8;
  const std::vector<uint8_t>& b = port1_held_;
  if (port1_from_start_ && !b.empty() && b[0] == 0x7E) return Port1::emt;
  for (; port1_searched_ + 5 <= b.size(); ++port1_searched_) {
    const auto at = b.begin() + static_cast<std::ptrdiff_t>(port1_searched_);
    if (std::equal(std::begin(kSyncMarker), std::end(kSyncMarker), at) && (at[4] == 0x21 || at[4] == 0x23)) return Port1::emt;
  }
  for (; seed_from_ < b.size(); ++seed_from_) {
    size_t at = seed_from_, records = 0;
    while (at < b.size() && records < kSeedRecords) {
      const size_t length = SeedBinDecoder::record_length(b[at]);
      if (length == 0) break;
      at += length;
      if (at <= b.size()) ++records;
    }
    if (records == kSeedRecords) return Port1::seed;
    if (at >= b.size()) break;  // no byte broke the chain yet: more bytes tell
  }
  if (at_end || held_.size() >= kMaxHeld) return Port1::seed;
  return std::nullopt;
}

void ItmDecoder::hold(const Held& h) {
  held_.push_back(h);
  const ItmPacket& p = h.packet;
  // Lost writes: the bytes before them say nothing of where records start after.
  if (!h.corrupt && p.kind == ItmPacketKind::overflow) {
    port1_held_.clear();
    port1_searched_ = seed_from_ = 0;
    port1_from_start_ = false;
  }
  const bool port1 = !h.corrupt && p.kind == ItmPacketKind::instrumentation && p.address == 1;
  if (port1)
    for (unsigned i = 0; i < p.size; ++i) port1_held_.push_back(static_cast<uint8_t>(p.value >> (8 * i)));
  // Only new port-1 bytes can tell more; the bound on held packets is looked at every 256.
  if (auto set = (port1 || held_.size() % 256 == 0) ? tell_port1(false) : std::nullopt) release(*set);
}

void ItmDecoder::release(Port1 set) {
  port1_ = set;
  std::vector<Held> held;
  held.swap(held_);
  port1_held_.clear();
  const uint64_t now = offset_;
  for (const Held& h : held) {
    offset_ = h.offset;
    if (h.corrupt) on_corrupt(h.packet.size, h.back);
    else on_packet(h.packet);
  }
  offset_ = now;
}

void ItmDecoder::port1(std::span<const uint8_t> bytes) {
  if (port1_ == Port1::emt) emt_.feed(bytes);
  else memory_.feed(bytes);
  // Port decoders count their own stream bytes; remember where in the file
  // their first problem surfaced.
  if (port1_stats().first_problem && !stats_.first_problem)
    stats_.note_problem(offset_, 0, "ITM port 1: " + port1_stats().first_problem->what);
}

void ItmDecoder::end_marker() {
  if (marker_open_) {
    static constexpr uint8_t nl = '\n';
    markers_.feed({&nl, 1});
    marker_open_ = false;
    note_port0_problem();
  }
  line_is_word_ = true;
}

// A payload with a clock of its own ([MEM] stamps, emt deltas) keeps it
// once it has used it: switching would move time. Seed records, markers
// and counters have none: the ones before the first timestamp keep their
// order numbers, and the ITM clock takes over, counting on from them so
// that time never goes back. A timestamp follows the packets it stamps, so
// a capture's first records always come before its first timestamp (and
// deciding by "no events yet" threw every timestamp away).
bool ItmDecoder::itm_clock() {
  if (clock_ == Clock::undecided) {
    clock_ = markers_.records() + (port1_ == Port1::emt ? emt_.stats().events : 0) == 0 ? Clock::itm : Clock::payload;
    if (clock_ == Clock::itm) time_ = markers_.stats().events + port1_stats().events + counters_;
  }
  return clock_ == Clock::itm;
}

void ItmDecoder::on_packet(const ItmPacket& p) {
  if (port1_ == Port1::unknown && (!held_.empty() || (p.kind == ItmPacketKind::instrumentation && p.address == 1)))
    return hold({p, offset_});
  ++kind_counts_[static_cast<size_t>(p.kind)];
  switch (p.kind) {
    case ItmPacketKind::sync:
      ++stats_.syncs;
      return;
    case ItmPacketKind::overflow:
      // The ITM FIFO was full: stimulus writes were dropped on the device.
      ++stats_.overflows;
      if (port1_ == Port1::seed) memory_.drop_partial();
      if (port1_ == Port1::emt) emt_.drop_partial();
      // A printed port-0 line that lost characters is not decoded either
      // ("size=644" read as "size=6"); a marker word ends here, as at any
      // other packet (sigrok reads the STM32F105 capture's words so).
      if (marker_open_ && !line_is_word_) {
        markers_.drop_partial();
        marker_open_ = false;
        line_is_word_ = true;
        skip_port0_line_ = true;  // its tail is no marker
        note_port0_problem();
      }
      if (line_is_word_) end_marker();
      return;
    case ItmPacketKind::local_timestamp:
      if (!itm_clock()) return;
      seen_local_ = true;
      time_ += p.value;
      break;
    case ItmPacketKind::global_timestamp1:
      if (!itm_clock()) return;
      {
        // Bits 25:0 of the global clock. Lower than the last ones: they
        // wrapped, and the high bits went up by one (a GTS2 that follows
        // says so too; a probe that sends no GTS2 says nothing else).
        uint64_t high = time_ & ~uint64_t{0x3ffffff};
        // A packet of fewer than 4 bytes carries only the low bits that
        // changed, 7 a byte (ARMv7-M D4.2.5): read whole, each added 2^26
        // to the time.
        uint64_t low = p.value;
        if (global_seen_ && p.size < 4) {
          const uint64_t changed = (uint64_t{1} << (7 * p.size)) - 1;
          low = (global_low_ & ~changed) | (p.value & changed);
        }
        if (global_seen_ && low < global_low_) high += 0x4000000;
        global_seen_ = true;
        global_low_ = low;
        // Absolute, but never before the records already given a time.
        if (!seen_local_) time_ = std::max(time_, high | global_low_);
      }
      break;
    case ItmPacketKind::global_timestamp2:
      if (!itm_clock()) return;
      if (!seen_local_) time_ = std::max(time_, (p.value << 26) | global_low_);
      break;
    case ItmPacketKind::instrumentation:
      stimulus(p);
      return;
    default:
      if (line_is_word_) end_marker();  // hardware packets end a port-0 marker word, not a printed line
      return;
  }
  context_.time_base = TimeBase::cycles;
  memory_.set_external_time(time_);
  markers_.set_external_time(time_);
}

void ItmDecoder::stimulus(const ItmPacket& p) {
  ++port_packets_[p.address];
  uint8_t bytes[4];
  for (unsigned i = 0; i < p.size; ++i) bytes[i] = static_cast<uint8_t>(p.value >> (8 * i));
  std::span<const uint8_t> payload(bytes, p.size);
  if (p.address != 0 && line_is_word_) end_marker();
  switch (p.address) {
    case 0:
      for (uint8_t b : payload) {
        if (skip_port0_line_) {
          skip_port0_line_ = b != '\n' && b != 0;
          continue;
        }
        if (b == 0) {
          end_marker();
          continue;
        }
        // A marker word ("On", "phase:1") may come without a newline, so
        // another source's packet (a PC sample, another port's write) ends
        // it. A printed line (one opening with '[' as "[MEM][...]", or with
        // a blank, as after a logger's "I (12) app: " prefix) ends at its
        // newline: those packets come between its characters, and ending
        // it there lost every record of a capture with PC sampling on.
        if (b == ' ' || b == '\t' || (b == '[' && !marker_open_)) line_is_word_ = false;
        marker_open_ = true;
        markers_.feed({&b, 1});
        if (b == '\n') {
          marker_open_ = false;
          line_is_word_ = true;
          note_port0_problem();
        }
      }
      return;
    case 1:
      port1(payload);
      return;
    case 2: {
      Event e;
      e.kind = EventKind::counter;
      e.time = time_;
      e.size = p.value;
      e.site = context_.sites.intern("itm port 2");
      sink_.on_event(e);
      ++counters_;
      return;
    }
    default:
      return;  // other ports are counted, not interpreted
  }
}

}  // namespace edgemem
