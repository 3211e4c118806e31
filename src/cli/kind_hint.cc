#include "cli/kind_hint.h"

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "edgemem/decoder.h"
#include "session/decompressor.h"

namespace edgemem::cli {
namespace {

// The trace format of what the first compressed bytes unpack to, if they
// show one. Fed a piece at a time until the sniffing window is full, so a
// highly compressed file is not unpacked whole (zstd gives nothing until a
// whole block of up to 128 KiB has come in).
std::optional<Format> trace_inside(Compression packed, std::span<const uint8_t> head) {
  std::string inner;
  auto unpacker = Decompressor::make(packed);
  const Decompressor::Output keep = [&](std::span<const uint8_t> out) {
    inner.append(reinterpret_cast<const char*>(out.data()), std::min(out.size(), kSniffBytes - inner.size()));
  };
  bool damaged = false;
  constexpr size_t kPiece = Decompressor::kPieceBytes;
  for (size_t at = 0; at < head.size() && inner.size() < kSniffBytes && !damaged; at += kPiece)
    damaged = !unpacker->feed(head.subspan(at, std::min(kPiece, head.size() - at)), keep).empty();
  // The last piece short of 4 KiB is held back until drained.
  if (!damaged && inner.size() < kSniffBytes) unpacker->drain(keep);
  return sniff_trace({reinterpret_cast<const uint8_t*>(inner.data()), inner.size()}).format;
}

}  // namespace

std::string kind_hint(const std::string& path, std::string_view bytes, std::string_view reads_like) {
  std::span<const uint8_t> head(reinterpret_cast<const uint8_t*>(bytes.data()), std::min(bytes.size(), kSniffBytes));
  // Only analyze and watch decompress their input: a compressed trace goes
  // there as it is; anything else is decompressed first.
  if (auto packed = compression_of(head)) {
    if (auto inner = trace_inside(*packed, head))
      return fmt::format("; it is {} {}-compressed {} trace: run `edgemem analyze {}` (it reads it compressed)",
                         *packed == Compression::xz ? "an" : "a", to_string(*packed), to_string(*inner), path);
    return fmt::format("; it is {0}-compressed: decompress it first ({0} -dc {1} > FILE)", to_string(*packed), path);
  }
  SniffVerdict v = sniff_trace(head);
  if (v.format) {
    const std::string_view format = to_string(*v.format);
    const bool vowel = std::string_view("aeiou").find(format[0]) != std::string_view::npos;
    return fmt::format("; it is {} {} trace: run `edgemem analyze {}`", vowel ? "an" : "a", format, path);
  }
  // The kind the failed command reads: a map that `fit --map` could not
  // parse is no file for `edgemem map` either.
  if (!v.other_kind || v.instead.find(fmt::format("`edgemem {} {{file}}`", reads_like)) != std::string::npos) return {};
  // "PATH: an ELF file, not a trace; for its sections ... run `edgemem map --elf PATH`"
  std::string said = v.refusal(path).substr(path.size() + 2);
  if (size_t cut = said.find(", not a trace"); cut != std::string::npos) said.erase(cut, 13);
  return "; it looks like " + said;
}

}  // namespace edgemem::cli
