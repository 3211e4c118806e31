// Call sites interned once, so an event carries a 32-bit index, not a string.
// The table is bounded: a damaged or chatty trace can name millions of
// distinct "sites", and memory must not grow with trace length.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "edgemem/event.h"

namespace edgemem {

// Builds the name of a site added without one, when it is first asked for:
// a recording has hundreds of thousands of distinct call stacks, and a
// report prints a few dozen of them.
class SiteNamer {
 public:
  virtual ~SiteNamer() = default;
  virtual std::string name(uint64_t key) = 0;
};

class SiteTable {
 public:
  // Real firmware has a few thousand allocation sites; past this many, new
  // names share one overflow site "(other sites)" and are counted as dropped.
  static constexpr size_t kMaxSites = 1 << 16;
  static constexpr std::string_view kOverflowName = "(other sites)";

  SiteTable();
  SiteId intern(std::string_view text);
  // The id of a name already interned, without interning it.
  // A site named later by `namer->name(key)`. Not capped: the caller
  // bounds how many it adds (a recording, by the call-stack trees it holds).
  // find() never finds such a site, named or not.
  SiteId intern_unnamed(std::shared_ptr<SiteNamer> namer, uint64_t key);
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
  struct Unnamed {
    SiteNamer* namer;
    uint64_t key;
  };
  // name() fills these on first call: naming is a cache, not a change.
  mutable std::vector<std::string> names_;
  mutable std::unordered_map<std::string, SiteId, Hash, std::equal_to<>> ids_;
  mutable std::unordered_map<SiteId, Unnamed> unnamed_;
  std::vector<std::shared_ptr<SiteNamer>> namers_;  // keeps each namer alive for unnamed_
  uint64_t dropped_ = 0;
  SiteId overflow_ = kUnknownSite;  // "(other sites)" once the table is full
};

}  // namespace edgemem
