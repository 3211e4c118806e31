#include "edgemem/site_table.h"

#include "printable_name.h"

namespace edgemem {

SiteTable::SiteTable() { names_.emplace_back("?"); }

SiteId SiteTable::intern(std::string_view text) {
  if (text.empty()) return kUnknownSite;
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  if (!is_printable_name(text)) return intern(printable_name(text));
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

SiteId SiteTable::intern_unnamed(std::shared_ptr<SiteNamer> namer, uint64_t key) {
  if (namers_.empty() || namers_.back() != namer) namers_.push_back(namer);
  auto id = static_cast<SiteId>(names_.size());
  names_.emplace_back();
  unnamed_.emplace(id, Unnamed{namer.get(), key});
  return id;
}

std::optional<SiteId> SiteTable::find(std::string_view text) const {
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  return std::nullopt;
}

void SiteTable::rename(SiteId id, std::string_view text) {
  if (id == kUnknownSite || id >= names_.size()) return;
  unnamed_.erase(id);
  ids_.erase(names_[id]);
  names_[id] = printable_name(text);
  ids_.emplace(names_[id], id);
}

std::string_view SiteTable::name(SiteId id) const {
  if (auto it = unnamed_.find(id); it != unnamed_.end()) {
    // Not entered in ids_: nothing interns a recorded stack by its text, and
    // a second copy of every name of a large recording costs hundreds of MB.
    names_[id] = it->second.namer->name(it->second.key);
    if (!is_printable_name(names_[id])) names_[id] = printable_name(names_[id]);
    unnamed_.erase(it);
  }
  return id < names_.size() ? std::string_view(names_[id]) : std::string_view("?");
}

}  // namespace edgemem
