// Push-based decoders: bytes in (any chunking), events out to a sink.
// A decoder keeps only the partial record it is in the middle of, so memory
// does not grow with the input, and a file, stdin or a live stream look alike.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "edgemem/event.h"
#include "edgemem/pool_table.h"
#include "edgemem/site_table.h"

namespace edgemem {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const Event& event) = 0;
};

// Interned names shared by the decoders that fill them and the analyses and
// presenters that read them.
struct TraceContext {
  SiteTable sites;
  PoolTable pools;
  TimeBase time_base = TimeBase::sequence;
  // Names the trace gives its threads (emt v2 THREAD records), by Event::thread.
  std::unordered_map<uint32_t, std::string> thread_names;
  // Set by a decoder that learns its source is a 32-bit device (an emt v1
  // header): no block of it can be over 1 GiB or past 4 GiB.
  unsigned address_bits = 64;
  // Boots of the device after the first (an emt v1 HEADER after events):
  // the analyses judge growth within the latest boot.
  uint64_t device_restarts = 0;
  // The latest restart: when, and how many pool resets the decoder sent for
  // it (one per pool then; none when it had no pool yet).
  uint64_t restart_time = 0;
  size_t restart_resets = 0;
};

// The first thing the decoder could not make sense of, for the one-line error.
struct DecodeProblem {
  uint64_t offset = 0;  // byte offset in the input
  uint64_t line = 0;    // 1-based line for text formats, 0 otherwise
  std::string what;
};

struct DecodeStats {
  uint64_t bytes = 0;
  uint64_t events = 0;
  uint64_t skipped_lines = 0;    // text lines that are not edgemem records
  uint64_t malformed_lines = 0;  // [MEM] lines that could not be parsed
  uint64_t corrupt_bytes = 0;    // bytes skipped while resynchronising
  uint64_t truncated_bytes = 0;  // partial record at the end of the input
  // Records cut where a followed stream started over (its file truncated,
  // rotated or written again): lost mid-stream, not at its end.
  uint64_t stream_cut_bytes = 0;
  uint64_t overflows = 0;        // ITM overflow packets: data was dropped on the device
  uint64_t dropped_records = 0;  // records the device could not send (emt DROP)
  uint64_t out_of_order_records = 0;  // a Linux recording's records applied after later ones (the merge's bound)
  // emt records whose check byte matched, and those whose did not (damaged
  // in transit: skipped, with the bytes after them, to the next SYNC).
  uint64_t checked_records = 0;
  uint64_t failed_checks = 0;
  // Events read from emt records without check bytes ("~emt!"): there a
  // damaged record that still decodes goes unnoticed.
  uint64_t unchecked_events = 0;
  // A Linux recording the process could not finish (its file could not be
  // opened again or grow): calls it made after that, not recorded.
  bool recording_stopped = false;
  uint64_t calls_not_recorded = 0;
  // A Linux recording whose file ends where its layout says more must come:
  // inside a packed zstd frame (no checksum yet), or inside a chunk. The
  // file was cut (a copy stopped early, a full disk, `head -c`); the run
  // went on past what is here. A program killed or aborted leaves a whole
  // file (`record` packs it), so this is never that. `cut_at` is the frame's
  // (or chunk's) offset, `cut_bytes_present` how many of its bytes are here,
  // `cut_chunk_missing` the unpacked bytes of records its last chunk
  // declared and did not deliver.
  bool recording_cut = false;
  bool cut_in_packed_frame = false;
  uint64_t cut_at = 0;
  uint64_t cut_bytes_present = 0;
  uint64_t cut_chunk_missing = 0;
  // A recording that began with an attach (`record --pid`, emt ATTACHED
  // record): blocks made before it are not seen. The frees of such blocks
  // the recorder saw (UNSEEN FREE records), and their bytes as malloc
  // counts them (malloc_usable_size: at least what was asked).
  bool attached = false;
  uint64_t frees_before_attach = 0;
  uint64_t bytes_freed_before_attach = 0;
  uint64_t syncs = 0;
  // Decoded records that cannot have happened (a block outside its declared
  // heap, past the address space, larger than the device can address):
  // corrupt input, counted here and kept away from the analyses.
  uint64_t impossible_events = 0;
  std::string first_impossible;  // what was wrong with the first of them
  // Interned tables are bounded (memory must not grow with trace length);
  // names past a table's cap are counted here instead of kept.
  uint64_t sites_dropped = 0;    // call-site names beyond SiteTable::kMaxSites
  uint64_t pools_dropped = 0;    // pool names beyond PoolTable::kMaxPools
  uint64_t strings_dropped = 0;  // emt STRING records beyond the decoder's cap
  uint64_t markers_dropped = 0;  // distinct ITM port-0 marker texts beyond the cap
  // Text-log stamps that went back (not a 32-bit counter's wrap): a device
  // that restarted, or a corrupt stamp. Later times continue from the last.
  uint64_t time_went_back = 0;
  uint64_t device_restarts = 0;  // emt: a HEADER after events, the device booted again
  uint64_t time_went_back_line = 0;  // the first of them (not the first problem: a malformed line after it must be named)
  // Objects of a recorded process whose file on disk is not the build that
  // ran (its GNU build ID differs): their frames are named by offset.
  std::vector<std::string> modules_changed;
  // Whole-file compression around the trace (TraceSession undoes it):
  // "gzip", "xz" or "zstd", empty for none; the compressed bytes read; and
  // why the compressed stream stopped early (damage, or cut off: then
  // compression_cut), with the compressed bytes after damage, which nothing
  // can read.
  std::string compression;
  uint64_t compressed_bytes = 0;
  std::string compression_problem;
  bool compression_cut = false;
  uint64_t compressed_bytes_unread = 0;
  std::map<std::string, uint64_t> packets;  // per packet kind, for protocol formats
  std::optional<DecodeProblem> first_problem;

  void note_problem(uint64_t offset, uint64_t line, std::string what);
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void feed(std::span<const uint8_t> bytes) = 0;
  // End of input: a record cut short is counted as truncated, never emitted.
  virtual void finish() = 0;
  // The stream starts over (a followed file truncated or replaced): a record
  // cut short by it is counted as truncated and dropped, and what follows is
  // read as a new stream rather than as that record's rest. ITM and TPIU
  // keep their state (their packets resynchronise on their own).
  virtual void cut() {}
  virtual std::string_view format_name() const = 0;
  // Ticks per second of Event::time when the stream says so (emt header).
  virtual std::optional<double> clock_hz() const { return std::nullopt; }
  // Complete after finish(); decoders may fill some totals only then.
  const DecodeStats& stats() const { return stats_; }
  // Before finish(): what is counted so far (a live watch's status and
  // metrics); the totals that only the end can settle may still grow.
  virtual DecodeStats progress() const { return stats_; }

 protected:
  DecodeStats stats_;
};

enum class Format : uint8_t { automatic, log, seedbin, itm, tpiu, emt };

// Sees a decoded event, the names it refers to and the decoder that made it.
using EventTap = std::function<void(const Event&, const TraceContext&, const Decoder&)>;

std::optional<Format> parse_format(std::string_view name);
std::string_view to_string(Format format);

struct DecoderOptions {
  unsigned tpiu_stream = 1;  // TPIU source ID that carries the ITM stream
};

std::unique_ptr<Decoder> make_decoder(Format format, TraceContext& context, EventSink& sink,
                                      const DecoderOptions& options = {});

// What the first bytes of an input show. `format` is set only when the bytes
// positively look like that trace format; anything else (a firmware image, a
// model, a linker map, random bytes) is refused, with what it looks like and
// what to run instead, because decoding it as a trace yields numbers that
// look real and are not.
struct SniffVerdict {
  std::optional<Format> format;
  std::string looks_like;  // "an ELF file, not a trace", "not a trace edgemem can read (tried ...)", ...
  std::string instead;     // what to run instead; "{file}" stands for the input's path
  bool other_kind = false;  // positively another kind of file (an ELF, a model, a map): more bytes change nothing
  bool reads_compressed = false;  // other_kind, and what `instead` runs reads it compressed too
  // The one-line refusal: "PATH: LOOKS_LIKE; INSTEAD".
  std::string refusal(std::string_view path) const;
};

// How many first bytes of an input sniff_trace judges: however they
// arrive, every caller judges the same window, so the verdict is the same.
// `tpiu_stream`: the TPIU source ID to find ITM on (--tpiu-stream).
inline constexpr size_t kSniffBytes = 64 * 1024;
SniffVerdict sniff_trace(std::span<const uint8_t> head, unsigned tpiu_stream = 1);

}  // namespace edgemem
