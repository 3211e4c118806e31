// ARMv7-M ITM/DWT packet protocol (Architecture Reference Manual, Appendix
// D4): a byte-at-a-time parser with no lookahead, so a live SWO stream, a
// file and a socket are decoded the same way.
#pragma once

#include <cstdint>
#include <string_view>

namespace edgemem {

enum class ItmPacketKind : uint8_t {
  sync,
  overflow,
  local_timestamp,    // value = ticks since the previous local timestamp
  global_timestamp1,  // value = bits [25:0]; under 4 bytes, only the low 7 per byte (the rest unchanged)
  global_timestamp2,  // value = bits [63:26]
  extension,          // value = EX page bits
  instrumentation,    // software stimulus port write
  event_counter,
  exception_trace,
  pc_sample,
  data_trace_pc,
  data_trace_address,
  data_trace_value,
  hardware_other,     // a DWT discriminator this parser does not name
};

std::string_view to_string(ItmPacketKind kind);

struct ItmPacket {
  ItmPacketKind kind = ItmPacketKind::sync;
  // Stimulus port (0-255: with the page of the last extension packet,
  // 32 ports a page), DWT comparator or discriminator.
  uint8_t address = 0;
  uint8_t size = 0;     // payload bytes (of a continued one: those it came in)
  uint64_t value = 0;   // payload, little-endian
  uint8_t relation = 0; // local timestamp TC bits
  bool wrap = false, clock_change = false;  // global timestamp 1
  bool write = false;   // data trace value: write (true) or read
  bool sleeping = false;  // PC sample: core asleep
  uint8_t function = 0;   // exception trace: 1 enter, 2 exit, 3 return
  bool hardware_page = false;  // extension: SH, a page of hardware sources, not of stimulus ports
};

class ItmPacketParser {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual void on_packet(const ItmPacket& packet) = 0;
    // A byte that starts no valid packet, `back` bytes before the one just
    // pushed (zeros are judged at the byte after them); parsing continues.
    virtual void on_corrupt(uint8_t byte, size_t back) = 0;
  };

  explicit ItmPacketParser(Handler& handler) : handler_(handler) {}
  void push(uint8_t byte);
  // Bytes held in an unfinished packet (for truncation accounting); a run
  // of zeros as long as a sync's is the line idling, not a packet cut off.
  size_t pending() const { return state_ == State::header ? (zeros_ < kSyncZeros ? zeros_ : 0) : collected_ + 1; }

 private:
  enum class State : uint8_t { header, payload, continued };
  void header(uint8_t byte);
  void finish_source();

  Handler& handler_;
  State state_ = State::header;
  ItmPacket packet_;
  uint8_t expected_ = 0;   // payload bytes still wanted (source packets)
  uint8_t collected_ = 0;
  uint8_t max_bytes_ = 0;  // limit for continuation-encoded packets
  uint8_t shift_ = 0;      // extension pages continue above the header's 3 bits
  size_t zeros_ = 0;       // consecutive 0x00 bytes while looking for sync
  // Stimulus port page, from extension packets: port 33 is port 1 of page 1,
  // not port 1 (ARMv7-M D4.2.6).
  uint64_t page_ = 0;
  void emit();
  // A sync is at least 47 zero bits then a one: five zero bytes and 0x80.
  // As many zeros or more with no 0x80 after them are an idle line (an
  // OpenOCD capture opens with thousands), not damage.
  static constexpr size_t kSyncZeros = 5;
};

}  // namespace edgemem
