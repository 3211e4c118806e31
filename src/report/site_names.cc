#include "site_names.h"

namespace edgemem {

std::string_view innermost_frame(std::string_view site) {
  size_t cut = site.rfind(';');
  return cut == std::string_view::npos ? site : site.substr(cut + 1);
}

namespace {

// The tail of `site` with `frames` frames (all of it if it has no more).
std::string_view tail(std::string_view site, size_t frames) {
  size_t cut = site.size();
  for (size_t i = 0; i < frames; ++i) {
    if (cut == 0) return site;
    cut = site.rfind(';', cut - 1);
    if (cut == std::string_view::npos) return site;
  }
  return site.substr(cut + 1);
}

// A site ends with `t` as whole frames.
bool ends_with_frames(std::string_view site, std::string_view t) {
  return site.ends_with(t) && (site.size() == t.size() || site[site.size() - t.size() - 1] == ';');
}

}  // namespace

std::vector<std::string_view> distinct_tails(const std::vector<std::string_view>& sites) {
  std::vector<std::string_view> out;
  out.reserve(sites.size());
  for (size_t i = 0; i < sites.size(); ++i) {
    std::string_view t;
    for (size_t frames = 1;; ++frames) {
      t = tail(sites[i], frames);
      bool shared = false;
      for (size_t j = 0; j < sites.size() && !shared; ++j) shared = j != i && ends_with_frames(sites[j], t);
      if (!shared || t.size() == sites[i].size()) break;
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace edgemem
