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
  words[15] = 0x101;  // the reset handler in another entry stays no handler
  words[18] = 0x301;  // past the code after the table: not read
  EXPECT_EQ(read_vector_table(vector_image(words))->handlers, (std::set<uint64_t>{0x200}));
}

// A table shorter than the 16 system entries, followed by code: the code's
// literal pool holds a function's address with the Thumb bit, which read as
// a handler (a thread root dropped from the worst case: 724 B for 936 B).
TEST(VectorTable, AShortTableFollowedByCodeTellsNothing) {
  std::vector<uint32_t> words(20, 0x4770b510);  // code
  words[0] = 0x20004000;
  words[1] = 0x101;
  words[2] = 0x201;
  words[3] = 0x301;  // a literal: &task + 1
  EXPECT_FALSE(read_vector_table(vector_image(words)));
  // Keil's __Vectors_Size bounds it: 8 bytes, the stack pointer and reset.
  std::vector<uint32_t> keil(20, 0);
  keil[0] = 0x20004000;
  keil[1] = 0x101;
  keil[5] = 0x301;  // __main's literal for main + 1
  ElfImage elf = vector_image(keil);
  EXPECT_TRUE(read_vector_table(elf));
  elf.symbols.push_back({"__Vectors_Size", 8, 0, 'A', ""});
  EXPECT_FALSE(read_vector_table(elf));
}

TEST(VectorTable, WordsThatAreNoTableAreNone) {
  EXPECT_FALSE(read_vector_table(vector_image({})));
  EXPECT_FALSE(read_vector_table(vector_image({0, 0x101})));            // no stack pointer
  EXPECT_FALSE(read_vector_table(vector_image({0x20004000, 0x100})));  // no Thumb bit
  EXPECT_FALSE(read_vector_table(vector_image({0x20004000, 0x181})));  // no function there
}

}  // namespace
}  // namespace edgemem
