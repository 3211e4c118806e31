// bpftrace 0.17 to 0.19 attaches a uprobe to the probed library file for
// every process that maps it (the script's `pid == N` predicate filters
// inside the probe; from 0.20 `-p` targets the process in the kernel):
// bpftrace itself and the recorder reading it included. Each of their
// allocations then traps into the kernel twice (the breakpoint, then a
// single step); on a 2-core virtual machine that was three quarters of
// bpftrace's time and 95 % of the recorder's, and they lost most events of
// a process making 4,000 allocations a second. A uprobe belongs to a file
// (its inode), so `record --via ebpf` copies its own C and C++ libraries
// and runs itself again, once, with the copies first on the library path;
// bpftrace, started by it, loads them too. The programs it starts or
// probes use the originals.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace edgemem {

class UnprobedLibraries {
 public:
  // In the first run: copies of this process's C and C++ libraries in
  // $TMPDIR (or /tmp); nullopt with the reason when they cannot be made or
  // could not be loaded from there (a noexec mount): the recording then
  // runs on the probed files, only slower.
  static std::optional<UnprobedLibraries> copy_own(std::string& why);
  // In the run again: the copies the first run made (none in a first run,
  // or when the environment was not written by this process's previous
  // image). Puts back the library path the first run had, for the
  // programs this one starts.
  static UnprobedLibraries adopt();
  // This image is the run again (whether or not its copies were found):
  // it must not run again itself.
  bool ran_again() const { return ran_again_; }

  UnprobedLibraries() = default;
  UnprobedLibraries(UnprobedLibraries&& other) noexcept;
  UnprobedLibraries& operator=(UnprobedLibraries&&) = delete;
  ~UnprobedLibraries() { remove(); }

  // This process's environment for running again on the copies (whose
  // directory the new image then owns).
  std::vector<std::string> environment_for_run_again() const;
  // For LD_LIBRARY_PATH; empty when there are no copies.
  const std::string& directory() const { return directory_; }
  bool is_copy(const std::string& path) const;
  // The library `path` is a copy of, or `path` itself.
  std::string original(const std::string& path) const;
  // Once bpftrace has loaded them, the copies' files are not needed (the
  // mappings stay).
  void remove();

 private:
  struct Library {
    std::string soname, original;
  };
  std::string directory_;
  bool removed_ = false;
  bool ran_again_ = false;
  std::vector<Library> libraries_;
  bool path_was_set_ = false;  // LD_LIBRARY_PATH, in the first run
  std::string path_was_;
};

}  // namespace edgemem
