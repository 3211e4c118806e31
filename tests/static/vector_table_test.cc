// A Cortex-M vector table read from an image's first words.
#include <gtest/gtest.h>

#include "static/elf_image.h"
#include "static/vector_table.h"

namespace edgemem {
namespace {

ElfImage vector_image(std::vector<uint32_t> words) {
  ElfImage elf;
  for (uint64_t address : {0x100, 0x200, 0x300}) elf.symbols.push_back({"f", address, 4, 'T', ""});
  elf.vector_words = std::move(words);
  return elf;
}

TEST(VectorTable, HandlersAreTheFunctionsAfterTheResetVector) {
  std::vector<uint32_t> words(20, 0);
  words[0] = 0x20004000;
  words[1] = 0x101;
  words[7] = 0xefff5a2c;  // an LPC part's checksum: no end among the system entries
  words[14] = 0x201;
  words[15] = 0x301;
  words[16] = 0x201;
  words[17] = 0x4770b510;  // code after the table
  words[18] = 0x301;
  auto table = read_vector_table(vector_image(words));
  ASSERT_TRUE(table);
  EXPECT_EQ(table->reset, 0x100u);
  EXPECT_EQ(table->handlers, (std::set<uint64_t>{0x200, 0x300}));
  words[18] = 0x101;  // past the end: not read
  words[15] = 0x101;  // the reset handler in another entry stays no handler
  EXPECT_EQ(read_vector_table(vector_image(words))->handlers, (std::set<uint64_t>{0x200}));
}

TEST(VectorTable, WordsThatAreNoTableAreNone) {
  EXPECT_FALSE(read_vector_table(vector_image({})));
  EXPECT_FALSE(read_vector_table(vector_image({0, 0x101})));            // no stack pointer
  EXPECT_FALSE(read_vector_table(vector_image({0x20004000, 0x100})));  // no Thumb bit
  EXPECT_FALSE(read_vector_table(vector_image({0x20004000, 0x181})));  // no function there
}

}  // namespace
}  // namespace edgemem
