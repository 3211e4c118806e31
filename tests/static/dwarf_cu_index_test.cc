// clang writes no .debug_aranges unless asked (-gdwarf-aranges), and libdw
// finds a compile unit only through them: every frame of a clang-built
// program lost its file:line. Both symbolizers must name it as binutils'
// addr2line (which reads the units' own ranges) does.
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "static/elf_symbolizer.h"
#include "static/process_symbolizer.h"
#include "test_support.h"

namespace edgemem {
namespace {

namespace fs = std::filesystem;

std::string output_of(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

// "function (file:line)" as binutils' addr2line names `pc`.
std::string addr2line(const fs::path& program, uint64_t pc) {
  std::string out = output_of(fmt::format("addr2line -f -e {} 0x{:x}", program.string(), pc));
  std::string function = out.substr(0, out.find('\n'));
  std::string where = out.substr(out.find('\n') + 1);
  where = where.substr(0, where.find_first_of(" \n"));
  return fmt::format("{} ({})", function, where.substr(where.rfind('/') + 1));
}

TEST(DwarfUnits, AClangBuildWithoutArangesIsNamedWithFileAndLine) {
  fs::path dir = fs::temp_directory_path() / fmt::format("edgemem-dwarf-units-{}", getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "prog.c") << "#include <stdlib.h>\n"
                                   "__attribute__((noinline)) void *leaf(int n) {\n"
                                   "  return malloc((size_t)n * 3);\n"
                                   "}\n"
                                   "int main(int c, char **v) { (void)v; free(leaf(c)); return 0; }\n";
  const fs::path program = dir / "prog";
  ASSERT_EQ(std::system(fmt::format("clang -g -O1 -fno-pie -no-pie -o {} {}", program.string(), (dir / "prog.c").string()).c_str()), 0)
      << "clang is needed (scripts/setup.sh installs it)";
  EXPECT_EQ(test::read_file(program.string()).find(".debug_aranges"), std::string::npos)
      << "clang wrote .debug_aranges: this test no longer covers the case";

  std::string nm = output_of(fmt::format("nm {}", program.string()));
  size_t at = nm.find(" T leaf\n");
  ASSERT_NE(at, std::string::npos) << nm;
  const uint64_t leaf = std::stoull(nm.substr(nm.rfind('\n', at) + 1, at - nm.rfind('\n', at) - 1), nullptr, 16);

  // libdw alone: no unit for the address.
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                           dwfl_offline_section_address, &debuginfo_path};
  Dwfl* dwfl = dwfl_begin(&callbacks);
  Dwfl_Module* module = dwfl_report_elf(dwfl, "prog", program.c_str(), -1, 0, false);
  dwfl_report_end(dwfl, nullptr, nullptr);
  Dwarf_Addr bias = 0;
  EXPECT_EQ(dwfl_module_addrdie(module, leaf + 1, &bias), nullptr);
  dwfl_end(dwfl);

  // A return address one past each of leaf's first bytes: the call is the
  // byte before. A fixed-address executable, as firmware is.
  ProcessSymbolizer process;
  std::string error;
  auto firmware = ElfSymbolizer::open(program.string(), error);
  ASSERT_TRUE(firmware) << error;
  for (uint64_t pc = leaf; pc < leaf + 8; ++pc) {
    const std::string truth = addr2line(program, pc);
    ASSERT_TRUE(truth.starts_with("leaf (prog.c:")) << truth;
    std::vector<std::string> frames = process.frames(program.string(), {}, 0, pc + 1);
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames.back(), truth) << fmt::format("pc 0x{:x}", pc);
    // The firmware symbolizer reads bit 0 of an address as ARM's Thumb bit.
    if ((pc + 1) % 2 == 0) {
      EXPECT_EQ(firmware->describe_return_address(pc + 1).value_or(""), truth) << fmt::format("pc 0x{:x}", pc);
    }
  }
  fs::remove_all(dir);
}

// The frames binutils' addr2line gives `pc` with its inlined calls,
// outermost first: "function (file:line)" each.
std::vector<std::string> addr2line_inlined(const fs::path& program, uint64_t pc) {
  std::string out = output_of(fmt::format("addr2line -f -C -i -e {} 0x{:x}", program.string(), pc));
  std::vector<std::string> lines, frames;
  for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) lines.push_back(out.substr(at, end - at));
  for (size_t i = 0; i + 1 < lines.size(); i += 2) {
    std::string where = lines[i + 1].substr(0, lines[i + 1].find(' '));
    frames.insert(frames.begin(), fmt::format("{} ({})", lines[i], where.substr(where.rfind('/') + 1)));
  }
  return frames;
}

// clang nests a C++ function's definition inside its namespace's DIE, where
// libdw 0.188's scope search does not look: the function and the calls
// inlined into it are found by walking the unit.
TEST(DwarfUnits, AClangBuiltFunctionInANamespaceIsNamedWithItsInlinedCalls) {
  fs::path dir = fs::temp_directory_path() / fmt::format("edgemem-dwarf-scopes-{}", getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "prog.cc")
      << "#include <cstdlib>\n"
         "namespace {\n"
         "__attribute__((always_inline)) inline void *inner(int n) { return std::malloc(static_cast<size_t>(n) * 3); }\n"
         "__attribute__((noinline)) void *outer(int n) { return inner(n + 1); }\n"
         "}  // namespace\n"
         "int main(int c, char **) { std::free(outer(c)); return 0; }\n";
  const fs::path program = dir / "prog";
  ASSERT_EQ(std::system(fmt::format("clang++ -g -O1 -o {} {}", program.string(), (dir / "prog.cc").string()).c_str()), 0);
  std::string nm = output_of(fmt::format("nm -C {}", program.string()));
  size_t at = nm.find(" t (anonymous namespace)::outer(int)\n");
  ASSERT_NE(at, std::string::npos) << nm;
  const uint64_t outer = std::stoull(nm.substr(nm.rfind('\n', at) + 1, at - nm.rfind('\n', at) - 1), nullptr, 16);

  ProcessSymbolizer process;
  size_t inlined = 0;
  for (uint64_t pc = outer; pc < outer + 12; ++pc) {
    const std::vector<std::string> truth = addr2line_inlined(program, pc);
    ASSERT_FALSE(truth.empty());
    EXPECT_EQ(process.frames(program.string(), {}, 0, pc + 1), truth) << fmt::format("pc 0x{:x}", pc);
    inlined += truth.size() == 2;
  }
  EXPECT_GT(inlined, 0u) << "no address of outer holds the inlined call: the test no longer covers it";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace edgemem
