// One trace from bytes to an AnalysisResult: sniff the format, decode,
// analyse, symbolise. Bytes are pushed as they arrive (a file, stdin, a
// live capture), so `analyze` and a live view share it. Refusals and
// warnings come back as text for the caller to print; nothing here writes
// to a terminal or exits.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "edgemem/analyzer.h"
#include "edgemem/decoder.h"
#include "edgemem/report.h"

namespace edgemem {

struct TraceSessionOptions {
  Format format = Format::automatic;
  AnalyzerOptions analyzer;
  DecoderOptions decoder;
  std::string elf;  // firmware ELF: return-address sites become function (file:line)
  // Sees every decoded event after the analyzer, with the names it refers
  // to and the decoder (its progress(): what it lost so far): for an export
  // that needs the events themselves (--textlog). Sites are named as
  // decoded; --elf renames them only at the end.
  EventTap event_tap;
};

// What presenters read: how the input was decoded and what the analyses found.
struct TraceRun {
  InputSummary input;
  AnalysisResult result;
};

struct TraceOutcome {
  std::optional<TraceRun> run;  // unset when the input was refused or held no memory events
  // One-line messages in the order they arose, each "WHERE: WHAT": a refusal
  // or error when `run` is unset, warnings (corrupt bytes skipped) otherwise.
  std::vector<std::string> notes;
};

class TraceSession {
 public:
  // `name` is how notes name the input: its path, or "-" for stdin.
  TraceSession(std::string name, TraceSessionOptions options);
  ~TraceSession();

  // False once more bytes would change nothing: the ELF could not be read or
  // the input is not a trace.
  bool accepting() const;
  // With Format::automatic the first 64 KiB are held back until the format is known.
  void feed(std::span<const uint8_t> bytes);
  // The source failed mid-way (or could not be opened): what was fed is still analysed.
  void read_failed(const std::string& error);
  // Reading was stopped before the input ended (Ctrl-C, a watch limit): a
  // compressed stream left unfinished then is not reported as cut off.
  void stopped();
  // A live view (watch): compressed bytes are decoded as each read arrives,
  // not held back to be given in 4 KiB pieces at fixed offsets (a trickle
  // would show nothing for minutes); where damage is named may then move
  // by a byte or two with where the reads ended.
  void decode_as_read();
  // A watch with --until: the decoder is fed 256 bytes at a time while
  // `enough` is false, and nothing once it is true, so a block of
  // decompressed output (up to 128 KiB of zstd) or the bytes held back to
  // tell the format do not run far past the N-th inference. Call
  // stopped() once it is true.
  void stop_when(std::function<bool()> enough);
  // A followed file starts over (truncated, rewritten or rotated): the
  // record it cut is counted as truncated, not glued to the new bytes
  // (Decoder::cut). Not inside a compressed stream, which cannot restart.
  void cut_stream();
  // A live stream may take minutes to fill the sniffing window: decides the
  // format on what is held back so far when those bytes already show it,
  // and refuses them when they are positively another kind of file (an
  // ELF, a model); anything else waits for the full window. True once decoding.
  bool start_if_known();
  // While the format is not known: what the bytes held back look like so
  // far ("N bytes so far: not a trace ... (tried ...)"); empty once decoding.
  std::string undecided() const;
  // Observers and snapshot() while bytes are still arriving.
  Analyzer& analyzer();
  // What finish() would report on the bytes decoded so far, without ending
  // anything (a live view); unset while the format is still being sniffed.
  // Sites are not symbolised here.
  std::optional<TraceRun> snapshot();
  // Decodes what is held back and ends the analysis; call once.
  TraceOutcome finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads `path` ("-" for stdin) in 1 MiB chunks until its end, a read error
// or `stop()`; returns the error text, empty on success. `stopped` (when
// given) says whether `stop()` ended it before the end.
std::string read_chunks(const std::string& path, const std::function<void(std::span<const uint8_t>)>& chunk,
                        const std::function<bool()>& stop = {}, bool* stopped = nullptr);

// A whole trace file through a session. `stop` ends the read early (Ctrl-C):
// the outcome covers what was read until then.
TraceOutcome analyse_trace_file(const std::string& path, TraceSessionOptions options,
                                const std::function<bool()>& stop = {},
                                const std::function<void(uint64_t bytes_read)>& progress = {});

}  // namespace edgemem
