// The test data reader: a missing file fails the test that reads it, naming
// the path, instead of reading as empty input that some tests would accept.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"

namespace edgemem::test {
namespace {

TEST(TestData, AMissingFileThrowsNamingItsPath) {
  std::string path = corpus("map/no_such_file.map");
  try {
    read_file(path);
    ADD_FAILURE() << "read_file returned for a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(TestData, ADirectoryIsNotReadAsEmpty) {
  EXPECT_THROW(read_file(corpus("map")), std::runtime_error);
}

TEST(TestData, TheVendoredCorpusIsInTheRepository) {
  std::filesystem::path dir = corpus("");
  EXPECT_TRUE(std::filesystem::is_directory(dir)) << dir;
  EXPECT_EQ(std::filesystem::path(EDGEMEM_TEST_DATA_DIR).parent_path(),
            std::filesystem::path(EDGEMEM_SOURCE_DIR) / "tests");
  EXPECT_EQ(read_file(corpus("map/own_cm4_O2.map")).size(), 9310u);
}

}  // namespace
}  // namespace edgemem::test
