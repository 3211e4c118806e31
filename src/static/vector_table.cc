#include "static/vector_table.h"

#include "static/elf_image.h"

namespace edgemem {

std::optional<VectorTable> read_vector_table(const ElfImage& elf) {
  std::set<uint64_t> code;  // where the image's functions start
  for (const ElfSymbol& s : elf.symbols)
    if (s.type == 'T' || s.type == 't' || s.type == 'W') code.insert(s.address);
  auto handler = [&](uint32_t word) { return (word & 1) && code.contains(word & ~uint32_t{1}); };
  const std::vector<uint32_t>& words = elf.vector_words;
  if (words.size() < 2 || words[0] == 0 || (words[0] & 3) || !handler(words[1])) return std::nullopt;
  VectorTable table{words[1] & ~uint32_t{1}, {}};
  for (size_t i = 2; i < words.size(); ++i) {
    if (handler(words[i])) {
      if ((words[i] & ~uint32_t{1}) != table.reset) table.handlers.insert(words[i] & ~uint32_t{1});
    } else if (words[i] != 0 && i >= 16) {
      // Past the table (code after it at the start of .text). Among the 16
      // system entries another word is no end: NXP's LPC parts keep a
      // checksum in entry 7.
      break;
    }
  }
  return table;
}

}  // namespace edgemem
