#include "static/symbol_index.h"

#include <algorithm>

namespace edgemem {

namespace {
// Overlapping symbols are rare (aliases share a start, not a range); past
// this many candidates the answer is left to libdwfl.
constexpr size_t kMaxBacktrack = 64;
}  // namespace

SymbolIndex::SymbolIndex(Dwfl_Module* module) {
  const int count = dwfl_module_getsymtab(module);
  const int first_global = dwfl_module_getsymtab_first_global(module);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr value = 0;
    GElf_Word shndx = 0;
    const char* name = dwfl_module_getsym_info(module, i, &sym, &value, &shndx, nullptr, nullptr);
    // The symbols libdwfl considers at all: named, defined, not a section,
    // file or TLS symbol.
    if (!name || !name[0] || sym.st_shndx == SHN_UNDEF) continue;
    const int type = GELF_ST_TYPE(sym.st_info);
    if (type == STT_SECTION || type == STT_FILE || type == STT_TLS) continue;
    // Symbols of sections not loaded (libc's link warnings) hold no code and
    // overlap each other at 0: those few addresses are left to libdwfl.
    if (shndx == static_cast<GElf_Word>(-1)) {
      unloaded_end_ = std::max(unloaded_end_, value + sym.st_size + 1);
      continue;
    }
    const bool global = first_global < 0 || i >= first_global;
    const int bind = GELF_ST_BIND(sym.st_info);
    const int binding = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : bind == STB_LOCAL ? 1 : 0;
    if (sym.st_size)
      sized_.push_back({value, value + sym.st_size, name, global, binding});
    else if (global)
      sizeless_global_.push_back(value);
  }
  std::stable_sort(sized_.begin(), sized_.end(), [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
  std::sort(sizeless_global_.begin(), sizeless_global_.end());
  reach_.reserve(sized_.size());
  uint64_t reach = 0;
  for (const Symbol& s : sized_) reach_.push_back(reach = std::max(reach, s.end));
}

const char* SymbolIndex::find(uint64_t address) const {
  if (address < unloaded_end_) return nullptr;
  auto after = std::upper_bound(sized_.begin(), sized_.end(), address,
                                [](uint64_t a, const Symbol& s) { return a < s.start; });
  const Symbol* holder = nullptr;
  size_t i = static_cast<size_t>(after - sized_.begin());
  for (size_t seen = 0; i > 0 && reach_[i - 1] > address; --i) {
    if (++seen > kMaxBacktrack) return nullptr;
    const Symbol& s = sized_[i - 1];
    if (address >= s.end) continue;
    if (!holder) {
      holder = &s;
      continue;
    }
    // Aliases (one range): libdwfl keeps a global over a local one, then
    // the higher binding, then the first in the table (scanned backwards
    // here, so a tie moves to the earlier). Nested or differently sized
    // symbols: its rules decide.
    if (s.start != holder->start || s.end != holder->end) return nullptr;
    if (std::pair(s.global, s.binding) >= std::pair(holder->global, holder->binding)) holder = &s;
  }
  if (!holder) return nullptr;
  // libdwfl searches the global symbols first and the locals only when no
  // global one matched: a global symbol without size exactly at the
  // address would keep it from the local one.
  if (!holder->global && std::binary_search(sizeless_global_.begin(), sizeless_global_.end(), address)) return nullptr;
  return holder->name;
}

}  // namespace edgemem
