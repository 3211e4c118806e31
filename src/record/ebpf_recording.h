// Turns the uprobe records of one process into its emt v2 recording: puts
// them back in time order (bpftrace reads one buffer per CPU in turns, so
// records of different CPUs arrive out of order), writes the module map
// before the stacks that need it, keeps the process's start-up frames out of
// the stacks as the preload does, and numbers --inference-fn calls.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "record/ebpf_elf_functions.h"
#include "record/ebpf_emt_writer.h"
#include "record/ebpf_output_parser.h"
#include "record/ebpf_process_maps.h"

namespace edgemem {

struct UprobeStats {
  uint64_t allocations = 0, failed = 0, frees = 0;
  // Frees of blocks allocated before the probes were attached: the
  // recording never saw them allocated (counted, not an error, and not
  // written: the recording holds only blocks it saw allocated).
  uint64_t unknown_frees = 0;
  uint64_t inferences = 0;
  uint64_t lost = 0;  // events bpftrace could not read (its per-CPU buffer was full)
  // The kernel's mapping records of a program the recorder started that
  // its buffer had no room for: said dropped, or perhaps dropped unsaid.
  uint64_t lost_mappings = 0;
  bool mappings_maybe_lost = false;
};

class UprobeRecording {
 public:
  // `cpus`: how many CPUs carry records (each has its output buffer).
  UprobeRecording(EmtV2FileWriter& writer, int pid, size_t cpus) : writer_(writer), pid_(pid), cpus_(cpus) {}

  void add(UprobeRecord r);
  // The process ran before the recording (record --pid): said in the
  // recording, with each free of a block made before it.
  void attached() {
    attached_ = true;
    writer_.attached();
  }
  // Events the kernel dropped: their place in the recording's order is
  // left empty, which the reader reports as lost records.
  void lost(uint64_t events);
  // Re-reads the process's mappings and writes the objects not yet known.
  void refresh_modules();
  // Writes the objects of `objects` not yet known (from the kernel's mapping records).
  void add_modules(const std::vector<MappedObject>& objects);
  // Writes the records every CPU's buffer has been read past: bpftrace
  // reads the buffers in turns, and a loaded machine has seen it read one
  // seconds ahead of another. Each buffer is in time order, so once every
  // CPU has been heard from up to T (a record or a heartbeat), nothing
  // before T is still to come, but for the calls a record dates from when
  // they were entered (realloc's free, munmap, mremap): `entered_slack` ns
  // are held for those. A starved buffer and a CPU taken offline look the
  // same from here: more than `max_waiting` records held, the oldest go.
  void write_settled(uint64_t entered_slack, size_t max_waiting);
  // The time every CPU's buffer has been read up to (0 until each has been heard).
  uint64_t heard_up_to() const;
  void finish() { write_before(UINT64_MAX); }

  const UprobeStats& stats() const { return stats_; }

 private:
  struct Module {
    uint64_t end;
    bool runtime;  // the C library or the dynamic loader
    std::string path;
    uint64_t bias;
  };
  struct Later {
    bool operator()(const std::pair<uint64_t, uint64_t>& a, const std::pair<uint64_t, uint64_t>& b) const {
      return a > b;
    }
  };
  void write_before(uint64_t time);
  void write(UprobeRecord& r);
  const Module* module_at(uint64_t address) const;
  void write_mapping(UprobeRecord& r, const std::string& name);
  bool runtime_maps_for_itself(const UprobeRecord& r) const;
  void trim_start_up_frames(std::vector<uint64_t>& stack) const;
  const std::string& thread_name(uint32_t tid);

  EmtV2FileWriter& writer_;
  int pid_;
  size_t cpus_;
  bool attached_ = false;
  uint64_t arrivals_ = 0;
  std::unordered_map<int32_t, uint64_t> heard_;  // per CPU: the newest time its buffer carried
  std::priority_queue<std::pair<uint64_t, uint64_t>, std::vector<std::pair<uint64_t, uint64_t>>, Later> order_;
  std::unordered_map<uint64_t, UprobeRecord> waiting_;  // by arrival number
  std::map<uint64_t, Module> modules_;                  // by start address
  // Per object path: where its offset 0 is linked, and for the runtime its
  // load segments (to read the calls that mmap returns to).
  struct Object {
    uint64_t first_load_page = 0;
    std::string build_id;
    std::optional<std::vector<ElfFunctions::Load>> runtime_loads;
  };
  std::map<std::string, Object> objects_;
  uint64_t last_refresh_ = 0;
  std::unordered_set<uint64_t> live_;
  // Anonymous mappings followed, recorded or PROT_NONE (start -> them),
  // and the ranges an mremap in progress has freed (its return makes the
  // new one).
  struct Mapping {
    uint64_t length = 0;
    bool reserved = false;  // PROT_NONE: followed, not recorded
  };
  std::map<uint64_t, Mapping> mappings_;
  // An mremap's source, from its entry to its return: its length, whether all
  // of it was reserved, and its parts (offset, and each part's extent and kind).
  struct RemapSource {
    Mapping whole;
    std::vector<std::pair<uint64_t, Mapping>> parts;
  };
  std::unordered_map<uint64_t, RemapSource> remapping_;  // by old address
  std::unordered_map<uint32_t, int> depth_;     // --inference-fn calls in progress per thread
  std::unordered_map<uint32_t, uint64_t> index_;  // the inference each thread is in
  std::unordered_map<uint32_t, std::string> names_;
  UprobeStats stats_;
};

}  // namespace edgemem
