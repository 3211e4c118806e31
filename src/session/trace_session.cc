#include "edgemem/trace_session.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/units.h"
#include "session/decompressor.h"
#include "session/ring_dump.h"
#include "static/elf_symbolizer.h"

namespace edgemem {
namespace {

std::string where(const std::string& path, const DecodeProblem& p) {
  return p.line ? fmt::format("{}:{}", path, p.line) : fmt::format("{}: offset {}", path, p.offset);
}

// The analyzer first, then the tap.
class TappedSink final : public EventSink {
 public:
  TappedSink(EventSink& analyzer, const TraceContext& context, const EventTap& tap,
             const std::unique_ptr<Decoder>& decoder)
      : analyzer_(analyzer), context_(context), tap_(tap), decoder_(decoder) {}
  void on_event(const Event& event) override {
    analyzer_.on_event(event);
    tap_(event, context_, *decoder_);  // the events come from it: set by then
  }

 private:
  EventSink& analyzer_;
  const TraceContext& context_;
  const EventTap& tap_;
  const std::unique_ptr<Decoder>& decoder_;
};

}  // namespace

struct TraceSession::Impl {
  Impl(std::string n, TraceSessionOptions o)
      : name(std::move(n)), options(std::move(o)), analyzer(context, options.analyzer),
        tapped(analyzer, context, options.event_tap, decoder) {}

  std::string name;
  TraceSessionOptions options;
  TraceContext context;
  Analyzer analyzer;
  TappedSink tapped;
  std::unique_ptr<ElfSymbolizer> symbolizer;
  std::unique_ptr<Decoder> decoder;
  std::vector<uint8_t> head;  // held back until the format is known
  std::string refusal;        // Format::automatic found no trace: what the input is instead
  std::string fatal;          // the ELF could not be read
  bool read_failed = false;
  std::vector<std::string> notes;
  std::optional<Format> looks_like;  // --format forced, and the bytes show this other format
  // Whole-file compression, told from the first bytes: they are held in
  // `magic` until there are enough to tell.
  std::vector<uint8_t> magic;
  bool wrapping_known = false;
  std::optional<Compression> compression;
  std::unique_ptr<Decompressor> unpack;
  uint64_t compressed_bytes = 0;
  uint64_t cut_bytes = 0;  // of records cut by cut_stream(): in the decoder's truncated bytes, said apart
  std::string unpack_damage;  // why the compressed stream stopped being read
  uint64_t unpack_damage_at = 0;  // its compressed offset
  bool unpack_cut = false;        // it ended early: cut off, not damaged
  bool stopped = false;           // reading was stopped before the input's end
  bool as_read = false;           // decode_as_read()
  std::function<bool()> enough;   // stop_when()
  // Where the decompressor hands what it undoes.
  const Decompressor::Output to_decoder = [this](std::span<const uint8_t> out) { take(out); };

  void wrap() {
    wrapping_known = true;
    compression = compression_of(magic);
    if (compression) unpack = Decompressor::make(*compression);
    const std::vector<uint8_t> first = std::move(magic);
    unwrap(first);
  }
  void unwrap(std::span<const uint8_t> bytes) {
    if (!unpack) return take(bytes);
    compressed_bytes += bytes.size();
    if (!unpack_damage.empty()) return;
    std::string error = unpack->feed(bytes, to_decoder);
    if (error.empty() && as_read) error = unpack->drain(to_decoder);
    if (!error.empty()) damaged(std::move(error), false);
  }
  void damaged(std::string why, bool cut) {
    unpack_damage = std::move(why);
    unpack_damage_at = unpack->consumed();
    unpack_cut = cut;
  }
  // What the bytes are instead of a trace, saying when they were decompressed
  // first: a command for another kind of file then needs them decompressed
  // (not the --format advice for bytes that are no known kind).
  void refuse(const SniffVerdict& verdict) {
    refusal = verdict.refusal(name);
    if (compression) {
      refusal = fmt::format("{} (after {} decompression){}", name, to_string(*compression), refusal.substr(name.size()));
      if (verdict.other_kind && !verdict.reads_compressed)
        refusal += fmt::format("; decompress it first ({} -dc {} > FILE)", to_string(*compression), name);
    }
  }
  // Plain trace bytes: held back until the format is known, then decoded.
  void take(std::span<const uint8_t> bytes) {
    if (!fatal.empty() || !refusal.empty()) return;
    if (decoder) {
      decode(bytes);
      return;
    }
    head.insert(head.end(), bytes.begin(), bytes.end());
    if (head.size() < kSniffBytes && options.format == Format::automatic) return;
    start();
  }
  // The input's compression, and the records cut where the stream started
  // over, in the decoder's totals.
  void stamp(DecodeStats& s) const {
    s.stream_cut_bytes = std::min(cut_bytes, s.truncated_bytes);
    s.truncated_bytes -= s.stream_cut_bytes;
    if (!compression) return;
    s.compression = to_string(*compression);
    s.compressed_bytes = compressed_bytes;
    s.compression_problem = unpack_damage;
    s.compression_cut = unpack_cut;
    if (!unpack_damage.empty()) s.compressed_bytes_unread = compressed_bytes - unpack_damage_at;
  }

  bool start() {
    Format f = options.format;
    // The same window however the bytes arrived (a file in 1 MiB reads, a pipe in 64 KiB).
    const auto window = std::span<const uint8_t>(head).first(std::min(head.size(), kSniffBytes));
    if (f == Format::automatic) {
      SniffVerdict verdict = sniff_trace(window, options.decoder.tpiu_stream);
      if (!verdict.format) {
        refuse(verdict);
        return false;
      }
      f = *verdict.format;
    } else {
      // Forced: said when the bytes positively show another format, so
      // findings decoded the wrong way are not taken at face value.
      SniffVerdict verdict = sniff_trace(window, options.decoder.tpiu_stream);
      // ITM and TPIU included: TPIU is judged first and strictly (frames on a
      // few sources, ITM inside), so raw ITM forced as TPIU is said (it read
      // as 941 marks from frames scattered over 21 sources, without a word).
      if (verdict.format && *verdict.format != f) looks_like = *verdict.format;
    }
    EventSink& sink = options.event_tap ? static_cast<EventSink&>(tapped) : analyzer;
    decoder = make_decoder(f, context, sink, options.decoder);
    decode(head);
    head.clear();
    return true;
  }
  void decode(std::span<const uint8_t> bytes) {
    if (!enough) return decoder->feed(bytes);
    constexpr size_t kSlice = 256;
    for (size_t at = 0; at < bytes.size() && !enough(); at += kSlice)
      decoder->feed(bytes.subspan(at, std::min(kSlice, bytes.size() - at)));
  }

  TraceOutcome finish() {
    TraceOutcome out;
    if (!fatal.empty()) {
      out.notes.push_back(fatal);
      return out;
    }
    if (!wrapping_known && !magic.empty()) wrap();
    // Not once the bytes were refused: the rest was never fed.
    if (unpack && unpack_damage.empty() && fatal.empty() && refusal.empty()) {
      if (std::string error = unpack->drain(to_decoder); !error.empty())
        damaged(std::move(error), false);
      else if (std::string cut = unpack->finish(to_decoder); !cut.empty() && !stopped)
        damaged(std::move(cut), true);
    }
    if (!unpack_damage.empty())
      notes.push_back(fmt::format(
          "{}: compressed offset {}: {}; {}", name, unpack_damage_at, unpack_damage,
          unpack_cut ? std::string("what came before is analysed")
                     : fmt::format("what came before is analysed (a checksum at the end of a block finds damage only "
                                   "after its data was read: findings near the end may come from damaged data), the "
                                   "{} after it {} not (a compressed stream cannot be read past damage)",
                                   units::counted(compressed_bytes - unpack_damage_at, "compressed byte", "compressed bytes"),
                                   compressed_bytes - unpack_damage_at == 1 ? "is" : "are")));
    if (unpack && !unpack->ignored().empty()) notes.push_back(fmt::format("warning: {}: {}", name, unpack->ignored()));
    out.notes = std::move(notes);
    if (read_failed && !decoder && head.empty()) return out;
    if (!decoder && refusal.empty()) start();
    if (!decoder) {
      out.notes.push_back(refusal);
      return out;
    }
    // Reading stopped mid-record (Ctrl-C, watch --until or --for): that last
    // record was cut by the stop, not lost by the device or the file.
    const uint64_t truncated_before_end = decoder->progress().truncated_bytes;  // stats() is settled by finish()
    decoder->finish();
    if (symbolizer) symbolizer->symbolize(context.sites);
    analyzer.set_trace_clock(decoder->clock_hz());
    TraceRun run{{name, std::string(decoder->format_name()), decoder->stats(), context.time_base}, analyzer.finish()};
    if (stopped) run.input.stats.truncated_bytes = truncated_before_end;
    stamp(run.input.stats);
    judge_after_data_loss(run.input.stats, run.result);
    const DecodeStats& s = run.input.stats;
    // A recording cut off holds the first part of the run only: a group
    // growing at the cut may be freed after it (a reviewer's perl run cut
    // to a quarter read two [LEAK] groups of 523,467 B and 357,696 B that the
    // whole recording frees), and a leak may begin after it. Neither a
    // leak nor its absence is known: the groups growing up to the cut are
    // still listed, and --fail-on leak is not judged.
    if (s.recording_cut)
      run.result.checks.leaks = {CheckStatus::not_checked,
                                 "the recording's file is cut off (see [DATA LOST]): the rest of the run is not in it, "
                                 "so blocks live at the cut may be freed later and a leak may begin after it; groups "
                                 "growing up to the cut are listed, not judged leaks; analyse the whole file"};
    // A whole recording (it names its threads) of a program that allocated
    // nothing (/bin/true) is an answer, not a wrong input.
    const bool empty_recording = s.events == 0 && !s.first_problem && s.truncated_bytes == 0 && s.dropped_records == 0 &&
                                 !context.thread_names.empty();
    if (empty_recording) out.notes.push_back(fmt::format("{}: the recording holds no allocation: the program made none", name));
    // Decoded against what its bytes show: with nothing decoded that is the
    // one error line's advice, else a warning beside the findings.
    const std::string other =
        looks_like ? fmt::format("; its bytes look like {}: leave out --format", to_string(*looks_like)) : "";
    // Forced against what the bytes look like, and damaged as read: the
    // "findings" are another format's bytes read as this one (an emt capture
    // as --format seedbin read a 2 GB peak and a corrupted guard).
    if (looks_like && s.events > 0 && (s.corrupt_bytes || s.overflows || s.malformed_lines)) {
      out.notes.push_back(fmt::format("{}: as --format {} {} did not decode ({}), and its bytes look like {}: "
                                      "leave out --format (it would be read as {}) or give the format it is in",
                                      name, run.input.format,
                                      s.malformed_lines ? fmt::format("{} lines", s.malformed_lines)
                                                        : fmt::format("{} of its {} bytes", s.corrupt_bytes, s.bytes),
                                      s.first_problem ? s.first_problem->what : "ITM overflow packets",
                                      to_string(*looks_like), to_string(*looks_like)));
      return out;
    }
    if (looks_like && (s.events > 0 || empty_recording))
      out.notes.push_back(fmt::format("warning: {}: decoded as --format {} as asked, but its bytes look like {}; "
                                      "without --format it would be read as {}",
                                      name, run.input.format, to_string(*looks_like), to_string(*looks_like)));
    if (s.events == 0 && !empty_recording) {
      if (s.first_problem)
        out.notes.push_back(fmt::format("{}: {} (as --format {}); no memory events decoded{}", where(name, *s.first_problem),
                                        s.first_problem->what, run.input.format, other));
      // Records that decoded, each of a block no address space holds
      // (addr + size past 2^64): not "expected [MEM] lines".
      else if (s.impossible_events > 0)
        out.notes.push_back(fmt::format("{}: {} memory event{} decoded, none possible (the first: {}): the data is "
                                        "corrupt; no memory events analysed",
                                        name, s.impossible_events, s.impossible_events == 1 ? "" : "s",
                                        s.first_impossible));
      else if (s.truncated_bytes > 0)
        // Not "its first record": an emt stream's SYNC, HEADER and POOL records may have come whole.
        out.notes.push_back(fmt::format("{}: the input ends inside a record ({} bytes of it, cut off) before any "
                                        "whole memory event (as --format {}){}", name, s.truncated_bytes,
                                        run.input.format, other));
      else if (s.bytes == 0)
        out.notes.push_back(fmt::format("{}: empty input, expected a trace", name));
      else if (!s.packets.empty()) {
        // A capture that decoded, of something else (printf on port 0, exception trace).
        std::vector<std::string> kinds;
        for (const auto& [kind, count] : s.packets) kinds.push_back(fmt::format("{} {}", count, kind));
        out.notes.push_back(fmt::format("{}: no memory events in {} bytes as --format {}: it holds packets ({}) and "
                                        "not one memory event{}",
                                        name, s.bytes, run.input.format, fmt::join(kinds, ", "), other));
      } else
        out.notes.push_back(fmt::format("{}: no memory events found in {} bytes as --format {} (expected [MEM] lines, "
                                        "seed binary records, emt or ITM packets){}", name, s.bytes, run.input.format, other));
      return out;
    }
    if (s.first_problem && (s.corrupt_bytes || s.malformed_lines))
      out.notes.push_back(fmt::format("warning: {}: {} ({} corrupt bytes, {} malformed lines skipped; the rest was analysed)",
                                      where(name, *s.first_problem), s.first_problem->what, s.corrupt_bytes,
                                      s.malformed_lines));
    out.run = std::move(run);
    return out;
  }
};

TraceSession::TraceSession(std::string name, TraceSessionOptions options)
    : impl_(std::make_unique<Impl>(std::move(name), std::move(options))) {
  const std::string& elf = impl_->options.elf;
  if (elf.empty()) return;
  std::string why;
  impl_->symbolizer = ElfSymbolizer::open(elf, why);
  if (!impl_->symbolizer) impl_->fatal = fmt::format("{}: {} (expected the firmware ELF with debug info)", elf, why);
}

TraceSession::~TraceSession() = default;

bool TraceSession::accepting() const { return impl_->fatal.empty() && impl_->refusal.empty(); }

void TraceSession::feed(std::span<const uint8_t> bytes) {
  if (!accepting()) return;
  Impl& s = *impl_;
  if (!s.wrapping_known) {
    s.magic.insert(s.magic.end(), bytes.begin(), bytes.end());
    if (s.magic.size() >= kCompressionMagicBytes) s.wrap();
    return;
  }
  s.unwrap(bytes);
}

void TraceSession::stopped() { impl_->stopped = true; }

void TraceSession::decode_as_read() { impl_->as_read = true; }

void TraceSession::stop_when(std::function<bool()> enough) { impl_->enough = std::move(enough); }

void TraceSession::cut_stream() {
  // Bytes still held back to tell the format are decoded first if they show
  // it, so the cut falls after them; bytes that show nothing yet stay held.
  if (!impl_->decoder) start_if_known();
  if (impl_->decoder && !impl_->unpack) {
    const uint64_t before = impl_->decoder->progress().truncated_bytes;
    impl_->decoder->cut();
    impl_->cut_bytes += impl_->decoder->progress().truncated_bytes - before;
  }
}

void TraceSession::read_failed(const std::string& error) {
  impl_->read_failed = true;
  impl_->notes.push_back(fmt::format("{}: {}", impl_->name, error));
}

bool TraceSession::start_if_known() {
  if (impl_->decoder) return true;
  if (!accepting() || impl_->head.empty()) return false;
  if (impl_->options.format == Format::automatic) {
    SniffVerdict verdict = sniff_trace(impl_->head, impl_->options.decoder.tpiu_stream);
    if (verdict.other_kind) impl_->refuse(verdict);
    if (!verdict.format) return false;
  }
  return impl_->start();
}

std::string TraceSession::undecided() const {
  if (impl_->decoder || impl_->head.empty() || !accepting()) return {};
  return fmt::format("{} bytes so far: {}", impl_->head.size(),
                     sniff_trace(impl_->head, impl_->options.decoder.tpiu_stream).looks_like);
}

Analyzer& TraceSession::analyzer() { return impl_->analyzer; }

std::optional<TraceRun> TraceSession::snapshot() {
  if (!impl_->decoder) return std::nullopt;
  impl_->analyzer.set_trace_clock(impl_->decoder->clock_hz());
  const Decoder& d = *impl_->decoder;
  TraceRun run{{impl_->name, std::string(d.format_name()), d.progress(), impl_->context.time_base},
               impl_->analyzer.snapshot()};
  impl_->stamp(run.input.stats);
  judge_after_data_loss(run.input.stats, run.result);
  return run;
}

TraceOutcome TraceSession::finish() { return impl_->finish(); }

namespace {

// Every process `edgemem record` records holds a shared lock on its file
// while it writes (docs/record.md): one that cannot be taken exclusively is
// a recording still under way (record --pid after Ctrl-C, a forked child).
bool still_recording(const std::string& path) {
  if (path == "-") return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  const bool locked = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) != 0 &&
                      errno == EWOULDBLOCK;
  ::close(fd);  // releases the lock if it was taken
  return locked;
}

// A dump of target/'s RAM ring (the struct, then its storage): the bytes
// from its tail to its head are the trace. Unset when the file is not one.
std::optional<TraceOutcome> analyse_ring_dump(const std::string& path, TraceSessionOptions& options) {
  // A dump is a file: a FIFO or a device would lose the bytes read to look.
  struct stat st;
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  char magic[kRingDumpMagic.size()];
  if (!in.read(magic, sizeof magic) || std::string_view(magic, sizeof magic) != kRingDumpMagic) return std::nullopt;
  const auto length = static_cast<uint64_t>(st.st_size);
  TraceOutcome outcome;
  // The header says how long the file must be: checked before it is read whole.
  std::string dump(std::min<uint64_t>(length, 32), '\0');
  in.seekg(0);
  in.read(dump.data(), static_cast<std::streamsize>(dump.size()));
  if (std::string why = ring_dump_shape_problem(dump, length); !why.empty()) {
    outcome.notes.push_back(fmt::format("{}: {}", path, why));
    return outcome;
  }
  dump.resize(length);
  in.seekg(0);
  if (!in.read(dump.data(), static_cast<std::streamsize>(dump.size()))) {
    outcome.notes.push_back(fmt::format("{}: cannot read it", path));
    return outcome;
  }
  std::string error;
  auto ring = unwrap_ring_dump(dump, error);
  if (!ring) {
    outcome.notes.push_back(fmt::format("{}: {}", path, error));
    return outcome;
  }
  TraceSession session(path, std::move(options));
  session.feed({reinterpret_cast<const uint8_t*>(ring->unread.data()), ring->unread.size()});
  outcome = session.finish();
  const std::string drained =
      ring->tail == 0 ? "nothing had been drained"
                      : fmt::format("the {} bytes before went to whoever drained it", units::grouped(ring->tail));
  outcome.notes.insert(outcome.notes.begin(),
                       fmt::format("{}: an em_ring dump ({} ring): read the {} bytes not drained, from its tail ({}) "
                                   "to its head ({}); {}",
                                   path, units::bytes(ring->size), units::grouped(ring->unread.size()),
                                   units::grouped(ring->tail), units::grouped(ring->head), drained));
  // Records dropped after the last one that fit are told by the next record
  // that fits, and by the ring's counter alone when none came. The counter
  // counts from em_ring_init: it stands for this stream when it is whole.
  if (outcome.run && ring->tail == 0 && ring->dropped > outcome.run->input.stats.dropped_records) {
    outcome.notes.push_back(fmt::format("{}: the ring's counter says {} records were dropped, {} of them after the "
                                        "last record it holds",
                                        path, ring->dropped, ring->dropped - outcome.run->input.stats.dropped_records));
    outcome.run->input.stats.dropped_records = ring->dropped;
  }
  return outcome;
}

}  // namespace

TraceOutcome analyse_trace_file(const std::string& path, TraceSessionOptions options, const std::function<bool()>& stop,
                                const std::function<void(uint64_t)>& progress) {
  if (auto ring = analyse_ring_dump(path, options)) return std::move(*ring);
  TraceSession session(path, std::move(options));
  if (!session.accepting()) return session.finish();
  uint64_t total = 0;
  bool stopped = false;
  // Also once the session takes no more (not a trace, decided on the first
  // 64 KiB): an endless source (/dev/zero) is refused then, not at its end.
  std::string error = read_chunks(
      path,
      [&](std::span<const uint8_t> bytes) {
        session.feed(bytes);
        total += bytes.size();
        if (progress) progress(total);
      },
      [&] { return !session.accepting() || (stop && stop()); }, &stopped);
  if (!error.empty()) session.read_failed(error);
  else if (stopped) session.stopped();  // not when the file had ended first: a cut file is still called cut
  TraceOutcome outcome = session.finish();
  if (outcome.run && outcome.run->input.format == "emt" && still_recording(path))
    outcome.notes.push_back(fmt::format(
        "warning: {}: a process is still writing this recording (it holds the file's lock): what is live at its "
        "end may yet be freed; analyse it again once the process has exited",
        path));
  return outcome;
}

}  // namespace edgemem
