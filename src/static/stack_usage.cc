#include "static/stack_usage.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "session/whole_input.h"
#include "static/deepest_chains.h"
#include "static/demangle.h"
#include "static/elf_image.h"
#include "static/function_lines.h"
#include "static/vector_table.h"

namespace edgemem {
namespace {

namespace fs = std::filesystem;

using Node = CallNode;

// A title as a person reads it: a static's "dir/x.c.ci|x.c:name" key is
// its unit's, and a callee GCC names by its assembler name is demangled.
std::string shown_title(std::string_view title) {
  if (const size_t bar = title.find('|'); bar != std::string_view::npos) title.remove_prefix(bar + 1);
  std::string_view unit;
  if (const size_t colon = title.find(':'); colon != std::string_view::npos && title.substr(0, colon).find('.') != std::string_view::npos) {
    unit = title.substr(0, colon);
    title.remove_prefix(colon + 1);
  }
  const std::string name = title.starts_with("_Z") ? demangle(std::string(title)) : std::string(title);
  return unit.empty() ? name : fmt::format("{} ({})", name, unit);
}

// GCC writes "static", "dynamic" or "dynamic,bounded", each maybe followed
// by ",ignoring_inline_asm".
bool gcc_qualifier(std::string_view q) {
  if (q.ends_with(",ignoring_inline_asm")) q.remove_suffix(std::string_view(",ignoring_inline_asm").size());
  return q == "static" || q == "dynamic" || q == "dynamic,bounded";
}

// GCC's "path:line:col:name", where the path may hold ':' (Windows) and the
// name too (C++): the location is the first ":digits:digits:". Clang writes
// "path:line:name" (no column; a name never starts with a digit): `clang`
// is set when only that form fits.
bool split_location(std::string_view s, std::string& location, std::string& name, bool& clang) {
  auto digits_after = [&](size_t colon) {
    size_t j = colon + 1;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    return j == colon + 1 || j >= s.size() || s[j] != ':' ? std::string_view::npos : j;  // the colon after them
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != ':') continue;
    const size_t j = digits_after(i), k = j == std::string_view::npos ? j : digits_after(j);
    if (k == std::string_view::npos) continue;
    location = std::string(s.substr(0, k));
    name = std::string(s.substr(k + 1));
    clang = false;
    return true;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != ':') continue;
    const size_t j = digits_after(i);
    if (j == std::string_view::npos || j + 1 >= s.size()) continue;
    location = std::string(s.substr(0, j));
    name = std::string(s.substr(j + 1));
    clang = true;
    return true;
  }
  return false;
}

// A .su location's source file: "b.c:2:12" (GCC) or "b.c:2" (Clang) without
// its line and column.
std::string source_file(std::string_view location) {
  for (int i = 0; i < 2; ++i) {
    const size_t colon = location.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == location.size() ||
        !std::all_of(location.begin() + static_cast<std::ptrdiff_t>(colon) + 1, location.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      break;
    location = location.substr(0, colon);
  }
  return std::string(location);
}

// The refusal of a frame no stack could hold (kMaxStackBytes), in .su and .ci alike.
std::string frame_too_large(const fs::path& p, size_t line, std::string_view bytes, std::string_view function) {
  return fmt::format("{}: line {}: a frame of {} bytes for {}: expected less than 4 GiB (the file is damaged)", p.string(),
                     line, bytes, function);
}

// Empty when it cannot be read. A file that is no text (/dev/zero) is read
// no further than its first bytes, which the parsers then refuse.
std::string read(const fs::path& p) {
  auto in = read_whole_input(p.string(), text_input("a stack usage file"));
  return in ? std::move(in->bytes) : std::string();
}

// Value of `key: "..."` in a VCG line.
std::optional<std::string> vcg_field(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  size_t open = line.find('"', at + key.size());
  if (open == std::string_view::npos) return std::nullopt;
  std::string out;
  for (size_t i = open + 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      out += line[i + 1] == 'n' ? '\n' : line[i + 1];
      ++i;
    } else if (line[i] == '"') {
      return out;
    } else {
      out += line[i];
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_interrupt(const std::string& full_name) {
  const std::string_view name = bare_function_name(full_name);
  // CMSIS names, FreeRTOS ports' own (its GCC demos put them in the vector
  // table), the Pico SDK's isr_* and TivaWare's *IntHandler.
  return name != "Reset_Handler" &&
         (name.ends_with("_Handler") || name.ends_with("IRQHandler") || name.ends_with("IntHandler") ||
          name.starts_with("isr_") || name == "vPortSVCHandler" || name == "xPortPendSVHandler" ||
          name == "xPortSysTickHandler");
}

std::string_view bare_function_name(std::string_view name) {
  name = name.substr(0, name.find('('));
  if (const size_t space = name.rfind(' '); space != std::string_view::npos) name.remove_prefix(space + 1);
  if (const size_t scope = name.rfind("::"); scope != std::string_view::npos) name.remove_prefix(scope + 2);
  return name;
}

// g++ at -O0 calls a constructor or destructor by its complete-object
// symbol (C1, D1), an alias of the base-object one (C2, D2) that has the
// node and frame: called by its own name, it read "no stack info" and made
// its caller unbounded. The alias's title is rewritten in place (templates
// and anonymous namespaces demangle to names no label spells the same).
void resolve_constructor_aliases(std::map<std::string, Node>& nodes) {
  auto framed = [&](const std::string& title) {
    auto it = nodes.find(title);
    return it != nodes.end() && it->second.has_frame;
  };
  for (auto& entry : nodes)
    for (std::string& c : entry.second.callees) {
      if (framed(c) || c.find("_Z") == std::string::npos) continue;
      for (auto [alias, base] : {std::pair{"C1E", "C2E"}, {"D1E", "D2E"}, {"C1I", "C2I"}}) {
        const size_t at = c.rfind(alias);
        if (at == std::string::npos) continue;
        std::string candidate = c;
        candidate.replace(at, 3, base);
        if (framed(candidate)) {
          c = candidate;
          break;
        }
      }
    }
}

// The title of a definition a file gives itself, ".ci path|unit:symbol"
// (a static's or a weak one's): its unit and its symbol, the name after the
// unit as the linker binds it (no symbol, mangled or not, holds a ':').
struct OwnTitle {
  std::string_view unit, symbol;
};
std::optional<OwnTitle> own_title(std::string_view title) {
  const size_t bar = title.find('|'), colon = title.rfind(':');
  if (bar == std::string_view::npos || colon == std::string_view::npos || colon < bar) return std::nullopt;
  return OwnTitle{title.substr(bar + 1, colon - bar - 1), title.substr(colon + 1)};
}

// What a linked image holds of a function its call graph titles. unknown:
// the image cannot say (its locals were discarded, or name other units:
// LTO's ltrans files), so nothing is settled or left out by it.
enum class Linked { absent, kept, replaced, unknown };  // replaced: a weak definition a global took the place of

// A path's last component: the STT_FILE symbol, the graph's unit and DWARF
// may name one source with or without its directory.
std::string_view base_name(std::string_view file) {
  const size_t slash = file.find_last_of("/\\");
  return slash == std::string_view::npos ? file : file.substr(slash + 1);
}

class ImageSymbols {
 public:
  // `graph`: the call graph's titles; a local symbol one of them titles as
  // its file's own is that static, not a global made local.
  ImageSymbols(const ElfImage& elf, const std::map<std::string, Node>& graph) {
    std::set<std::pair<std::string, std::string>> statics;
    std::map<std::string, std::set<std::string_view>> graphs_of;  // a unit's base name -> the .ci files titling it
    for (const auto& entry : graph)
      if (auto own = own_title(entry.first)) {
        statics.emplace(base(own->unit), own->symbol);
        graphs_of[base(own->unit)].insert(std::string_view(entry.first).substr(0, entry.first.find('|')));
      }
    const std::optional<VectorTable> table = read_vector_table(elf);
    has_vector_table_ = table.has_value();
    for (const ElfSymbol& s : elf.symbols) {
      const bool handler = table && table->handlers.contains(s.address);
      if (handler && (s.type == 't' || s.type == 'T' || s.type == 'W')) vectored_names_.insert(s.name);
      if (s.type == 't') {
        locals_.emplace(base(s.file), s.name);
        if (handler) vectored_locals_.emplace(base(s.file), s.name);
        if (!statics.contains({base(s.file), s.name})) {
          internalised_.insert(s.name);
          if (handler) vectored_globals_.insert(s.name);
        }
      } else if (s.type == 'T' || s.type == 'W') {
        globals_[s.name] = s.type;
        if (handler) vectored_globals_.insert(s.name);
      }
    }
    // strip -x and objcopy --discard-all drop every local but keep the
    // STT_FILE symbols: such an image names files and can say nothing of
    // their statics. Two units of one base name (a/util.c, b/util.c) are
    // one name in the image: neither can be told.
    if (!elf.has_local_symbols) return;
    std::map<std::string, int> named;
    for (const std::string& f : elf.source_files) ++named[base(f)];
    for (const auto& [file, count] : named)
      if (count == 1 && graphs_of[file].size() <= 1) files_.insert(file);
  }
  Linked find(std::string_view title) const {
    auto own = own_title(title);
    const std::string symbol(own ? own->symbol : title);
    if (!own) {
      // LTO may make a global local (internalised), keeping its name.
      if (globals_.contains(symbol) || internalised_.contains(symbol)) return Linked::kept;
      return files_.empty() ? Linked::unknown : Linked::absent;
    }
    // Only an image that names the unit, and it alone, can tell its definitions.
    if (!files_.contains(base(own->unit))) return Linked::unknown;
    if (locals_.contains({base(own->unit), symbol})) return Linked::kept;  // static
    auto global = globals_.find(symbol);
    if (global == globals_.end()) return Linked::absent;
    // A file's own definition beside a strong global was weak, and is gone.
    return global->second == 'T' ? Linked::replaced : Linked::kept;
  }
  bool has_vector_table() const { return has_vector_table_; }
  // An exception handler by the image's vector table: its address is there.
  bool vectored(std::string_view title) const {
    auto own = own_title(title);
    if (!own) return vectored_globals_.contains(std::string(title));
    const std::pair<std::string, std::string> local{base(own->unit), std::string(own->symbol)};
    if (locals_.contains(local)) return vectored_locals_.contains(local);  // static
    // A unit the image does not name (LTO's ltrans unit titles every
    // function by a /tmp object, and the image's STT_FILE names are empty):
    // by the name alone. Unmatched, uart_isr counted as thread code, 636 B
    // for 872; a function of that name that is not the one in the table
    // counts as a handler, which errs high.
    const Linked as = find(title);
    if (as == Linked::unknown) return vectored_names_.contains(local.second);
    return as == Linked::kept && vectored_globals_.contains(local.second);  // weak, and no global replaced it
  }

 private:
  static std::string base(std::string_view file) { return std::string(base_name(file)); }
  std::set<std::pair<std::string, std::string>> locals_;  // (source file, symbol) of local code
  std::set<std::string> internalised_;                     // local code no static of the graph accounts for
  std::set<std::string> files_;                            // source files the image names (STT_FILE)
  std::map<std::string, char, std::less<>> globals_;       // symbol -> nm's T or W
  bool has_vector_table_ = false;
  std::set<std::pair<std::string, std::string>> vectored_locals_;  // local code the vector table points to
  std::set<std::string> vectored_globals_;                        // global (or internalised) code it points to
  std::set<std::string> vectored_names_;                          // code it points to, local or global
};

// Functions of a source file of a compile unit that the image's DWARF
// describes, which it defines at another line or not at all: the image was
// linked from another version of that source. A group is a unit's (its .ci
// file's) functions of its own source file, the graph's title; those of
// files it includes (headers, a helpers.c) are left out: a unit the linker
// dropped may use a static function no linked unit emits. Its DWARF file
// is one of the same base name (paths rewritten by -ffile-prefix-map still
// end in it) that defines one of its functions by name, given to the
// groups that match it best (most functions at their lines, then by name;
// one .c compiled twice and linked twice ties): a library's util.c built
// without -g, or left in an archive, is not compared with the
// application's. An ELF left from an earlier build names that build's roots
// and handlers: a task entry added since read as removed by the linker, and
// was no root.
// `checked`: whether any group could be compared.
std::vector<std::string> moved_functions(const std::map<std::string, Node>& nodes,
                                         const std::map<std::string, std::set<std::string>>& defined_in,
                                         const std::map<std::string, std::string>& unit_source,
                                         const std::unordered_multimap<std::string, FunctionLine>& lines, bool& checked) {
  struct Placed {
    std::string_view name;
    int line;
  };
  std::map<std::pair<std::string_view, std::string_view>, std::vector<Placed>> groups;  // (.ci file, base name)
  for (const auto& [title, n] : nodes) {
    // C names only (GCC writes C++ functions' signatures, DWARF their bare
    // names), and none GCC makes itself (a --coverage unit's _sub_I_00100_0).
    const std::string& name = n.fn.name;
    const auto graph = defined_in.find(title);
    auto identifier = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    if (!n.has_frame || name.empty() || name.starts_with("_sub_") || graph == defined_in.end() ||
        graph->second.size() != 1 || !std::all_of(name.begin(), name.end(), identifier))
      continue;
    // "path/app.c:42:6"
    const size_t column = n.fn.file.rfind(':');
    if (column == std::string::npos || column == 0) continue;
    const size_t line_at = n.fn.file.rfind(':', column - 1);
    if (line_at == std::string::npos || line_at == 0) continue;
    int line = 0;
    if (std::from_chars(n.fn.file.data() + line_at + 1, n.fn.file.data() + column, line).ec != std::errc()) continue;
    const std::string_view base = base_name(std::string_view(n.fn.file).substr(0, line_at));
    const auto source = unit_source.find(*graph->second.begin());
    if (source == unit_source.end() || base_name(source->second) != base) continue;
    groups[{*graph->second.begin(), base}].push_back({name, line});
  }
  // Each group's score against each DWARF file: (functions at their line, by name).
  using Score = std::pair<size_t, size_t>;
  std::map<std::pair<std::string_view, std::string_view>, std::map<std::string_view, Score>> scores;
  std::map<std::string_view, Score> best;  // by DWARF file
  for (const auto& [key, functions] : groups) {
    auto& mine = scores[key];
    for (const Placed& f : functions) {
      std::set<std::string_view> files;
      for (auto [it, end] = lines.equal_range(std::string(f.name)); it != end; ++it)
        if (base_name(it->second.file) == key.second) {
          Score& s = mine[it->second.file];
          if (it->second.line == f.line) ++s.first;
          if (files.insert(it->second.file).second) ++s.second;
        }
    }
    for (const auto& [file, score] : mine) best[file] = std::max(best[file], score);
  }
  std::vector<std::string> out;
  checked = false;
  for (const auto& [key, functions] : groups) {
    std::set<std::string_view> claimed;
    for (const auto& [file, score] : scores[key])
      if (score == best[file]) claimed.insert(file);
    if (claimed.empty()) continue;
    checked = true;
    for (const Placed& f : functions) {
      bool here = false;
      std::optional<int> elsewhere;
      for (auto [it, end] = lines.equal_range(std::string(f.name)); it != end; ++it) {
        if (!claimed.contains(it->second.file)) continue;
        if (it->second.line == f.line) here = true;
        else elsewhere = it->second.line;
      }
      if (here) continue;
      const std::string at = fmt::format("{} at {}:{} in the call graphs", f.name, key.second, f.line);
      out.push_back(elsewhere ? fmt::format("{}, line {} in the ELF", at, *elsewhere)
                              : fmt::format("{}, not in the ELF's {}", at, key.second));
    }
  }
  return out;
}

// Functions called from outside their own cycle. One called only by itself,
// or only by the functions it calls back (ping and pong), has no caller to
// keep it linked, and nothing else enters it.
std::set<std::string> entered_from_outside(const std::map<std::string, Node>& nodes) {
  std::map<std::string, uint32_t> index;
  std::vector<const std::string*> titles;
  for (const auto& entry : nodes) {
    index.emplace(entry.first, static_cast<uint32_t>(titles.size()));
    titles.push_back(&entry.first);
  }
  std::vector<std::vector<uint32_t>> callees(titles.size());
  for (const auto& [title, n] : nodes)
    for (const std::string& c : n.callees)
      if (auto it = index.find(c); it != index.end()) callees[index.at(title)].push_back(it->second);
  DeepestChains cycles(std::vector<uint64_t>(titles.size()), callees);
  std::set<std::string> out;
  for (uint32_t v = 0; v < titles.size(); ++v)
    for (uint32_t c : callees[v])
      if (cycles.cycle(c) != cycles.cycle(v)) out.insert(*titles[c]);
  return out;
}

// Settles by the linked image what a call graph cannot tell: a call into a
// file's own definition of a name goes to that definition when the image
// holds it (static, or weak and kept) — such calls join `settled` — and to
// the global when a global replaced it (weak). Functions nobody calls that
// the image does not hold are marked unused and named in `not_linked`.
// False when the image holds none of the graph's functions it can tell of.
bool settle_by_image(std::map<std::string, Node>& nodes, const LinkedImage& linked, std::set<std::string>& settled,
                     StackReport& report) {
  const ImageSymbols image(*linked.image, nodes);
  std::set<std::string> own, weak_replaced;  // "name (unit)"
  for (auto& entry : nodes)
    for (std::string& c : entry.second.callees) {
      auto title = own_title(c);
      if (!title) continue;
      const std::string said = fmt::format("{} ({})", title->symbol, title->unit);
      switch (image.find(c)) {
        case Linked::replaced:
          weak_replaced.insert(said);
          c = std::string(title->symbol);
          break;
        case Linked::kept:
          settled.insert(c);
          // Worth a note only where a global of the name stands beside it.
          if (auto g = nodes.find(std::string(title->symbol)); g != nodes.end() && g->second.has_frame) own.insert(said);
          break;
        case Linked::absent:
        case Linked::unknown:
          break;
      }
    }
  // Called from outside its cycle: one that calls only itself, or a cycle
  // nothing else calls, is a root, and the linker removed it (a gc'd
  // recursive helper stood as an unbounded root).
  const std::set<std::string> called = entered_from_outside(nodes);
  size_t held = 0, missing = 0;
  for (auto& [title, n] : nodes) {
    if (!n.has_frame) continue;
    const Linked linked_as = image.find(title);
    if (linked_as == Linked::kept) ++held;
    if (linked_as == Linked::absent) ++missing;
    if ((linked_as == Linked::absent || linked_as == Linked::replaced) && !called.contains(title)) {
      n.unused = true;
      auto own = own_title(title);
      report.not_linked.push_back(own ? fmt::format("{} ({})", n.fn.name, own->unit) : n.fn.name);
    }
  }
  // Another build's image holds nothing the graph names (one that can
  // tell nothing, all statics and no locals, is no evidence either way).
  if (held == 0 && missing > 0) return false;
  // The vector table, not the name, says which functions the core runs as
  // exception handlers: libopencm3's sys_tick_handler was a thread root,
  // and the main stack 1,656 B where SysTick took 1,816 B (QEMU, painted).
  std::vector<std::string> by_table;  // handlers the name rule does not know
  std::vector<std::string> by_name;   // of those, matched by name alone
  for (auto& [title, n] : nodes)
    if (!n.unused && image.vectored(title)) {
      n.vectored = true;
      if (is_interrupt(n.fn.name)) continue;
      by_table.push_back(shown_title(title));
      if (image.find(title) == Linked::unknown) by_name.push_back(n.fn.name);
    }
  if (!image.has_vector_table())
    report.notes.push_back(fmt::format("{} holds no Cortex-M vector table (in .isr_vector, .vectors or .vector_table, "
                                       "or at the start of the image): exception handlers are known by their names alone",
                                       linked.path));
  else if (!by_table.empty())
    report.notes.push_back(fmt::format("by {}'s vector table, {} {} exception handler{}, though not named as one",
                                       linked.path, fmt::join(by_table, ", "), by_table.size() == 1 ? "is an" : "are",
                                       by_table.size() == 1 ? "" : "s"));
  if (!by_name.empty())
    report.notes.push_back(fmt::format("{} matched to {}'s vector table by name alone: the image does not name {} unit "
                                       "(LTO's ltrans units), and a function of the same name elsewhere would count as "
                                       "a handler too",
                                       fmt::join(by_name, ", "), linked.path, by_name.size() == 1 ? "its" : "their"));
  std::sort(report.not_linked.begin(), report.not_linked.end());
  if (!weak_replaced.empty())
    report.notes.push_back(fmt::format("by {}, {} {} weak and replaced by the global of {}: calls from {} file are counted "
                                       "into the global",
                                       linked.path, fmt::join(weak_replaced, ", "), weak_replaced.size() == 1 ? "is" : "are",
                                       weak_replaced.size() == 1 ? "its name" : "their names",
                                       weak_replaced.size() == 1 ? "its" : "their"));
  if (!own.empty())
    report.notes.push_back(fmt::format("by {}, {} beside a global of the same name {} the file's own (static, or weak "
                                       "with no global linked): counted as written",
                                       linked.path, fmt::join(own, ", "), own.size() == 1 ? "is" : "are"));
  if (!report.not_linked.empty()) {
    const size_t shown = std::min<size_t>(report.not_linked.size(), 5);
    report.notes.push_back(fmt::format(
        "{} function{} nobody calls {} not in {} (removed by the linker, or a weak definition a global replaced), not "
        "counted as roots: {}{}",
        report.not_linked.size(), report.not_linked.size() == 1 ? "" : "s", report.not_linked.size() == 1 ? "is" : "are",
        linked.path, fmt::join(report.not_linked.begin(), report.not_linked.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
        report.not_linked.size() > shown ? fmt::format(" and {} more", report.not_linked.size() - shown) : ""));
  }
  report.elf = linked.path;
  return true;
}

// Calls to a definition titled by its file ("hal_uart.c:HAL_UART_RxCpltCallback")
// when a global of the same name has a node of its own: the file's may be
// weak, and then the linker binds the calls to the global (STM32 HAL's weak
// callback called from HAL_UART_IRQHandler: the user's 544 B callback
// runs), or static, and then they are its own. The graph titles both alike.
// Returns the graph with such calls reaching the global too, and the names;
// calls the linked image settled are left as they are.
std::map<std::string, Node> if_weak(const std::map<std::string, Node>& nodes, const std::set<std::string>& settled,
                                    std::vector<std::string>& names) {
  std::map<std::string, Node> out = nodes;
  std::set<std::string> shared;
  for (auto& entry : out)
    for (size_t i = 0, n = entry.second.callees.size(); i < n; ++i) {
      const std::string& c = entry.second.callees[i];
      auto title = own_title(c);
      if (!title || settled.contains(c)) continue;
      const std::string symbol(title->symbol);
      auto global = nodes.find(symbol);
      auto local = nodes.find(c);
      if (global == nodes.end() || !global->second.has_frame || local == nodes.end() || !local->second.has_frame)
        continue;
      entry.second.callees.push_back(symbol);
      shared.insert(local->second.fn.name);
    }
  names.assign(shared.begin(), shared.end());
  return out;
}

std::optional<StackReport> analyze_stack(const std::vector<std::string>& paths, bool fpu, std::string& error,
                                         const LinkedImage& linked) {
  std::vector<fs::path> su, ci, htm;
  // Found in a directory, a .ci that is no call graph is another tool's
  // (a Charm++ interface file): left out and said, not the whole run refused.
  std::vector<std::string> not_graphs;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (!e.is_regular_file(ec)) continue;  // a directory named x.ci is not a call graph
        if (e.path().extension() == ".su") su.push_back(e.path());
        if (e.path().extension() == ".ci") {
          const std::string text = read(e.path());
          if (text.empty() || text.starts_with("graph:")) ci.push_back(e.path());
          else not_graphs.push_back(e.path().string());
        }
        if (e.path().extension() == ".htm") htm.push_back(e.path());
      }
    } else if (fs::exists(p, ec)) {
      auto ext = fs::path(p).extension();
      (ext == ".ci" ? ci : ext == ".htm" || ext == ".html" ? htm : su).push_back(p);
    } else {
      error = fmt::format("{}: cannot open ({})", p, ec ? ec.message() : "no such file");
      return std::nullopt;
    }
  }
  // Keil: one call graph report per image, and no GCC files beside it.
  std::erase_if(htm, [](const fs::path& p) { return read(p).find("Static Call Graph for image") == std::string::npos; });
  if (!htm.empty() && su.empty() && ci.empty()) {
    if (linked.image) {
      error = fmt::format("{}: --elf settles GCC call graphs; a Keil call graph marks what the linker removed itself: "
                          "leave --elf out",
                          linked.path);
      return std::nullopt;
    }
    if (htm.size() > 1) {
      error = fmt::format("{}: {} Keil call graph reports found ({}, ...): name one", fmt::join(paths, ", "), htm.size(),
                          htm[0].string());
      return std::nullopt;
    }
    auto report = parse_keil_callgraph(read(htm[0]), fpu, error);
    if (!report) error = fmt::format("{}: {}", htm[0].string(), error);
    return report;
  }
  std::sort(su.begin(), su.end());
  std::sort(ci.begin(), ci.end());

  std::map<std::string, Node> nodes;        // by .ci title (static functions: ".ci path|file:name")
  std::multimap<std::string, std::string> by_name;  // function name -> title
  std::map<std::string, std::set<std::string>> defined_in;  // title -> the .ci files giving it a frame
  std::map<std::string, std::string> unit_source;  // .ci file -> its graph's title, the unit's own source file
  // GCC ends every line it writes, and a call graph with a line of its
  // closing '}': a file that does not was cut short, and its frames would
  // add up to too little.
  auto cut_short = [&](const fs::path& p, const std::string& text, bool graph) {
    std::string_view rest(text);
    if (graph) {
      rest = rest.substr(0, rest.find_last_not_of(" \t\r\n") + 1);
      const size_t last_line = rest.find_last_of('\n');
      rest = rest.substr(last_line == std::string_view::npos ? 0 : last_line + 1);
    }
    if (graph ? rest == "}" : text.empty() || text.ends_with('\n')) return false;  // GCC writes an empty .su for a file without functions
    if (graph && text.empty()) {
      error = fmt::format("{}: line 1: the file is empty: expected \"graph: {{\" (a GCC -fcallgraph-info file); compile "
                          "again or leave it out",
                          p.string());
      return true;
    }
    error = fmt::format("{}: line {}: the file ends inside a line{}: it is cut short; compile again or use the whole file",
                        p.string(), std::count(text.begin(), text.end(), '\n') + 1,
                        graph ? " or before the graph's closing '}'" : "");
    return true;
  };
  for (const fs::path& p : ci) {
    std::string text = read(p);
    if (!text.empty() && !text.starts_with("graph:")) {
      error = fmt::format("{}: line 1: expected \"graph: {{\" (a GCC -fcallgraph-info file)", p.string());
      return std::nullopt;
    }
    if (cut_short(p, text, true)) return std::nullopt;
    // A static function's title is "file.c:name", and two directories can
    // each hold a file.c with its own: such titles are this file's alone.
    const std::string source = vcg_field(text.substr(0, text.find('\n')), "title:").value_or("");
    unit_source[p.string()] = source;
    const std::string unit = source + ":";
    auto own = [&](std::string title) { return title.starts_with(unit) ? p.string() + "|" + title : title; };
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      if (line.starts_with("node:")) {
        auto title = vcg_field(line, "title:"), label = vcg_field(line, "label:");
        if (!title || !label) continue;
        title = own(*title);
        Node& n = nodes[*title];
        // label: "name\nfile:line:col\nN bytes (qualifier)" - external callees stop after the location.
        std::vector<std::string> parts;
        size_t start = 0;
        for (size_t i = 0; i <= label->size(); ++i)
          if (i == label->size() || (*label)[i] == '\n') {
            parts.push_back(label->substr(start, i - start));
            start = i + 1;
          }
        // A callee declared elsewhere appears again without a frame; the
        // defining file's node keeps its location.
        if (!n.has_frame) {
          // A builtin GCC emitted as a call is labelled "__builtin_memcpy"
          // and titled by the function really called: name it so.
          n.fn.name = parts[0].starts_with("__builtin_") && parts.size() > 1 && parts[1] == "<built-in>"
                          ? std::string(*title)
                          : parts[0];
          if (parts.size() > 1) n.fn.file = parts[1];
        }
        if (parts.size() > 2) {
          uint64_t bytes = 0;
          // Out of range (20 digits and more) is too large as well, not 0.
          if (std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), bytes).ec == std::errc::result_out_of_range)
            bytes = UINT64_MAX;
          if (bytes >= kMaxStackBytes) {
            error = frame_too_large(p, static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n')),
                                    parts[2].substr(0, parts[2].find(' ')), parts[0]);
            return std::nullopt;
          }
          size_t q = parts[2].find('('), e = parts[2].find(')');
          std::string qualifier = q != std::string::npos && e != std::string::npos ? parts[2].substr(q + 1, e - q - 1) : "";
          // The same global defined twice (two builds in one tree; GCC
          // titles a weak definition by its file, so not that): the larger
          // frame, and the calls of both, so the bound holds whichever one is linked.
          if (!n.has_frame || bytes > n.fn.frame_bytes) {
            if (n.has_frame && parts.size() > 1) n.fn.file = parts[1];
            n.fn.frame_bytes = bytes;
            n.fn.qualifier = qualifier;
          }
          n.has_frame = true;
          defined_in[*title].insert(p.string());
        }
        by_name.emplace(n.fn.name, *title);
      } else if (line.starts_with("edge:")) {
        auto from = vcg_field(line, "sourcename:"), to = vcg_field(line, "targetname:");
        if (from && to) nodes[own(*from)].callees.push_back(own(*to));
      }
    }
  }
  // .su files give frames for functions the .ci files do not describe;
  // without its .ci beside it, what a file's functions call is not known.
  std::vector<std::pair<StackFunction, std::string>> su_functions;  // and the .su file it is in
  bool clang_lines = false, gcc_lines = false;
  std::set<std::string> no_graph;  // names of functions from such files
  const std::set<fs::path> ci_files(ci.begin(), ci.end());
  for (const fs::path& p : su) {
    const bool graphed = ci_files.contains(fs::path(p).replace_extension(".ci"));
    std::string text = read(p);
    size_t pos = 0, line_no = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string line = text.substr(pos, (nl == std::string::npos ? text.size() : nl) - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      size_t t1 = line.find('\t'), t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
      StackFunction f;
      bool clang = false;
      if (t2 == std::string::npos || !split_location(std::string_view(line).substr(0, t1), f.file, f.name, clang) ||
          std::from_chars(line.data() + t1 + 1, line.data() + t2, f.frame_bytes).ec != std::errc()) {
        error = fmt::format("{}: line {}: expected \"file:line:col:function<TAB>bytes<TAB>qualifier\" (a GCC "
                            "-fstack-usage file) or \"file:line:function<TAB>...\" (Clang's)",
                            p.string(), line_no);
        return std::nullopt;
      }
      // Clang names C++ functions mangled; GCC as they are written.
      if (clang) f.name = demangle(f.name);
      (clang ? clang_lines : gcc_lines) = true;
      if (f.frame_bytes >= kMaxStackBytes) {
        error = frame_too_large(p, line_no, std::to_string(f.frame_bytes), f.name);
        return std::nullopt;
      }
      f.qualifier = line.substr(t2 + 1);
      if (!gcc_qualifier(f.qualifier)) {
        error = fmt::format("{}: line {}: expected static, dynamic or dynamic,bounded after the bytes, found \"{}\" (a GCC or Clang -fstack-usage file)",
                            p.string(), line_no, f.qualifier);
        return std::nullopt;
      }
      if (!graphed && !ci.empty()) no_graph.insert(f.name);
      su_functions.emplace_back(f, p.string());
    }
    // After the lines read as .su: a file of another kind is named as that first.
    if (cut_short(p, text, false)) return std::nullopt;
  }
  std::map<std::string, std::set<std::string>> su_defined_in;  // title -> the .su files giving it a frame
  std::vector<std::pair<StackFunction, std::string>> su_only;  // frames no graph's node stands for, and their .su file
  std::vector<std::string> stale;  // frames a .su and its .ci give differently
  std::vector<std::string> stray;  // frames a .su without a .ci gives a graph's function differently
  // GCC's clones of one function (work.constprop.0, .1, .2) share a name and
  // a location in the .su: such lines pair with no node in particular.
  std::map<std::pair<std::string, std::string>, int> su_lines;  // (name, file:line:col) -> lines
  for (const auto& [f, file] : su_functions) ++su_lines[{f.name, f.file}];
  std::set<std::string> joined_titles;  // frames taken from a .su
  for (const auto& [f, file] : su_functions) {
    const bool orphan = !ci.empty() && !ci_files.contains(fs::path(file).replace_extension(".ci"));
    // -fcallgraph-info without =su: the graph has no frames, and a static's
    // node is titled by its unit; its .su frame is that node's (read as
    // another function, the static was "no stack info" and a root of its own).
    const std::string own_graph = fs::path(file).replace_extension(".ci").string() + "|";
    bool joined = false;
    for (auto [it, end] = by_name.equal_range(f.name); it != end; ++it)
      if (Node& n = nodes[it->second]; it->second.starts_with(own_graph) &&
                                       (!n.has_frame || joined_titles.contains(it->second))) {
        // Clones that share the name: each node the largest of their frames.
        if (!n.has_frame || f.frame_bytes > n.fn.frame_bytes) {
          n.fn.frame_bytes = f.frame_bytes;
          n.fn.qualifier = f.qualifier;
        }
        n.has_frame = joined = true;
        joined_titles.insert(it->second);
      }
    if (joined) continue;
    // A .ci node already holds this function (clones: "f.constprop" vs "f.constprop.0").
    bool known = false;
    std::set<std::string_view> compared;  // by_name holds a title once per graph naming it
    for (auto [it, end] = by_name.equal_range(f.name); it != end; ++it) {
      Node& n = nodes[it->second];
      if (!n.has_frame) continue;
      // A static of another source file is another function: a.c's work
      // stood for b.c's, whose 3,016 B, the largest frame, were counted
      // nowhere. (The graph beside the .su is its own: LTO's ltrans unit is
      // titled by a /tmp object, its .su by the sources.)
      const auto own = own_title(it->second);
      const bool same = !own || f.file.starts_with(std::string(own->unit) + ":");
      if (!same && !it->second.starts_with(own_graph)) continue;
      known = true;
      // The .su and the graph beside it disagree: files of two builds (one
      // compiled again, one not). The larger counts; 88 B once stood for 800.
      // A global that more graphs define holds the larger of theirs already.
      const auto graphs = defined_in.find(it->second);
      const bool beside = it->second.starts_with(own_graph) ||
                          (graphs != defined_in.end() && graphs->second.size() == 1 &&
                           graphs->second.contains(own_graph.substr(0, own_graph.size() - 1)));
      std::set<std::string_view> same_place;  // the graph's nodes of this name and location
      for (auto [other, last] = by_name.equal_range(f.name); other != last; ++other)
        if (nodes[other->second].fn.file == f.file) same_place.insert(other->second);
      const bool paired = su_lines[{f.name, f.file}] == 1 && same_place.size() <= 1 && n.fn.file == f.file;
      if (beside && paired && compared.insert(it->second).second && n.fn.frame_bytes != f.frame_bytes) {
        stale.push_back(fmt::format("{} ({} B in {}, {} B in its .ci)", f.name, f.frame_bytes, file, n.fn.frame_bytes));
        n.fn.frame_bytes = std::max(n.fn.frame_bytes, f.frame_bytes);
      }
      // A .su with no .ci beside it framing a function of a graph (a
      // global, or a static of the same source file): a stray file of
      // another build. Its frames were dropped in silence (an -O0 chains.su
      // renamed beside an -O2 tree: helper 448 B, counted 416 B).
      if (orphan && graphs != defined_in.end() && compared.insert(it->second).second &&
          n.fn.frame_bytes != f.frame_bytes) {
        stray.push_back(fmt::format("{} ({} B in {}, {} B in {})", f.name, f.frame_bytes, file, n.fn.frame_bytes,
                                    fmt::join(graphs->second, ", ")));
        n.fn.frame_bytes = std::max(n.fn.frame_bytes, f.frame_bytes);
      }
    }
    if (!known) su_only.emplace_back(f, file);
  }
  // A name such functions have in more than one source file: statics of
  // their files (or two programs' functions), each its own, titled as a
  // static of its file; merged, a.c's work went from the list as b.c's
  // twin, said to be of two programs or builds. In one source file and more
  // .su files (two builds), one, with the larger frame.
  std::map<std::string, std::set<std::pair<std::string, std::string>>> sources;  // name -> (.su file, source file)
  for (const auto& [f, file] : su_only) sources[f.name].emplace(file, source_file(f.file));
  for (auto& [name, files] : sources) {
    std::set<std::string_view> distinct;
    for (const auto& [file, source] : files) distinct.insert(source);
    if (distinct.size() < 2) files.clear();
  }
  for (const auto& [f, file] : su_only) {
    const std::string title =
        sources[f.name].empty() ? f.name : fmt::format(".su|{}:{}", source_file(f.file), f.name);
    su_defined_in[title].insert(file);
    Node& n = nodes[title];
    if (n.has_frame && n.fn.frame_bytes >= f.frame_bytes) continue;  // defined twice: the larger frame
    n.fn = f;
    n.has_frame = true;
    if (no_graph.contains(f.name)) n.calls_unknown = true;
  }
  // A .su cannot say static or global: a graph's call by the plain name
  // (main calling c.c's global work, b.c having a static work) reached
  // none of the functions listed apart above, and counted 16 B where it is
  // 2,016 B. It goes to the largest of them, erring high, with a note.
  std::vector<std::string> by_largest;
  for (const auto& [name, files] : sources) {
    if (files.empty()) continue;
    auto called = nodes.find(name);
    if (called == nodes.end() || called->second.has_frame) continue;
    const StackFunction* largest = nullptr;
    for (const auto& [f, file] : su_only)
      if (f.name == name && (!largest || f.frame_bytes > largest->frame_bytes)) largest = &f;
    if (!largest) continue;
    const std::string target = fmt::format(".su|{}:{}", source_file(largest->file), name);
    for (auto& [title, n] : nodes)
      for (std::string& c : n.callees)
        if (c == name) c = target;
    by_largest.push_back(fmt::format("{} ({} B, {})", name, largest->frame_bytes, source_file(largest->file)));
  }
  resolve_constructor_aliases(nodes);
  if (nodes.empty()) {
    error = su.empty() && ci.empty()
                ? fmt::format("{}: no .su, .ci or Keil .htm files found (compile with -fstack-usage "
                              "-fcallgraph-info=su, or link with --callgraph)",
                              fmt::join(paths, ", "))
                : fmt::format("{}: {} .su/.ci file{} found, and no function in {} (empty files: compile the sources "
                              "that define functions with -fstack-usage -fcallgraph-info=su)",
                              fmt::join(paths, ", "), su.size() + ci.size(), su.size() + ci.size() == 1 ? "" : "s",
                              su.size() + ci.size() == 1 ? "it" : "them");
    return std::nullopt;
  }

  StackReport settled_by_image;  // its notes and what the image does not hold
  std::set<std::string> settled;
  if (linked.image && !ci.empty()) {
    if (!linked.image->has_symbol_table) {
      error = fmt::format("{}: no symbol table (stripped?): give the ELF as the linker wrote it, or leave --elf out",
                          linked.path);
      return std::nullopt;
    }
    bool checked = false;
    if (const auto lines = read_function_lines(linked.path)) {
      if (const auto moved = moved_functions(nodes, defined_in, unit_source, *lines, checked); !moved.empty()) {
        error = fmt::format("{}: not linked from the sources of these call graphs ({}{}): give the ELF of this build, or "
                            "leave --elf out",
                            linked.path, moved.front(), moved.size() > 1 ? fmt::format(", and {} more", moved.size() - 1) : "");
        return std::nullopt;
      }
    }
    if (!checked)
      settled_by_image.notes.push_back(fmt::format(
          "no source file of these call graphs could be compared with {}'s DWARF (built without -g, with -gsplit-dwarf, "
          "or LTO's units): that it was linked from these sources is not checked",
          linked.path));
    if (!settle_by_image(nodes, linked, settled, settled_by_image)) {
      error = fmt::format("{}: holds none of the functions of the call graphs in {}: not this build's image? give the "
                          "ELF linked from these objects",
                          linked.path, fmt::join(paths, ", "));
      return std::nullopt;
    }
  }
  StackReport report = worst_case_stacks(nodes, fpu);
  report.files = su.size() + ci.size();
  report.elf = settled_by_image.elf;
  report.not_linked = settled_by_image.not_linked;
  report.notes = settled_by_image.notes;
  if (!not_graphs.empty())
    report.notes.push_back(fmt::format("{} .ci file{} left out: not a GCC call graph (no \"graph: {{\" line; another "
                                       "tool's, such as a Charm++ interface): {}",
                                       not_graphs.size(), not_graphs.size() == 1 ? "" : "s", fmt::join(not_graphs, ", ")));
  if (clang_lines) report.source = gcc_lines || !ci.empty() ? "GCC and Clang" : "Clang";
  // Without the image, handlers are known by their names only: one named
  // otherwise (uart_isr in the vector table) counts as thread code, and the
  // nested figure misses it.
  if (!linked.image && report.interrupts.handlers && !report.roots.empty())
    report.notes.push_back("handlers are known by name here (..._Handler, ..._IRQHandler): one the vector table names "
                           "otherwise is counted as thread code; --elf FW.elf reads the vector table");
  auto first_three = [](const std::vector<std::string>& items) {
    return fmt::format("{}{}", fmt::join(items.begin(), items.begin() + std::min<size_t>(items.size(), 3), "; "),
                       items.size() > 3 ? fmt::format(" and {} more", items.size() - 3) : "");
  };
  if (!stale.empty())
    report.notes.push_back(fmt::format("{} function{} with a frame its .su and its .ci give differently, counted with the "
                                       "larger (files of two builds? compile again): {}",
                                       stale.size(), stale.size() == 1 ? "" : "s", first_three(stale)));
  if (!stray.empty())
    report.notes.push_back(fmt::format("{} function{} of the call graphs framed differently by a .su file with no .ci "
                                       "beside it, counted with the larger (a file of another build? give one build's "
                                       "files): {}",
                                       stray.size(), stray.size() == 1 ? "" : "s", first_three(stray)));
  {
    std::vector<std::string> names;
    const StackReport weak = worst_case_stacks(if_weak(nodes, settled, names), fpu);
    std::vector<std::string> deeper;
    // Roots by name: two statics of one name in two files are left out (in
    // review one borrowed the other's 800 B as "if weak").
    auto unique = [](const StackReport& r, const std::string& name) {
      return std::count_if(r.roots.begin(), r.roots.end(), [&](const StackRoot& x) { return x.function == name; }) == 1;
    };
    for (StackRoot& root : report.roots)
      for (const StackRoot& other : weak.roots)
        if (!names.empty() && other.function == root.function && other.worst_case_bytes > root.worst_case_bytes &&
            unique(report, root.function) && unique(weak, root.function)) {
          root.if_weak_bytes = other.worst_case_bytes;
          deeper.push_back(fmt::format("{} {} B", root.function, other.worst_case_bytes));
        }
    if (!names.empty()) {
      report.weak_or_static = names;
      if (weak.interrupts.one_level_bytes > report.interrupts.one_level_bytes ||
          weak.interrupts.all_nested_bytes > report.interrupts.all_nested_bytes ||
          weak.interrupts.thread_bytes > report.interrupts.thread_bytes)
        report.interrupts_if_weak = weak.interrupts;
      report.notes.push_back(fmt::format(
          "{} {} defined by a file for itself and globally in another: a call graph titles a weak definition and a "
          "static one alike, so calls from that file are counted into its own{}",
          fmt::join(names, ", "), names.size() == 1 ? "is" : "are",
          deeper.empty() ? " (were it weak, nothing would need more)"
                         : fmt::format("; were it weak (a HAL callback, a default handler), the linker binds them to "
                                       "the global: {}{}",
                                       fmt::join(deeper, ", "),
                                       report.interrupts_if_weak
                                           ? fmt::format(", main stack {} B", report.interrupts_if_weak->handlers
                                                                                ? report.interrupts_if_weak->all_nested_bytes
                                                                                : report.interrupts_if_weak->thread_bytes)
                                           : "")));
    }
  }
  for (const auto& [title, files] : defined_in)
    if (files.size() > 1)
      report.notes.push_back(fmt::format(
          "{} is defined in {} call graphs ({}): counted with the larger frame and the calls of each; if these are two "
          "builds, give one build's files",
          nodes.at(title).fn.name, files.size(), fmt::join(files, ", ")));
  for (const auto& [title, files] : su_defined_in)
    if (files.size() > 1)
      report.notes.push_back(fmt::format("{} is defined in {} .su files ({}): counted with the larger frame; if these "
                                         "are two programs or two builds, give one's files",
                                         nodes.at(title).fn.name, files.size(), fmt::join(files, ", ")));
  for (const auto& [name, files] : sources)
    if (!files.empty()) {
      std::vector<std::string> where;
      for (const auto& [file, source] : files) where.push_back(fmt::format("{}: {}", file, source));
      std::set<std::string_view> distinct;
      for (const auto& [file, source] : files) distinct.insert(source);
      report.notes.push_back(fmt::format("{} is defined by {} source files in .su files ({}): listed apart, as statics "
                                         "of their files; if these are two programs, give one's files",
                                         name, distinct.size(), fmt::join(where, ", ")));
    }
  if (!by_largest.empty())
    report.notes.push_back(fmt::format(
        "calls by plain name to {} are counted into the largest of the source files' definitions: a .su cannot say "
        "which one is global",
        fmt::join(by_largest, ", ")));
  if (ci.empty()) {  // without a call graph every function would look like a root
    report.roots.clear();
    report.interrupts = InterruptBudget{0, 0, 0, report.interrupts.frame_bytes, 0};
  }
  return report;
}

StackReport worst_case_stacks(const std::map<std::string, CallNode>& nodes, bool fpu) {
  StackReport report;
  std::map<std::string, uint32_t> index;
  std::vector<const std::string*> titles;
  for (const auto& [title, n] : nodes) {
    index.emplace(title, static_cast<uint32_t>(titles.size()));
    titles.push_back(&title);
  }
  // Cycles, indirect calls, dynamic frames and callees without a frame size
  // are the reasons a root has no bound; they contribute nothing to its bytes.
  std::vector<uint64_t> frame;
  std::vector<std::vector<uint32_t>> callees(titles.size());
  std::vector<std::set<std::string>> local(titles.size());
  std::set<uint32_t> called;
  for (const auto& [title, n] : nodes) {
    const uint32_t v = index.at(title);
    frame.push_back(n.fn.frame_bytes);
    for (const std::string& c : n.callees) {
      if (c == "__indirect_call") {
        local[v].insert("indirect call in " + n.fn.name);
      } else if (auto it = index.find(c); it == index.end()) {
        local[v].insert("no stack info: " + shown_title(c));
      } else {
        // A callee without a frame size counts 0 B and is flagged; what it
        // calls is still walked (Keil's run-time entry code has no sizes).
        if (!nodes.at(c).has_frame) local[v].insert("no stack info: " + nodes.at(c).fn.name);
        callees[v].push_back(it->second);
        if (c != title) called.insert(it->second);  // a function that only calls itself is still a root
      }
    }
    if (n.fn.qualifier == "dynamic") local[v].insert("dynamic frame: " + n.fn.name);
    if (n.calls_unknown) local[v].insert("calls not known (no .ci beside its .su): " + n.fn.name);
  }
  // A handler is a root whether or not code also calls it: main calling
  // PendSV_Handler as a polling fallback hid PendSV's use on top of the
  // deepest thread point (2,136 B measured, 1,928 B said). One known only
  // by its name that another handler calls (HAL_UART_IRQHandler from
  // USART1_IRQHandler) is that handler's callee, also when thread code
  // calls USART1_IRQHandler (it was a root of its own, counted twice).
  std::vector<bool> handler(titles.size());
  {
    std::vector<bool> called_by_named(titles.size());  // by a function named as a handler
    for (const auto& [title, n] : nodes)
      if (const uint32_t v = index.at(title); is_interrupt(n.fn.name))
        for (uint32_t c : callees[v])
          if (c != v) called_by_named[c] = true;
    std::vector<bool> reached(titles.size());  // by a call from a handler
    std::vector<uint32_t> work;
    for (const auto& [title, n] : nodes) {
      const uint32_t v = index.at(title);
      if (!n.unused && !n.label_only && (n.vectored || (is_interrupt(n.fn.name) && !called_by_named[v]))) {
        handler[v] = true;
        work.insert(work.end(), callees[v].begin(), callees[v].end());
      }
    }
    while (!work.empty()) {
      const uint32_t v = work.back();
      work.pop_back();
      if (reached[v]) continue;
      reached[v] = true;
      work.insert(work.end(), callees[v].begin(), callees[v].end());
    }
    for (const auto& [title, n] : nodes)
      if (const uint32_t v = index.at(title); is_interrupt(n.fn.name) && !reached[v]) handler[v] = true;
  }
  DeepestChains chains(std::move(frame), callees);
  // A cycle nothing outside it calls (main -> run -> fatal -> main, entered
  // from an assembly Reset_Handler no graph holds) has a caller for every
  // function, so none was a root, and its frames were counted nowhere: 68 B
  // said, no UNBOUNDED line, where main needs 744 B and more. Something
  // enters it: its function with the deepest chain stands for it (main
  // among equals: the chain through the whole cycle is as deep from any of
  // its functions), unbounded by the recursion. A handler in it is a root
  // already, and stands for no thread entry.
  std::vector<bool> cycle_root(titles.size());
  {
    std::vector<bool> entered(chains.cycles());
    for (uint32_t v = 0; v < titles.size(); ++v)
      for (uint32_t c : callees[v])
        if (chains.cycle(c) != chains.cycle(v)) entered[chains.cycle(c)] = true;
    for (uint32_t id = 0; id < chains.cycles(); ++id) {
      if (entered[id] || chains.members(id).size() < 2) continue;  // one that calls only itself is a root already
      // The hardware enters a cycle through its handler (SysTick_Handler <->
      // helper): helper made a thread root of its own said 432 B of thread
      // stack no thread uses, and a worst case of 900 B for 484 B.
      const auto& members = chains.members(id);
      if (std::any_of(members.begin(), members.end(), [&](uint32_t w) { return handler[w]; })) continue;
      auto rank = [&](uint32_t w) {
        return std::tuple(chains.from(w).bytes, bare_function_name(nodes.at(*titles[w]).fn.name) == "main");
      };
      std::optional<uint32_t> entry;
      for (uint32_t w : chains.members(id))
        if (!nodes.at(*titles[w]).unused && !handler[w] && (!entry || rank(w) > rank(*entry) ||
                                                            (rank(w) == rank(*entry) && w < *entry)))
          entry = w;
      if (entry) cycle_root[*entry] = true;
    }
  }

  // A root's reasons: those of every function it can reach, and each
  // cycle's; found for every cycle, callees' cycles first (no recursion).
  std::vector<std::set<std::string>> cycle_reasons(chains.cycles());
  for (uint32_t id = 0; id < chains.cycles(); ++id) {
    std::set<std::string>& out = cycle_reasons[id];
    std::vector<std::string> members;
    for (uint32_t w : chains.members(id)) {
      members.push_back(nodes.at(*titles[w]).fn.name);
      out.insert(local[w].begin(), local[w].end());
      for (uint32_t c : callees[w])
        if (chains.cycle(c) != id) out.insert(cycle_reasons[chains.cycle(c)].begin(), cycle_reasons[chains.cycle(c)].end());
    }
    if (chains.in_cycle(chains.members(id).front())) {
      std::sort(members.begin(), members.end());
      std::string names;
      for (size_t k = 0; k < members.size() && k < 4; ++k) names += (k ? ", " : "") + members[k];
      if (members.size() > 4) names += fmt::format(" and {} more", members.size() - 4);
      out.insert("recursion: " + names);
    }
  }

  for (const auto& [title, n] : nodes) {
    if (n.has_frame) report.functions.push_back(n.fn);
    const uint32_t v = index.at(title);
    // A name without a frame or calls is a declaration, unless it is a
    // handler: the hardware calls it, whatever its stack (Keil's "unknown").
    const bool interrupt = handler[v];
    if (n.unused || n.label_only || (called.count(v) && !interrupt && !cycle_root[v]) ||
        (!n.has_frame && n.callees.empty() && !interrupt))
      continue;
    StackRoot root;
    root.function = n.fn.name;
    root.file = source_file(n.fn.file);
    root.interrupt = interrupt;
    root.stated_bytes = n.stated_depth;
    const Chain& chain = chains.from(v);
    root.worst_case_bytes = chain.bytes;
    for (uint32_t f : chains.path(v)) {
      root.path.push_back(nodes.at(*titles[f]).fn.name);
      root.path_frame_bytes.push_back(nodes.at(*titles[f]).fn.frame_bytes);
    }
    std::set<std::string> why = cycle_reasons[chains.cycle(v)];
    if (!n.has_frame) why.insert("no stack info: " + n.fn.name);
    if (!chain.complete)
      why.insert(fmt::format("recursion: more than {} calls deep in cycles; the bound is the deepest found",
                             DeepestChains::kSearchLimit));
    root.reasons.assign(why.begin(), why.end());
    root.unbounded = !root.reasons.empty();
    report.roots.push_back(std::move(root));
  }
  std::sort(report.functions.begin(), report.functions.end(),
            [](const auto& a, const auto& b) { return a.frame_bytes != b.frame_bytes ? a.frame_bytes > b.frame_bytes : a.name < b.name; });
  std::sort(report.roots.begin(), report.roots.end(), [](const auto& a, const auto& b) {
    return a.worst_case_bytes != b.worst_case_bytes ? a.worst_case_bytes > b.worst_case_bytes : a.function < b.function;
  });
  InterruptBudget& irq = report.interrupts;
  irq.frame_bytes = fpu ? kFpuExceptionFrameBytes : kExceptionFrameBytes;
  uint64_t worst_handler = 0;
  for (const StackRoot& r : report.roots) {
    if (!r.interrupt) {
      irq.thread_bytes = std::max(irq.thread_bytes, r.worst_case_bytes);
      continue;
    }
    ++irq.handlers;
    worst_handler = std::max(worst_handler, r.worst_case_bytes + irq.frame_bytes);
    irq.all_nested_bytes += r.worst_case_bytes + irq.frame_bytes;
  }
  irq.one_level_bytes = irq.thread_bytes + worst_handler;
  irq.all_nested_bytes += irq.thread_bytes;
  return report;
}

}  // namespace edgemem
