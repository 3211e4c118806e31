// Call sites interned once, so an event carries a 32-bit index, not a string.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "edgemem/event.h"

namespace edgemem {

class SiteTable {
 public:
  SiteTable();
  SiteId intern(std::string_view text);
  std::string_view name(SiteId id) const;  // "?" for kUnknownSite
  // Gives a site a better name (a symbolised address); ids stay valid.
  void rename(SiteId id, std::string_view text);
  size_t size() const { return names_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_;
  std::unordered_map<std::string, SiteId, Hash, std::equal_to<>> ids_;
};

}  // namespace edgemem
