// Names typed in any case match; a typo is answered with the name meant.
#include <gtest/gtest.h>

#include "report/names.h"

namespace edgemem::names {
namespace {

const std::vector<std::string> kCommands = {"analyze", "demo", "plan", "map", "stack", "fit", "check", "diff"};
const std::vector<std::string> kMcus = {"STM32F103C8", "STM32F746NG", "nRF52840", "ESP32-S3", "RP2040"};

TEST(Names, AnyCaseMatchesAndKeepsTheListedSpelling) {
  EXPECT_EQ(match("nrf52840", kMcus), "nRF52840");
  EXPECT_EQ(match("ANALYZE", kCommands), "analyze");
  EXPECT_FALSE(match("nrf5284", kMcus));
}

TEST(Names, TyposGetTheNameMeant) {
  EXPECT_EQ(nearest("anaylze", kCommands), "analyze");  // two letters swapped
  EXPECT_EQ(nearest("analyse", kCommands), "analyze");  // British spelling
  EXPECT_EQ(nearest("chekc", kCommands), "check");
  EXPECT_EQ(nearest("nrf52480", kMcus), "nRF52840");
  EXPECT_EQ(nearest("stm32f746", kMcus), "STM32F746NG");  // a prefix
  EXPECT_EQ(nearest("regons", {"regions", "sections", "symbols"}), "regions");
}

TEST(Names, FarFetchedGuessesAreNotMade) {
  EXPECT_EQ(nearest("z80", kMcus), "");
  EXPECT_EQ(nearest("xml", {"auto", "log", "seedbin", "itm", "tpiu", "emt"}), "");
  EXPECT_EQ(unknown("--format", "xml", {"auto", "log", "emt"}), "unknown --format 'xml' (expected auto, log or emt)");
  EXPECT_EQ(unknown("command", "anaylze", {"analyze", "plan"}),
            "unknown command 'anaylze' (did you mean analyze? expected analyze or plan)");
}

}  // namespace
}  // namespace edgemem::names
