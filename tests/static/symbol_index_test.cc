// The sorted symbol index must name every address exactly as libdwfl's own
// scan does, or leave it to libdwfl: checked on real ELF files others
// built (Debian's libc and libstdc++, with many aliases and only .dynsym;
// this test binary, with a full .symtab of C++ symbols), at each symbol's
// first, middle and last byte and the byte after it.
#include <elfutils/libdwfl.h>
#include <link.h>

#include <algorithm>
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "static/symbol_index.h"

namespace edgemem {
namespace {

std::string loaded_path(const char* needle) {
  std::pair<const char*, std::string> found{needle, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* out = static_cast<std::pair<const char*, std::string>*>(data);
        if (out->second.empty() && std::string(info->dlpi_name).find(out->first) != std::string::npos)
          out->second = info->dlpi_name;
        return 0;
      },
      &found);
  return found.second;
}

struct Agreement {
  size_t asked = 0, answered = 0, disagreed = 0;
  std::string first_disagreement;
};

Agreement compare(const std::string& path) {
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                           dwfl_offline_section_address, &debuginfo_path};
  Dwfl* dwfl = dwfl_begin(&callbacks);
  Dwfl_Module* module = dwfl_report_elf(dwfl, "m", path.c_str(), -1, 0, false);
  dwfl_report_end(dwfl, nullptr, nullptr);
  Agreement a;
  if (!module) {
    dwfl_end(dwfl);
    return a;
  }
  SymbolIndex index(module);
  const int count = dwfl_module_getsymtab(module);
  const int stride = std::max(1, count / 1500);  // libdwfl scans every symbol per address: sample
  for (int i = 1; i < count; i += stride) {
    GElf_Sym sym;
    GElf_Addr value = 0;
    if (!dwfl_module_getsym_info(module, i, &sym, &value, nullptr, nullptr, nullptr) || !sym.st_size) continue;
    for (uint64_t address : {value, value + sym.st_size / 2, value + sym.st_size - 1, value + sym.st_size}) {
      ++a.asked;
      const char* ours = index.find(address);
      if (!ours) continue;
      ++a.answered;
      const char* theirs = dwfl_module_addrname(module, address);
      if (!theirs || std::string(theirs) != ours) {
        if (a.disagreed++ < 12)
          a.first_disagreement += "\n0x" + std::to_string(address) + ": index " + ours + ", libdwfl " + (theirs ? theirs : "(none)");
      }
    }
  }
  dwfl_end(dwfl);
  return a;
}

void expect_agreement(const std::string& path) {
  ASSERT_FALSE(path.empty());
  Agreement a = compare(path);
  EXPECT_EQ(a.disagreed, 0u) << path << ": " << a.first_disagreement;
  EXPECT_GT(a.asked, 1000u) << path;
  // Most addresses are answered by the index itself, or it gains nothing.
  EXPECT_GT(a.answered * 10, a.asked * 7) << path << ": " << a.answered << " of " << a.asked;
}

TEST(SymbolIndex, NamesLibcAddressesAsLibdwflDoes) { expect_agreement(loaded_path("libc.so")); }
TEST(SymbolIndex, NamesLibstdcxxAddressesAsLibdwflDoes) { expect_agreement(loaded_path("libstdc++.so")); }
TEST(SymbolIndex, NamesThisTestBinarysAddressesAsLibdwflDoes) { expect_agreement("/proc/self/exe"); }

}  // namespace
}  // namespace edgemem
