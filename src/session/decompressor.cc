#include "session/decompressor.h"

#include "ingest/zstd_step.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <array>
#include <vector>

#include <fmt/format.h>

#include "report/units.h"

namespace edgemem {

const char* to_string(Compression c) {
  switch (c) {
    case Compression::gzip: return "gzip";
    case Compression::xz: return "xz";
    case Compression::zstd: return "zstd";
  }
  return "?";
}

std::optional<Compression> compression_of(std::span<const uint8_t> head) {
  auto starts = [&](std::initializer_list<uint8_t> magic) {
    return head.size() >= magic.size() && std::equal(magic.begin(), magic.end(), head.begin());
  };
  if (starts({0x1f, 0x8b})) return Compression::gzip;                      // RFC 1952
  if (starts({0xfd, '7', 'z', 'X', 'Z', 0x00})) return Compression::xz;    // xz file format 1.0
  if (starts({0x28, 0xb5, 0x2f, 0xfd})) return Compression::zstd;          // RFC 8878 frame
  // A skippable frame first (pzstd writes one): 0x184D2A50-5F, little-endian.
  if (head.size() >= 4 && (head[0] & 0xf0) == 0x50 && head[1] == 0x2a && head[2] == 0x4d && head[3] == 0x18)
    return Compression::zstd;
  return std::nullopt;
}

namespace {

constexpr size_t kOutBytes = 1 << 16;

class GzipDecompressor final : public Decompressor {
 public:
  GzipDecompressor() {
    // 15 + 16: a gzip wrapper (not zlib's), the largest window.
    if (inflateInit2(&z_, 15 + 16) != Z_OK) failed_ = "zlib could not start (out of memory)";
  }
  ~GzipDecompressor() override { inflateEnd(&z_); }

  std::string finish(const Output&) override {
    if (!failed_.empty()) return failed_;
    return in_member_ ? "the gzip stream ends early: the file was cut off (or is still being written)" : "";
  }
  std::string ignored() const override {
    return trailing_nonzero_ ? fmt::format("{} after the end of the gzip data ignored, as gzip -d ignores them",
                                           units::counted(trailing_, "byte", "bytes"))
                             : "";
  }

 private:
  std::string feed_piece(std::span<const uint8_t> in, const Output& out) override {
    if (!failed_.empty()) return failed_;
    z_.next_in = const_cast<Bytef*>(in.data());  // zlib's API is not const-correct; it does not write there
    z_.avail_in = static_cast<uInt>(in.size());
    for (;;) {
      if (member_ended_) {
        if (z_.avail_in == 0) return {};
        // After a member, another one, or bytes gzip -d ignores (zero
        // padding silently, anything else with a warning).
        if (trailing_ || *z_.next_in != 0x1f) {
          for (uInt i = 0; i < z_.avail_in; ++i) trailing_nonzero_ |= z_.next_in[i] != 0;
          trailing_ += z_.avail_in;
          consumed_ += z_.avail_in;
          z_.avail_in = 0;
          return {};
        }
        inflateReset(&z_);
        member_ended_ = false;
      }
      const uInt before = z_.avail_in;
      z_.next_out = out_.data();
      z_.avail_out = static_cast<uInt>(out_.size());
      const int rc = inflate(&z_, Z_NO_FLUSH);
      consumed_ += before - z_.avail_in;
      in_member_ |= before != z_.avail_in;
      if (z_.avail_out < out_.size()) out({out_.data(), out_.size() - z_.avail_out});
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
        in_member_ = false;
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) return failed_ = fmt::format("damaged gzip data ({})", z_.msg ? z_.msg : zError(rc));
      // A full output buffer may hold back more; else all input is taken.
      if (z_.avail_in == 0 && z_.avail_out > 0) return {};
    }
  }

  z_stream z_{};
  std::array<uint8_t, kOutBytes> out_;
  bool member_ended_ = false, in_member_ = false;
  uint64_t trailing_ = 0;  // bytes after the last member
  bool trailing_nonzero_ = false;
  std::string failed_;
};

class XzDecompressor final : public Decompressor {
 public:
  XzDecompressor() {
    if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) failed_ = "liblzma could not start";
  }
  ~XzDecompressor() override { lzma_end(&s_); }

  std::string finish(const Output& out) override { return run({}, LZMA_FINISH, out); }

 private:
  std::string feed_piece(std::span<const uint8_t> in, const Output& out) override { return run(in, LZMA_RUN, out); }
  std::string run(std::span<const uint8_t> in, lzma_action action, const Output& out) {
    if (!failed_.empty()) return failed_;
    s_.next_in = in.data();
    s_.avail_in = in.size();
    for (;;) {
      const size_t before = s_.avail_in;
      s_.next_out = out_.data();
      s_.avail_out = out_.size();
      const lzma_ret rc = lzma_code(&s_, action);
      consumed_ += before - s_.avail_in;
      if (s_.avail_out < out_.size()) out({out_.data(), out_.size() - s_.avail_out});
      if (rc == LZMA_STREAM_END) return {};
      if (rc == LZMA_BUF_ERROR && action == LZMA_FINISH)
        return failed_ = "the xz stream ends early: the file was cut off (or is still being written)";
      if (rc != LZMA_OK) return failed_ = fmt::format("damaged xz data ({})", why(rc));
      if (s_.avail_in == 0 && s_.avail_out > 0 && action == LZMA_RUN) return {};
    }
  }
  static const char* why(lzma_ret rc) {
    switch (rc) {
      case LZMA_DATA_ERROR: return "corrupt compressed data";
      case LZMA_FORMAT_ERROR: return "not the xz format";
      case LZMA_OPTIONS_ERROR: return "unsupported compression options";
      case LZMA_MEM_ERROR: return "out of memory";
      case LZMA_UNSUPPORTED_CHECK: return "unsupported integrity check";
      default: return "liblzma error";
    }
  }
  lzma_stream s_ = LZMA_STREAM_INIT;
  std::array<uint8_t, kOutBytes> out_;
  std::string failed_;
};

class ZstdDecompressor final : public Decompressor {
 public:
  ZstdDecompressor() : stream_(ZSTD_createDStream()) {
    if (!stream_) {
      failed_ = "zstd could not start (out of memory)";
      return;
    }
    hint_ = ZSTD_initDStream(stream_);
    ZSTD_decompressBegin(stream_);  // see zstd_step.h
  }
  ~ZstdDecompressor() override { ZSTD_freeDStream(stream_); }

  std::string finish(const Output&) override {
    if (!failed_.empty()) return failed_;
    return in_frame_ ? "the zstd stream ends early: the file was cut off (or is still being written)" : "";
  }

 private:
  std::string feed_piece(std::span<const uint8_t> in, const Output& out) override {
    if (!failed_.empty()) return failed_;
    // Calls go on until one moves nothing (see zstd_step.h for how much each takes).
    size_t at = 0;
    for (;;) {
      const size_t give = zstd_step_input(stream_, hint_, flushing_, in.size() - at);
      ZSTD_inBuffer input{in.data() + at, give, 0};
      ZSTD_outBuffer output{out_.data(), out_.size(), 0};
      const size_t hint = ZSTD_decompressStream(stream_, &output, &input);
      at += input.pos;
      consumed_ += input.pos;
      if (ZSTD_isError(hint)) {
        // zstd leaves pos where the failing call began: the damage is named
        // at the end of what it was given, as far as it had read when it
        // found it (a block is judged whole, so up to 128 KiB after the
        // damaged byte), as gzip and xz name theirs.
        consumed_ += input.size - input.pos;
        failed_ = fmt::format("damaged zstd data ({})", ZSTD_getErrorName(hint));
        if (ZSTD_getErrorCode(hint) == ZSTD_error_frameParameter_windowTooLarge)
          failed_ = fmt::format("a zstd --long frame ({}): decompress it with zstd -d --long=31 and pipe it in",
                                ZSTD_getErrorName(hint));
        return failed_;
      }
      if (output.pos) out({out_.data(), output.pos});
      const bool flushed = flushing_;
      flushing_ = output.pos == output.size;
      // A call that moved nothing answers for the next frame (its header size), not this one.
      if (input.pos > 0 || output.pos > 0) {
        in_frame_ = hint != 0;
        hint_ = hint;
      } else if (!flushed) {
        return {};
      }
    }
  }
  ZSTD_DStream* stream_;
  std::array<uint8_t, kOutBytes> out_;
  size_t hint_ = 1;
  bool in_frame_ = false;
  bool flushing_ = false;  // the last call filled the output buffer
  std::string failed_;
};

}  // namespace

std::string Decompressor::feed(std::span<const uint8_t> in, const Output& out) {
  while (!in.empty()) {
    if (partial_.empty() && in.size() >= kPieceBytes) {
      if (std::string error = feed_piece(in.first(kPieceBytes), out); !error.empty()) return error;
      in = in.subspan(kPieceBytes);
      continue;
    }
    const size_t take = std::min(kPieceBytes - partial_.size(), in.size());
    partial_.insert(partial_.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(take));
    in = in.subspan(take);
    if (partial_.size() < kPieceBytes) break;
    std::string error = feed_piece(partial_, out);
    partial_.clear();
    if (!error.empty()) return error;
  }
  return {};
}

std::string Decompressor::drain(const Output& out) {
  if (partial_.empty()) return {};
  std::string error = feed_piece(partial_, out);
  partial_.clear();
  return error;
}

std::unique_ptr<Decompressor> Decompressor::make(Compression c) {
  switch (c) {
    case Compression::gzip: return std::make_unique<GzipDecompressor>();
    case Compression::xz: return std::make_unique<XzDecompressor>();
    case Compression::zstd: return std::make_unique<ZstdDecompressor>();
  }
  return nullptr;
}

std::optional<std::string> decompressed(std::string data, std::string& error) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const auto c = compression_of({bytes, data.size()});
  if (!c) return data;
  std::string out;
  auto unpack = Decompressor::make(*c);
  auto append = [&](std::span<const uint8_t> piece) { out.append(reinterpret_cast<const char*>(piece.data()), piece.size()); };
  error = unpack->feed({bytes, data.size()}, append);
  if (error.empty()) error = unpack->drain(append);
  if (error.empty()) error = unpack->finish(append);
  if (error.empty()) return out;
  error = fmt::format("compressed offset {}: {}", unpack->consumed(), error);
  return std::nullopt;
}

}  // namespace edgemem
