#include "static/elf_symbolizer.h"

#include <elfutils/libdwfl.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "static/dwarf_cu_index.h"
#include "static/elf_image.h"

namespace edgemem {

struct ElfSymbolizer::Impl {
  Dwfl* dwfl = nullptr;
  std::map<Dwfl_Module*, DwarfCuIndex> units;
  ~Impl() {
    if (dwfl) dwfl_end(dwfl);
  }
};

ElfSymbolizer::ElfSymbolizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ElfSymbolizer::~ElfSymbolizer() = default;

std::unique_ptr<ElfSymbolizer> ElfSymbolizer::open(const std::string& path, std::string& error) {
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {
      dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, dwfl_offline_section_address, &debuginfo_path};
  // libdwfl says "no error" of a file it could not open: ask the file system first.
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    error = "no such file";
    return nullptr;
  }
  if (std::filesystem::is_directory(path, ec)) {
    error = "a directory, not an ELF file";
    return nullptr;
  }
  // libdwfl takes an ELF cut short (its header alone) and names nothing:
  // the same check `map --elf` makes, with its reason.
  std::string cut;
  if (!read_elf_image(path, cut)) {
    const std::string prefix = path + ": ";
    error = cut.starts_with(prefix) ? cut.substr(prefix.size()) : cut;
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->dwfl = dwfl_begin(&callbacks);
  if (!impl->dwfl || !dwfl_report_offline(impl->dwfl, "firmware", path.c_str(), -1)) {
    const int err = dwfl_errno();
    error = err ? dwfl_errmsg(err) : "not an ELF file";
    return nullptr;
  }
  dwfl_report_end(impl->dwfl, nullptr, nullptr);
  return std::unique_ptr<ElfSymbolizer>(new ElfSymbolizer(std::move(impl)));
}

std::optional<std::string> ElfSymbolizer::describe_return_address(uint64_t address) const {
  Dwarf_Addr pc = (address & ~uint64_t{1}) - 1;
  Dwfl_Module* module = dwfl_addrmodule(impl_->dwfl, pc);
  if (!module) return std::nullopt;
  const char* function = dwfl_module_addrname(module, pc);
  int lineno = 0;
  const char* file = nullptr;
  impl_->units.try_emplace(module, module).first->second.line(pc, file, lineno);
  if (!function && !file) return std::nullopt;
  if (!file) return std::string(function);
  // DWARF holds the build machine's absolute path; the file name is what
  // the __FILE__ sites show too.
  std::string_view name(file);
  if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  std::string where = fmt::format("{}:{}", name, lineno);
  return function ? fmt::format("{} ({})", function, where) : where;
}

size_t ElfSymbolizer::symbolize(SiteTable& sites) const {
  size_t resolved = 0;
  for (SiteId id = 1; id < sites.size(); ++id) {
    std::string_view name = sites.name(id);
    if (!name.starts_with("0x")) continue;
    uint64_t address = 0;
    auto [end, ec] = std::from_chars(name.data() + 2, name.data() + name.size(), address, 16);
    if (ec != std::errc() || end != name.data() + name.size()) continue;
    if (auto text = describe_return_address(address)) {
      sites.rename(id, *text);
      ++resolved;
    }
  }
  return resolved;
}

}  // namespace edgemem
