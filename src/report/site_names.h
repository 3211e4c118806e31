// Short names for call sites in text output. A site is its frames joined by
// ';', outermost first; a list of sites is shown by their innermost frames,
// with as many callers as it takes to tell two rows apart.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace edgemem {

// The innermost frame of a site.
std::string_view innermost_frame(std::string_view site);

// A frame as a person reads it in a terminal: a C++ function without its
// parameter lists, template arguments and clone suffixes, its file:line
// kept ("std::vector<int>::push_back(int const&) [clone .isra.0] (a.cc:3)"
// -> "std::vector::push_back (a.cc:3)"). Other frames are left as they are.
std::string readable_frame(std::string_view frame);

// A site for one line of text: its innermost readable frames, as many as
// fit in `width` characters (at least one), led by "...;" when callers are
// left out. When only the runtime's frames would fit (std::vector's
// allocator, operator new), the program's innermost frame leads:
// "...;load_weights (a.cc:5);...;std::__new_allocator::allocate". The whole
// stack is in the JSON data and the exports.
std::string shown_site(std::string_view site, size_t width = 100);

// Sites for the rows of one list: as shown_site, wider for rows that would
// otherwise read the same.
std::vector<std::string> shown_sites(const std::vector<std::string_view>& sites, size_t width = 100);

// For each site, its shortest tail of whole frames (at least the innermost)
// that no other listed site ends with, or the whole site when none is.
std::vector<std::string_view> distinct_tails(const std::vector<std::string_view>& sites);

}  // namespace edgemem
