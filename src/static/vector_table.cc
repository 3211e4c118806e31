#include "static/vector_table.h"

#include <algorithm>

#include "static/elf_image.h"

namespace edgemem {

std::optional<VectorTable> read_vector_table(const ElfImage& elf) {
  std::set<uint64_t> code;  // where the image's functions start
  for (const ElfSymbol& s : elf.symbols)
    if (s.type == 'T' || s.type == 't' || s.type == 'W') code.insert(s.address);
  auto handler = [&](uint32_t word) { return (word & 1) && code.contains(word & ~uint32_t{1}); };
  size_t size = elf.vector_words.size();
  // Keil's startup files say how long their table is, in bytes.
  for (const ElfSymbol& s : elf.symbols)
    if (s.name == "__Vectors_Size" && s.type == 'A') size = std::min<size_t>(size, s.address / 4);
  const std::vector<uint32_t>& words = elf.vector_words;
  if (size < 2 || words[0] == 0 || (words[0] & 3) || !handler(words[1])) return std::nullopt;
  // Every Cortex-M table has its 16 system entries, each a handler or 0
  // (reserved), but for entry 7, where NXP's LPC parts keep a checksum. A
  // shorter run is a table of the reset vector alone, followed by code
  // whose literal pools hold function addresses too (a LiteOS image's
  // main+1 read as a handler, and a thread root dropped from the worst case).
  if (size < 16) return std::nullopt;
  for (size_t i = 2; i < 16; ++i)
    if (i != 7 && words[i] != 0 && !handler(words[i])) return std::nullopt;
  VectorTable table{words[1] & ~uint32_t{1}, {}};
  for (size_t i = 2; i < size; ++i) {
    if (handler(words[i])) {
      if ((words[i] & ~uint32_t{1}) != table.reset) table.handlers.insert(words[i] & ~uint32_t{1});
    } else if (words[i] != 0 && i >= 16) {
      break;  // past the table: code after it at the start of .text
    }
  }
  return table;
}

}  // namespace edgemem
