#include "edgemem/site_table.h"

namespace edgemem {

SiteTable::SiteTable() { names_.emplace_back("?"); }

SiteId SiteTable::intern(std::string_view text) {
  if (text.empty()) return kUnknownSite;
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  if (names_.size() >= kMaxSites) {
    ++dropped_;
    if (overflow_ == kUnknownSite) {  // the one name allowed past the cap
      overflow_ = static_cast<SiteId>(names_.size());
      names_.emplace_back(kOverflowName);
      ids_.emplace(names_.back(), overflow_);
    }
    return overflow_;
  }
  auto id = static_cast<SiteId>(names_.size());
  names_.emplace_back(text);
  ids_.emplace(names_.back(), id);
  return id;
}

std::optional<SiteId> SiteTable::find(std::string_view text) const {
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  return std::nullopt;
}

void SiteTable::rename(SiteId id, std::string_view text) {
  if (id == kUnknownSite || id >= names_.size()) return;
  ids_.erase(names_[id]);
  names_[id] = std::string(text);
  ids_.emplace(names_[id], id);
}

std::string_view SiteTable::name(SiteId id) const {
  return id < names_.size() ? std::string_view(names_[id]) : std::string_view("?");
}

}  // namespace edgemem
