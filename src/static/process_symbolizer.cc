#include "static/process_symbolizer.h"

#include "static/demangle.h"
#include "static/dwarf_cu_index.h"
#include "static/symbol_index.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace edgemem {
namespace {

constexpr size_t kMaxChangedModules = 16;

std::string base_name(std::string_view path) {
  if (auto slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  return std::string(path);
}

// The function a DIE (subprogram or inlined subroutine) stands for: its
// linkage name demangled when it has one (C++), else its name.
std::string die_function(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) || dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
    if (const char* s = dwarf_formstring(&attr)) return demangle(s);
  if (const char* s = dwarf_diename(die)) return s;
  if (dwarf_attr_integrate(die, DW_AT_name, &attr))
    if (const char* s = dwarf_formstring(&attr)) return s;
  return "?";
}

// The DIEs holding `pc`, from the function down to the innermost inlined
// call, by walking the unit. dwarf_getscopes (libdw 0.188) does not look
// inside namespaces, where clang puts a C++ function's definition (GCC puts
// it at the unit's top level, pointing at its declaration).
bool find_path(Dwarf_Die* parent, Dwarf_Addr pc, std::vector<Dwarf_Die>& path) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return false;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
        if (find_path(&child, pc, path)) return true;
        break;
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine:
      case DW_TAG_lexical_block:
        if (dwarf_haspc(&child, pc) > 0) {
          path.push_back(child);
          find_path(&child, pc, path);
          return true;
        }
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

std::string frame(const std::string& function, const std::string& file, int line) {
  if (file.empty()) return function;
  return fmt::format("{} ({}:{})", function, file, line);
}

}  // namespace

struct ProcessSymbolizer::Module {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  std::string name;
  std::unique_ptr<SymbolIndex> symbols;  // built on the first address without DWARF
  std::unique_ptr<DwarfCuIndex> units;
  ~Module() {
    if (dwfl) dwfl_end(dwfl);
  }
};

ProcessSymbolizer::ProcessSymbolizer() = default;
ProcessSymbolizer::~ProcessSymbolizer() = default;

ProcessSymbolizer::Module* ProcessSymbolizer::module(const std::string& path, const std::string& build_id) {
  auto it = modules_.find({path, build_id});
  if (it != modules_.end()) return it->second.get();
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {
      dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, dwfl_offline_section_address, &debuginfo_path};
  auto m = std::make_unique<Module>();
  m->name = base_name(path);
  m->dwfl = dwfl_begin(&callbacks);
  // Reported at bias 0: addresses asked are the module's own (file) addresses.
  if (m->dwfl) m->module = dwfl_report_elf(m->dwfl, m->name.c_str(), path.c_str(), -1, 0, false);
  if (m->dwfl) dwfl_report_end(m->dwfl, nullptr, nullptr);
  if (m->module && !build_id.empty()) {
    // Rebuilt or upgraded since the recording: its symbols would name the
    // wrong functions and lines.
    const unsigned char* bits = nullptr;
    GElf_Addr at = 0;
    int n = dwfl_module_build_id(m->module, &bits, &at);
    if (n <= 0 || std::string_view(reinterpret_cast<const char*>(bits), static_cast<size_t>(n)) != build_id) {
      m->module = nullptr;
      if (changed_.size() < kMaxChangedModules && std::find(changed_.begin(), changed_.end(), path) == changed_.end())
        changed_.push_back(path);
    }
  }
  if (m->module) m->units = std::make_unique<DwarfCuIndex>(m->module);
  return modules_.emplace(std::pair{path, build_id}, std::move(m)).first->second.get();
}

std::vector<std::string> ProcessSymbolizer::frames(const std::string& module_path, const std::string& build_id,
                                                   uint64_t bias, uint64_t return_address) {
  // The call is the instruction before the return address.
  uint64_t pc = return_address - 1 - bias;
  if (module_path.empty()) return {fmt::format("0x{:x}", return_address)};
  Module* m = module(module_path, build_id);
  if (!m->module) return {fmt::format("{}+0x{:x}", m->name, pc)};

  std::vector<std::string> inner_first;
  int lineno = 0;
  const char* src = nullptr;
  std::string file = m->units->line(pc, src, lineno) ? base_name(src) : std::string();

  Dwarf_Addr cu_bias = 0;
  Dwarf_Die* cu = m->units->unit(pc, cu_bias);
  Dwarf_Die* scopes = nullptr;
  int n = cu ? dwarf_getscopes(cu, pc - cu_bias, &scopes) : 0;
  std::vector<Dwarf_Die> chain;  // innermost first
  if (n > 0) {
    // dwarf_getscopes continues from an inlined instance into its abstract
    // definition's scopes; the concrete chain (inlined instance, the
    // function it was inlined into, ...) is the scopes of the innermost DIE.
    Dwarf_Die innermost = scopes[0];
    std::free(scopes);
    scopes = nullptr;
    n = dwarf_getscopes_die(&innermost, &scopes);
    chain.assign(scopes, scopes + std::max(n, 0));
    std::free(scopes);
  } else {
    std::free(scopes);
    if (cu && find_path(cu, pc - cu_bias, chain)) std::reverse(chain.begin(), chain.end());
  }
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (cu) dwarf_getsrcfiles(cu, &files, &file_count);
  // Innermost scope first: each inlined subroutine is a frame at the current
  // location; its call site is the location in the function around it.
  for (Dwarf_Die& scope : chain) {
    Dwarf_Die* die = &scope;
    int tag = dwarf_tag(die);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
    inner_first.push_back(frame(die_function(die), file, lineno));
    if (tag == DW_TAG_subprogram) break;
    Dwarf_Attribute attr;
    Dwarf_Word call_file = 0, call_line = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &call_file) == 0 && files) {
      const char* f = dwarf_filesrc(files, call_file, nullptr, nullptr);
      file = f ? base_name(f) : std::string();
    }
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &call_line) == 0) lineno = static_cast<int>(call_line);
  }
  if (inner_first.empty()) {
    // No DWARF for this address: the symbol table still names the function.
    if (!m->symbols) m->symbols = std::make_unique<SymbolIndex>(m->module);
    const char* symbol = m->symbols->find(pc);
    if (!symbol) symbol = dwfl_module_addrname(m->module, pc);
    if (symbol) inner_first.push_back(frame(demangle(symbol), file, lineno));
    else inner_first.push_back(fmt::format("{}+0x{:x}", m->name, pc));
  }
  return {inner_first.rbegin(), inner_first.rend()};
}

}  // namespace edgemem
