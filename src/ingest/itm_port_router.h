// Turns ITM packets into edgemem events (docs/formats/itm.md):
//   port 0  text markers; "[MEM]" lines are decoded as the text log
//   port 1  memory records, bytes reassembled: emt (a SYNC marker) or
//           the seed-binary record set (whole records from its first byte)
//   port 2  32-bit counters
// Local and global timestamps drive Event::time.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "edgemem/decoder.h"
#include "emt_decoder.h"
#include "itm_packet.h"
#include "seedbin_decoder.h"
#include "textlog_decoder.h"

namespace edgemem {

class ItmDecoder final : public Decoder, private ItmPacketParser::Handler {
 public:
  ItmDecoder(TraceContext& context, EventSink& sink);
  void feed(std::span<const uint8_t> bytes) override;
  void finish() override;
  DecodeStats progress() const override;
  std::string_view format_name() const override { return "itm"; }
  std::optional<double> clock_hz() const override { return emt_.clock_hz(); }

  uint64_t port_packets(unsigned port) const { return port < port_packets_.size() ? port_packets_[port] : 0; }
  // Bytes that start no ITM packet (stats().corrupt_bytes also holds the
  // port decoders' own corrupt bytes).
  uint64_t reserved_bytes() const { return reserved_bytes_; }

 private:
  void on_packet(const ItmPacket& packet) override;
  void on_corrupt(uint8_t byte, size_t back) override;
  void stimulus(const ItmPacket& packet);
  void end_marker();
  // Adds the port decoders' counts (they count their own events and problems).
  void add_port_stats(DecodeStats& s) const;
  void note_port0_problem();

  TraceContext& context_;
  EventSink& sink_;
  ItmPacketParser parser_;
  TextLogDecoder markers_;  // port 0
  SeedBinDecoder memory_;   // port 1, seed records
  EmtDecoder emt_;          // port 1, emt stream
  enum class Port1 : uint8_t { unknown, seed, emt } port1_ = Port1::unknown;
  void port1(std::span<const uint8_t> bytes);
  // Until port 1's first bytes tell its record set, every packet is held
  // in order with its offset, then handled as if it had just come: a
  // capture that began inside an emt stream was read as seed records, and
  // its bytes as invented events.
  struct Held {
    ItmPacket packet;
    uint64_t offset;
    bool corrupt = false;  // a reserved header byte (packet.size), `back` bytes before `offset`
    size_t back = 0;
  };
  static constexpr size_t kMaxHeld = 4096;  // packets (TpiuDecoder places problems within them)
  std::vector<Held> held_;
  std::vector<uint8_t> port1_held_;  // their port-1 bytes
  size_t port1_searched_ = 0;        // of which looked at for a SYNC marker
  size_t seed_from_ = 0;             // the first byte a chain of seed records may still start at
  bool port1_from_start_ = true;     // no overflow lost bytes before them
  void hold(const Held& held);
  std::optional<Port1> tell_port1(bool at_end);
  void release(Port1 set);
  const DecodeStats& port1_stats() const { return port1_ == Port1::emt ? emt_.stats() : memory_.stats(); }
  bool marker_open_ = false;
  bool skip_port0_line_ = false;  // the rest of a printed line an overflow cut: to its newline
  bool line_is_word_ = true;  // the open port-0 line has no blank and opens with no '[': a marker, ended by other packets
  uint64_t time_ = 0;
  uint64_t global_low_ = 0;
  bool global_seen_ = false;  // a GTS1 came: the next one lower than it wrapped
  bool seen_local_ = false;
  // Which clock events carry, fixed by what comes first: ITM timestamps
  // before any event, or the payload's own clock (emt deltas, [MEM] stamps)
  // when events came first. Switching mid-trace would make time jump.
  enum class Clock : uint8_t { undecided, itm, payload };
  Clock clock_ = Clock::undecided;
  bool itm_clock();  // decides the clock on the first timestamp
  std::array<uint64_t, 256> port_packets_{};  // by port, pages included
  std::array<uint64_t, 16> kind_counts_{};  // by ItmPacketKind; named in stats at finish
  uint64_t counters_ = 0;
  uint64_t reserved_bytes_ = 0;
  uint64_t offset_ = 0;
};

}  // namespace edgemem
