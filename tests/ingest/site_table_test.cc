// Sites added without a name (a recording's call stacks): named on first
// ask, once, by a namer the table keeps alive, and not held to the cap that
// bounds named sites.
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include <fmt/format.h>

#include "edgemem/site_table.h"

namespace edgemem {
namespace {

struct CountingNamer : SiteNamer {
  int calls = 0;
  std::string name(uint64_t key) override {
    ++calls;
    return fmt::format("main;stack {}", key);
  }
};

TEST(SiteTable, UnnamedSitesAreNamedOnlyWhenAskedAndOnlyOnce) {
  SiteTable table;
  auto namer = std::make_shared<CountingNamer>();
  SiteId a = table.intern_unnamed(namer, 7), b = table.intern_unnamed(namer, 8);
  EXPECT_NE(a, b);
  EXPECT_EQ(namer->calls, 0);
  EXPECT_FALSE(table.find("main;stack 8"));
  EXPECT_EQ(table.name(b), "main;stack 8");
  EXPECT_EQ(table.name(b), "main;stack 8");
  EXPECT_EQ(namer->calls, 1);
  EXPECT_FALSE(table.find("main;stack 8"));  // no second copy of a recorded stack's name for find()
  EXPECT_EQ(table.name(a), "main;stack 7");
  EXPECT_EQ(namer->calls, 2);
}

TEST(SiteTable, UnnamedSitesAreNotCappedAndKeepTheirNamerAlive) {
  SiteTable table;
  std::vector<SiteId> ids;
  {
    auto namer = std::make_shared<CountingNamer>();
    for (uint64_t key = 0; key < SiteTable::kMaxSites + 10; ++key) ids.push_back(table.intern_unnamed(namer, key));
  }
  EXPECT_EQ(table.dropped(), 0u);
  EXPECT_EQ(std::set<SiteId>(ids.begin(), ids.end()).size(), ids.size());
  EXPECT_EQ(table.name(ids.back()), fmt::format("main;stack {}", SiteTable::kMaxSites + 9));
}

TEST(SiteTable, RenamingAnUnnamedSiteKeepsTheNewName) {
  SiteTable table;
  auto namer = std::make_shared<CountingNamer>();
  SiteId a = table.intern_unnamed(namer, 1);
  table.rename(a, "model.c:58");
  EXPECT_EQ(table.name(a), "model.c:58");
  EXPECT_EQ(namer->calls, 0);
}

}  // namespace
}  // namespace edgemem
