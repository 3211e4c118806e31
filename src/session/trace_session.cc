#include "edgemem/trace_session.h"

#include <fmt/format.h>

#include "static/elf_symbolizer.h"

namespace edgemem {
namespace {

std::string where(const std::string& path, const DecodeProblem& p) {
  return p.line ? fmt::format("{}:{}", path, p.line) : fmt::format("{}: offset {}", path, p.offset);
}

// The analyzer first, then the tap.
class TappedSink final : public EventSink {
 public:
  TappedSink(EventSink& analyzer, const TraceContext& context,
             const std::function<void(const Event&, const TraceContext&)>& tap)
      : analyzer_(analyzer), context_(context), tap_(tap) {}
  void on_event(const Event& event) override {
    analyzer_.on_event(event);
    tap_(event, context_);
  }

 private:
  EventSink& analyzer_;
  const TraceContext& context_;
  const std::function<void(const Event&, const TraceContext&)>& tap_;
};

}  // namespace

struct TraceSession::Impl {
  Impl(std::string n, TraceSessionOptions o)
      : name(std::move(n)), options(std::move(o)), analyzer(context, options.analyzer),
        tapped(analyzer, context, options.event_tap) {}

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

  bool start() {
    Format f = options.format;
    if (f == Format::automatic) {
      // The same window however the bytes arrived (a file in 1 MiB reads, a pipe in 64 KiB).
      SniffVerdict verdict = sniff_trace(std::span<const uint8_t>(head).first(std::min(head.size(), kSniffBytes)));
      if (!verdict.format) {
        refusal = verdict.refusal(name);
        return false;
      }
      f = *verdict.format;
    } else {
      // Forced: said when the bytes positively show another format, so
      // findings decoded the wrong way are not taken at face value.
      SniffVerdict verdict = sniff_trace(std::span<const uint8_t>(head).first(std::min(head.size(), kSniffBytes)));
      if (verdict.format && *verdict.format != f &&
          !(f == Format::itm && *verdict.format == Format::tpiu) && !(f == Format::tpiu && *verdict.format == Format::itm))
        notes.push_back(fmt::format("warning: {}: decoded as --format {} as asked, but its bytes look like {}; "
                                    "without --format it would be read as {}",
                                    name, to_string(f), to_string(*verdict.format), to_string(*verdict.format)));
    }
    EventSink& sink = options.event_tap ? static_cast<EventSink&>(tapped) : analyzer;
    decoder = make_decoder(f, context, sink, options.decoder);
    decoder->feed(head);
    head.clear();
    return true;
  }

  TraceOutcome finish() {
    TraceOutcome out;
    if (!fatal.empty()) {
      out.notes.push_back(fatal);
      return out;
    }
    out.notes = std::move(notes);
    if (read_failed && !decoder && head.empty()) return out;
    if (!decoder && refusal.empty()) start();
    if (!decoder) {
      out.notes.push_back(refusal);
      return out;
    }
    decoder->finish();
    if (symbolizer) symbolizer->symbolize(context.sites);
    analyzer.set_trace_clock(decoder->clock_hz());
    TraceRun run{{name, std::string(decoder->format_name()), decoder->stats(), context.time_base}, analyzer.finish()};
    const DecodeStats& s = run.input.stats;
    if (s.events == 0) {
      if (s.first_problem)
        out.notes.push_back(fmt::format("{}: {} (as --format {}); no memory events decoded", where(name, *s.first_problem),
                                        s.first_problem->what, run.input.format));
      else if (s.bytes == 0)
        out.notes.push_back(fmt::format("{}: empty input, expected a trace", name));
      else
        out.notes.push_back(fmt::format("{}: no memory events found in {} bytes as --format {} (expected [MEM] lines, "
                                        "seed binary records, emt or ITM packets)", name, s.bytes, run.input.format));
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
  if (impl_->decoder) {
    impl_->decoder->feed(bytes);
    return;
  }
  impl_->head.insert(impl_->head.end(), bytes.begin(), bytes.end());
  if (impl_->head.size() < kSniffBytes && impl_->options.format == Format::automatic) return;
  impl_->start();
}

void TraceSession::read_failed(const std::string& error) {
  impl_->read_failed = true;
  impl_->notes.push_back(fmt::format("{}: {}", impl_->name, error));
}

bool TraceSession::start_if_known() {
  if (impl_->decoder) return true;
  if (!accepting() || impl_->head.empty()) return false;
  if (impl_->options.format == Format::automatic) {
    SniffVerdict verdict = sniff_trace(impl_->head);
    if (verdict.other_kind) impl_->refusal = verdict.refusal(impl_->name);
    if (!verdict.format) return false;
  }
  return impl_->start();
}

std::string TraceSession::undecided() const {
  if (impl_->decoder || impl_->head.empty() || !accepting()) return {};
  return fmt::format("{} bytes so far: {}", impl_->head.size(), sniff_trace(impl_->head).looks_like);
}

Analyzer& TraceSession::analyzer() { return impl_->analyzer; }

std::optional<TraceRun> TraceSession::snapshot() {
  if (!impl_->decoder) return std::nullopt;
  impl_->analyzer.set_trace_clock(impl_->decoder->clock_hz());
  const Decoder& d = *impl_->decoder;
  return TraceRun{{impl_->name, std::string(d.format_name()), d.progress(), impl_->context.time_base},
                  impl_->analyzer.snapshot()};
}

TraceOutcome TraceSession::finish() { return impl_->finish(); }

TraceOutcome analyse_trace_file(const std::string& path, TraceSessionOptions options, const std::function<bool()>& stop,
                                const std::function<void(uint64_t)>& progress) {
  TraceSession session(path, std::move(options));
  if (!session.accepting()) return session.finish();
  uint64_t total = 0;
  std::string error = read_chunks(
      path,
      [&](std::span<const uint8_t> bytes) {
        session.feed(bytes);
        total += bytes.size();
        if (progress) progress(total);
      },
      stop);
  if (!error.empty()) session.read_failed(error);
  return session.finish();
}

}  // namespace edgemem
