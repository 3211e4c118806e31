// Names the frames of a recorded Linux process offline: a return address in
// a mapped module (executable or shared object, by path and load bias)
// becomes "function (file:line)", one frame per inlined call with the
// outermost first, from the module's DWARF through elfutils libdwfl.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace edgemem {

class ProcessSymbolizer {
 public:
  ProcessSymbolizer();
  ~ProcessSymbolizer();
  ProcessSymbolizer(const ProcessSymbolizer&) = delete;
  ProcessSymbolizer& operator=(const ProcessSymbolizer&) = delete;

  // Frames for the call before `return_address`, outermost first: the
  // function it is in and the functions inlined into it at that point.
  // A module without symbols gives "module+0xOFFSET"; no module, "0x…".
  // With the GNU build ID the recording saw (raw bytes; empty: unknown), a
  // file on disk of another build is not read: its frames are
  // "module+0xOFFSET" and its path is in changed_modules().
  std::vector<std::string> frames(const std::string& module_path, const std::string& build_id, uint64_t bias,
                                  uint64_t return_address);
  const std::vector<std::string>& changed_modules() const { return changed_; }

 private:
  struct Module;
  Module* module(const std::string& path, const std::string& build_id);
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Module>> modules_;
  std::vector<std::string> changed_;
};

}  // namespace edgemem
