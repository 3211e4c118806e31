// Call sites interned once, so an event carries a 32-bit index, not a string.
// The table is bounded: a damaged or chatty trace can name millions of
// distinct "sites", and memory must not grow with trace length.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "edgemem/event.h"

namespace edgemem {

class SiteTable {
 public:
  // Real firmware has a few thousand allocation sites; past this many, new
  // names share one overflow site "(other sites)" and are counted as dropped.
  static constexpr size_t kMaxSites = 1 << 16;
  static constexpr std::string_view kOverflowName = "(other sites)";

  SiteTable();
  SiteId intern(std::string_view text);
  // The id of a name already interned, without interning it.
  std::optional<SiteId> find(std::string_view text) const;
  std::string_view name(SiteId id) const;  // "?" for kUnknownSite
  // Gives a site a better name (a symbolised address); ids stay valid.
  void rename(SiteId id, std::string_view text);
  size_t size() const { return names_.size(); }
  // intern() calls that got the overflow site because the table was full.
  uint64_t dropped() const { return dropped_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_;
  std::unordered_map<std::string, SiteId, Hash, std::equal_to<>> ids_;
  uint64_t dropped_ = 0;
  SiteId overflow_ = kUnknownSite;  // "(other sites)" once the table is full
};

}  // namespace edgemem
