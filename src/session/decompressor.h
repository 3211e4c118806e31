// Whole-file compression around a trace — a rotated device.log.gz, a soak
// capture kept as .xz or .zst — undone as the bytes stream in, in constant
// memory, so the decoders never see it. Concatenated members or frames (cat
// a.gz b.gz) read as one stream, as gzip -d reads them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace edgemem {

enum class Compression { gzip, xz, zstd };
const char* to_string(Compression c);

// The longest magic number compression_of() reads.
inline constexpr size_t kCompressionMagicBytes = 6;
// What the first bytes of the input are wrapped in; nullopt when they are
// no known compression (given fewer than kCompressionMagicBytes bytes, only
// a whole magic number counts).
std::optional<Compression> compression_of(std::span<const uint8_t> head);

class Decompressor {
 public:
  using Output = std::function<void(std::span<const uint8_t>)>;
  static std::unique_ptr<Decompressor> make(Compression c);
  virtual ~Decompressor() = default;

  // Takes `in`, handing each piece of output to `out`. Empty when fine;
  // else what is damaged, and consumed() says where. Nothing is read after
  // damage: a compressed stream cannot be resynchronised. The library is
  // given the input in pieces of kPieceBytes at fixed offsets, so what
  // comes out, and where damage is found, is the same however the input
  // was split into reads; up to kPieceBytes - 1 bytes are held back until
  // the next feed() completes their piece, or drain().
  std::string feed(std::span<const uint8_t> in, const Output& out);
  // Undoes the bytes held back now: at the end of the input, or in a live
  // view that cannot wait (the pieces then start again from here). Empty,
  // or what is damaged there.
  std::string drain(const Output& out);
  // At the end of the input, after drain(): empty, or why the stream is incomplete.
  virtual std::string finish(const Output& out) = 0;
  // Compressed bytes read so far; after damage, as far as was read when it
  // was found (zstd: the end of the block or block header it judged).
  uint64_t consumed() const { return consumed_; }
  // What was read and left out, as the format's own tool leaves it out (a
  // warning, not damage); empty when nothing was.
  virtual std::string ignored() const { return {}; }

  static constexpr size_t kPieceBytes = 4096;

 protected:
  virtual std::string feed_piece(std::span<const uint8_t> piece, const Output& out) = 0;
  uint64_t consumed_ = 0;

 private:
  std::vector<uint8_t> partial_;  // the start of the next piece
};

// A whole file in memory, decompressed if it is compressed (else unchanged).
// On damage: nullopt, and `error` says what and where.
std::optional<std::string> decompressed(std::string data, std::string& error);

}  // namespace edgemem
