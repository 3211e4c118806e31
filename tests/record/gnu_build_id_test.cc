// The preload's note walk, on hand-made PT_NOTE segments: where a build ID
// lies depends on the segment's alignment, and a note that runs past the
// segment must stop the walk, not be read.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "preload/gnu_build_id.h"

namespace edgemem::preload {
namespace {

void u32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// One note, its name and descriptor padded as a linker pads them for `align`.
void note(std::vector<uint8_t>& b, uint32_t type, const std::string& name, const std::vector<uint8_t>& desc, size_t align) {
  const size_t start = b.size();
  u32(b, static_cast<uint32_t>(name.size()));
  u32(b, static_cast<uint32_t>(desc.size()));
  u32(b, type);
  b.insert(b.end(), name.begin(), name.end());
  while ((b.size() - start) % align) b.push_back(0);
  b.insert(b.end(), desc.begin(), desc.end());
  while ((b.size() - start) % align) b.push_back(0);
}

const std::vector<uint8_t> kId{0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9,
                               0xB0, 0xB1, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9};

std::vector<uint8_t> found(const std::vector<uint8_t>& segment, uint64_t align) {
  size_t size = 0;
  const uint8_t* id = find_gnu_build_id(segment.data(), segment.size(), align, size);
  return id ? std::vector<uint8_t>(id, id + size) : std::vector<uint8_t>{};
}

TEST(GnuBuildId, FoundAfterOtherNotesInSegmentsAlignedTo4And8) {
  for (size_t align : {4, 8}) {
    std::vector<uint8_t> segment;
    // GNU property and ABI-tag notes first, as ld lays them out.
    note(segment, 5, std::string("GNU\0", 4), std::vector<uint8_t>(align == 8 ? 16 : 12, 0xEE), align);
    note(segment, 1, std::string("GNU\0", 4), {0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, align);
    note(segment, 3, std::string("GNU\0", 4), kId, align);
    EXPECT_EQ(found(segment, align), kId) << "align " << align;
  }
}

TEST(GnuBuildId, AnotherOwnersNoteOfTheSameTypeIsNotTheBuildId) {
  std::vector<uint8_t> segment;
  note(segment, 3, std::string("Go\0\0", 4), {1, 2, 3, 4}, 4);
  EXPECT_TRUE(found(segment, 4).empty());
  note(segment, 3, std::string("GNU\0", 4), kId, 4);
  EXPECT_EQ(found(segment, 4), kId);
}

TEST(GnuBuildId, NotesThatRunPastTheSegmentStopTheWalk) {
  std::vector<uint8_t> whole;
  note(whole, 3, std::string("GNU\0", 4), kId, 4);
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    std::vector<uint8_t> segment(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_TRUE(found(segment, 4).empty()) << "cut at " << cut;
  }
  // Sizes near 2^32 must not wrap the arithmetic into a read.
  for (uint32_t huge : {0xFFFFFFFFu, 0xFFFFFFF4u, 0x80000000u}) {
    std::vector<uint8_t> segment;
    u32(segment, huge);
    u32(segment, 20);
    u32(segment, 3);
    segment.resize(64, 0);
    EXPECT_TRUE(found(segment, 4).empty());
    segment.clear();
    u32(segment, 4);
    u32(segment, huge);
    u32(segment, 3);
    segment.insert(segment.end(), {'G', 'N', 'U', 0});
    segment.resize(64, 0);
    EXPECT_TRUE(found(segment, 8).empty());
  }
}

}  // namespace
}  // namespace edgemem::preload
