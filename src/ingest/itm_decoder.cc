#include "itm_packet.h"

#include <algorithm>

namespace edgemem {

std::string_view to_string(ItmPacketKind kind) {
  switch (kind) {
    case ItmPacketKind::sync: return "sync";
    case ItmPacketKind::overflow: return "overflow";
    case ItmPacketKind::local_timestamp: return "local_timestamp";
    case ItmPacketKind::global_timestamp1: return "global_timestamp1";
    case ItmPacketKind::global_timestamp2: return "global_timestamp2";
    case ItmPacketKind::extension: return "extension";
    case ItmPacketKind::instrumentation: return "instrumentation";
    case ItmPacketKind::event_counter: return "event_counter";
    case ItmPacketKind::exception_trace: return "exception_trace";
    case ItmPacketKind::pc_sample: return "pc_sample";
    case ItmPacketKind::data_trace_pc: return "data_trace_pc";
    case ItmPacketKind::data_trace_address: return "data_trace_address";
    case ItmPacketKind::data_trace_value: return "data_trace_value";
    case ItmPacketKind::hardware_other: return "hardware_other";
  }
  return "?";
}

void ItmPacketParser::push(uint8_t byte) {
  switch (state_) {
    case State::header:
      header(byte);
      return;
    case State::payload:
      packet_.value |= uint64_t{byte} << (8 * collected_);
      if (++collected_ == expected_) finish_source();
      return;
    case State::continued: {
      // Continuation-encoded payloads: 7 bits a byte, bit 7 = more follows.
      bool more = byte & 0x80;
      if (packet_.kind == ItmPacketKind::global_timestamp1 && collected_ == 3) {
        packet_.value |= uint64_t{byte & 0x1fu} << 21;
        packet_.clock_change = byte & 0x20;
        packet_.wrap = byte & 0x40;
        more = false;
      } else {
        packet_.value |= uint64_t{byte & 0x7fu} << (shift_ + 7 * collected_);
      }
      ++collected_;
      if (!more || collected_ == max_bytes_) {
        state_ = State::header;
        packet_.size = static_cast<uint8_t>(collected_);
        emit();
      }
      return;
    }
  }
}

void ItmPacketParser::header(uint8_t byte) {
  if (byte == 0x00) {
    ++zeros_;
    return;
  }
  if (zeros_ > 0) {
    size_t zeros = zeros_;
    zeros_ = 0;
    if (byte == 0x80 && zeros >= kSyncZeros) {
      packet_ = ItmPacket{};
      packet_.kind = ItmPacketKind::sync;
      handler_.on_packet(packet_);
      return;
    }
    if (zeros < kSyncZeros)
      for (size_t i = 0; i < zeros; ++i) handler_.on_corrupt(0x00, zeros - i);
  }
  packet_ = ItmPacket{};
  collected_ = 0;
  uint8_t ss = byte & 0x03;
  if (ss != 0) {  // source packet: instrumentation (bit 2 = 0) or hardware
    packet_.address = byte >> 3;
    packet_.size = static_cast<uint8_t>(ss == 3 ? 4 : ss);
    expected_ = packet_.size;
    if (byte & 0x04) {
      uint8_t d = packet_.address;
      if (d == 0) packet_.kind = ItmPacketKind::event_counter;
      else if (d == 1) packet_.kind = ItmPacketKind::exception_trace;
      else if (d == 2) packet_.kind = ItmPacketKind::pc_sample;
      else if (d >= 8 && d <= 15) {
        packet_.kind = (d & 1) ? ItmPacketKind::data_trace_address : ItmPacketKind::data_trace_pc;
        packet_.address = (d >> 1) & 3;
      } else if (d >= 16 && d <= 23) {
        packet_.kind = ItmPacketKind::data_trace_value;
        packet_.write = d & 1;
        packet_.address = (d >> 1) & 3;
      } else {
        packet_.kind = ItmPacketKind::hardware_other;
      }
    } else {
      packet_.kind = ItmPacketKind::instrumentation;
      packet_.address = static_cast<uint8_t>(packet_.address + 32 * std::min<uint64_t>(page_, 7));
    }
    state_ = State::payload;
    return;
  }
  if ((byte & 0x0f) == 0x00) {
    if (byte == 0x70) {
      packet_.kind = ItmPacketKind::overflow;
      handler_.on_packet(packet_);
    } else if ((byte & 0x80) == 0) {  // local timestamp format 2: value in header
      packet_.kind = ItmPacketKind::local_timestamp;
      packet_.value = (byte >> 4) & 0x07;
      handler_.on_packet(packet_);
    } else if ((byte & 0xc0) == 0xc0) {  // local timestamp format 1
      packet_.kind = ItmPacketKind::local_timestamp;
      packet_.relation = (byte >> 4) & 0x03;
      max_bytes_ = 4;
      shift_ = 0;
      state_ = State::continued;
    } else {
      handler_.on_corrupt(byte, 0);
    }
    return;
  }
  if (byte == 0x94 || byte == 0xb4) {
    packet_.kind = byte == 0x94 ? ItmPacketKind::global_timestamp1 : ItmPacketKind::global_timestamp2;
    max_bytes_ = byte == 0x94 ? 4 : 6;
    shift_ = 0;
    state_ = State::continued;
    return;
  }
  if ((byte & 0x0b) == 0x08) {  // extension: C EX[2:0] 1 SH 0 0
    packet_.kind = ItmPacketKind::extension;
    packet_.value = (byte >> 4) & 0x07;
    packet_.hardware_page = byte & 0x04;
    if (byte & 0x80) {
      // More EX bits follow; they extend the page number above bit 2.
      max_bytes_ = 4;
      shift_ = 3;
      state_ = State::continued;
      return;
    }
    emit();
    return;
  }
  handler_.on_corrupt(byte, 0);
}

void ItmPacketParser::emit() {
  if (packet_.kind == ItmPacketKind::extension && !packet_.hardware_page) page_ = packet_.value;
  handler_.on_packet(packet_);
}

void ItmPacketParser::finish_source() {
  state_ = State::header;
  if (packet_.kind == ItmPacketKind::pc_sample && packet_.size == 1) packet_.sleeping = packet_.value == 0;
  if (packet_.kind == ItmPacketKind::exception_trace) {
    packet_.function = static_cast<uint8_t>((packet_.value >> 12) & 0x3);
    packet_.value &= 0x1ff;
  }
  handler_.on_packet(packet_);
}

}  // namespace edgemem
