// `edgemem record`'s eBPF path: bpftrace's output read in any split, the
// recording it writes read back by the emt decoder, and real runs as root
// (a process that ptrace cannot attach to, a function named as the
// inference) analysed as `analyze` does.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "edgemem/report.h"
#include "edgemem/trace_session.h"
#include "record/ebpf_elf_functions.h"
#include "record/ebpf_emt_writer.h"
#include "record/ebpf_output_parser.h"
#include "record/ebpf_process_maps.h"
#include "record/ebpf_recorder.h"
#include "record/ebpf_recording.h"
#include "record/ebpf_script.h"
#include "record/inference_function.h"
#include "record/mmap_watch.h"
#include "record/unprobed_libraries.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

namespace fs = std::filesystem;

const std::string kProgram = std::string(EDGEMEM_RECORD_PROGRAMS) + "/record_leak_per_call";

fs::path scratch(const std::string& name) {
  const fs::path dir = test::scratch_dir("edgemem-ebpf-test");
  return dir / name;
}

// Runs a shell command in the background, its output into `log`.
pid_t start(const std::string& command, const fs::path& log) {
  // There before the child's shell opens it: a test polling it under load
  // read a file not yet made, failed at once, and left the program it
  // attached to running (ctest then waited 30 min for its output to close).
  std::ofstream{log};
  pid_t pid = fork();
  if (pid == 0) {
    std::string line = command + " >" + log.string() + " 2>&1";
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string leak_line() {
  std::ifstream source(std::string(EDGEMEM_SOURCE_DIR) + "/tests/record/programs/leak_per_call.c");
  std::string line;
  for (int n = 1; std::getline(source, line); ++n)
    if (line.find("record-test: leak per call") != std::string::npos) return "leak_per_call.c:" + std::to_string(n);
  return "?";
}

const SiteLeak* leak_at(const AnalysisResult& r, const std::string& innermost) {
  for (const SiteLeak& l : r.leaks)
    if (l.site.ends_with(innermost)) return &l;
  return nullptr;
}

// "A TID NSECS SIZE ALIGN PTR CPU" + stack, an F line, a realloc, mmap,
// munmap, mremap and mprotect, a CPU's heartbeat, bpftrace's loss and attach
// notices: the same records whichever way the bytes are split.
TEST(EbpfRecord, BpftraceOutputSplitAnywhereGivesTheSameRecords) {
  const std::string text =
      "Attaching 12 probes...\nREADY 1\n"
      "A 41 1000 128 0 94700105673344 1\n\n\t5620f256f187 0x5620f256f187 ([unknown])\n\t7f8f6bdb224a 0x7f8f6bdb224a ([unknown])\n\n"
      "F 41 2000 94700105673344 0\n"
      "R 41 3000 3100 4096 64 8192 1\n\n\t5620f256f1ae 0x5620f256f1ae ([unknown])\n\n"
      "P 42 4000 100 64 12 0 1\n\n\t5620f256f1e9 0x5620f256f1e9 ([unknown])\n\n"
      "M 41 4100 65536 139637976727552 3 1\n\n\t5620f256f200 0x5620f256f200 ([unknown])\n\n"
      "U 41 4200 139637976727552 16384 -1 1\n\n\t5620f256f210 0x5620f256f210 ([unknown])\n\n"
      "X 41 4300 4400 139637976727552 65536 131072 18446744073709551615 5 1\n\n\t5620f256f220 0x5620f256f220 ([unknown])\n\n"
      "V 41 4500 139637976727552 4096 0 0 1\n\n\t5620f256f230 0x5620f256f230 ([unknown])\n\n"
      "X 41 4600 4700 139637976727552 65536 131072 139637976858624 1 1\n\n\t5620f256f240 0x5620f256f240 ([unknown])\n\n"
      "B 41 5000 1\nE 41 6000 1\nH 6100 3\nLost 7 events\nREADY 2\n__BPFTRACE_NOTIFY_PROBES_ATTACHED\n";
  auto parse = [&](size_t piece) {
    BpftraceOutputParser p;
    std::vector<UprobeRecord> out;
    for (size_t at = 0; at < text.size(); at += piece) p.feed(std::string_view(text).substr(at, piece), out);
    p.finish(out);
    EXPECT_TRUE(p.ready());
    EXPECT_TRUE(p.probes_attached());  // (bpftrace 0.23 on says it on standard output)
    EXPECT_EQ(p.lost_events(), 7u);
    EXPECT_EQ(p.other_lines(), 0u) << p.first_other_line();
    return out;
  };
  std::vector<UprobeRecord> whole = parse(text.size());
  using K = UprobeRecord::Kind;
  ASSERT_EQ(whole.size(), 13u);
  EXPECT_EQ(whole[0].kind, K::alloc);
  EXPECT_EQ(whole[0].size, 128u);
  EXPECT_EQ(whole[0].address, 94700105673344u);  // the CPU is not read as the block
  EXPECT_EQ(whole[0].cpu, 1);
  EXPECT_EQ(whole[1].cpu, 0);
  EXPECT_EQ(whole[0].stack, (std::vector<uint64_t>{0x5620f256f187, 0x7f8f6bdb224a}));
  EXPECT_EQ(whole[1].kind, K::free);
  // realloc: the free of 4096 when it was entered, the new block when it returned.
  EXPECT_EQ(whole[2].kind, K::free);
  EXPECT_EQ(whole[2].address, 4096u);
  EXPECT_EQ(whole[2].time, 3000u);
  EXPECT_EQ(whole[3].kind, K::alloc);
  EXPECT_EQ(whole[3].address, 8192u);
  EXPECT_EQ(whole[3].time, 3100u);
  EXPECT_EQ(whole[3].stack.size(), 1u);
  EXPECT_EQ(whole[4].kind, K::alloc_failed);  // posix_memalign returned ENOMEM (12)
  EXPECT_FALSE(whole[4].mapping);
  // An anonymous mmap, a failed munmap of its head, a failed mremap of it.
  const uint64_t mapped = 139637976727552;
  EXPECT_EQ(whole[5].kind, K::alloc);
  EXPECT_TRUE(whole[5].mapping);
  EXPECT_EQ(whole[5].address, mapped);
  EXPECT_EQ(whole[5].size, 65536u);
  EXPECT_FALSE(whole[5].reserved);  // PROT_READ | PROT_WRITE
  EXPECT_EQ(whole[6].kind, K::unmap);
  EXPECT_EQ(whole[6].size, 16384u);
  EXPECT_EQ(whole[6].result, -1);
  // The failed mremap changed no mapping: no record (its stack is read past).
  // Its first page made PROT_NONE (a guard page).
  EXPECT_EQ(whole[7].kind, K::protect);
  EXPECT_EQ(whole[7].address, mapped);
  EXPECT_EQ(whole[7].size, 4096u);
  EXPECT_TRUE(whole[7].reserved);
  EXPECT_EQ(whole[7].result, 0);
  EXPECT_EQ(whole[7].stack, (std::vector<uint64_t>{0x5620f256f230}));
  // One that moved it: the old range leaves the recorded mappings, the new one is made.
  EXPECT_EQ(whole[8].kind, K::remap_from);
  EXPECT_EQ(whole[8].time, 4600u);
  EXPECT_EQ(whole[8].size, 65536u);  // the old length: the range that leaves the recorded mappings
  // Its line's stack: what is left of the mapping is made again at it (it had none; found in review).
  EXPECT_EQ(whole[8].stack, (std::vector<uint64_t>{0x5620f256f240}));
  EXPECT_EQ(whole[9].kind, K::remap_to);
  EXPECT_EQ(whole[9].time, 4700u);
  EXPECT_EQ(whole[9].address, 139637976858624u);
  EXPECT_EQ(whole[9].size, 131072u);
  EXPECT_EQ(whole[9].old, mapped);
  EXPECT_FALSE(whole[9].keeps_old);  // MREMAP_MAYMOVE (1) only
  for (size_t i = 5; i <= 9; ++i) EXPECT_TRUE(whole[i].mapping) << i;
  EXPECT_EQ(whole[10].kind, K::inference_enter);
  EXPECT_EQ(whole[11].kind, K::inference_leave);
  EXPECT_EQ(whole[12].kind, K::heartbeat);
  EXPECT_EQ(whole[12].time, 6100u);
  EXPECT_EQ(whole[12].cpu, 3);
  for (size_t piece : {1, 2, 3, 7, 13, 64}) {
    std::vector<UprobeRecord> split = parse(piece);
    ASSERT_EQ(split.size(), whole.size()) << piece;
    for (size_t i = 0; i < split.size(); ++i) {
      EXPECT_EQ(split[i].kind, whole[i].kind) << piece;
      EXPECT_EQ(split[i].cpu, whole[i].cpu) << piece;
      EXPECT_EQ(split[i].mapping, whole[i].mapping) << piece;
      EXPECT_EQ(split[i].address, whole[i].address) << piece;
      EXPECT_EQ(split[i].size, whole[i].size) << piece;
      EXPECT_EQ(split[i].old, whole[i].old) << piece;
      EXPECT_EQ(split[i].result, whole[i].result) << piece;
      EXPECT_EQ(split[i].reserved, whole[i].reserved) << piece;
      EXPECT_EQ(split[i].stack, whole[i].stack) << piece;
    }
  }
}

// bpftrace read CPU 1's buffer 20 s ahead of CPU 0's (seen on a loaded
// machine): a free from CPU 1 arrives before the allocation CPU 0 made
// earlier. It is written after it, once CPU 0 has been read past it, so
// the block is not left live (a false leak) and its free is not unknown.
// new(0) read 0 B where the preload records the 1 B libstdc++ asks malloc for.
TEST(EbpfRecord, ANewOfNothingIsOneByteAsThePreloadRecordsIt) {
  BpftraceOutputParser p;
  std::vector<UprobeRecord> out;
  p.feed("N 41 1000 0 0 94700105673344 94700105673000 1\n\n\t5620f256f187 0x5620f256f187 ([unknown])\n\n"
         "N 41 2000 24 0 94700105673400 94700105673000 1\n\n\t5620f256f187 0x5620f256f187 ([unknown])\n\n",
         out);
  p.finish(out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].size, 1u);
  EXPECT_EQ(out[1].size, 24u);
}

TEST(EbpfRecord, ACpuReadSecondsAheadWaitsForTheOthersBeforeItsRecordsAreWritten) {
  auto run = [](size_t max_waiting) {
    fs::path out = scratch(fmt::format("order-{}.emt", max_waiting));
    EmtV2FileWriter w;
    std::string error;
    EXPECT_TRUE(w.open(out.string(), error)) << error;
    UprobeRecording recording(w, getpid(), 2);
    const uint32_t tid = static_cast<uint32_t>(getpid());
    auto record = [&](UprobeRecord::Kind kind, double seconds, int cpu, uint64_t address = 0, uint64_t size = 0) {
      UprobeRecord r;
      r.kind = kind;
      r.tid = tid;
      r.cpu = cpu;
      r.time = static_cast<uint64_t>(seconds * 1e9);
      r.address = address;
      r.size = size;
      recording.add(r);
      recording.write_settled(1'000'000'000, max_waiting);
    };
    using K = UprobeRecord::Kind;
    record(K::heartbeat, 0.5, 0);
    record(K::free, 1.5, 1, 0x5000);
    for (int t = 2; t <= 20; ++t) record(K::heartbeat, t, 1);
    record(K::alloc, 1.0, 0, 0x5000, 644);
    record(K::heartbeat, 20.0, 0);
    recording.finish();
    EXPECT_TRUE(w.close(error)) << error;
    return std::pair{recording.stats(), read_file(out.string())};
  };
  auto [held, bytes] = run(size_t{1} << 18);
  EXPECT_EQ(held.allocations, 1u);
  EXPECT_EQ(held.unknown_frees, 0u);
  auto live_at_end = [](const std::string& recording) {
    auto analysed = analyse(Format::emt, recording);
    uint64_t bytes = 0;
    for (const PoolSummary& p : analysed->result.pools) bytes += p.final_bytes;
    return std::pair{bytes, analysed->result.counts.frees};
  };
  EXPECT_EQ(live_at_end(bytes), std::pair(uint64_t{0}, uint64_t{1}));
  // Holding nothing, the free goes out before its allocation arrives: the
  // case the wait is for (the block stays live, its free unknown).
  auto [unheld, unheld_bytes] = run(0);
  EXPECT_EQ(unheld.unknown_frees, 1u);
  EXPECT_EQ(live_at_end(unheld_bytes), std::pair(uint64_t{644}, uint64_t{0}));
}

// Records written from outside the process come back from the decoder as
// the preload's do: in order, with their thread, stack node and inference
// markers, and lost events counted as lost records.
TEST(EbpfRecord, ARecordingWrittenFromOutsideDecodesInOrderWithItsLosses) {
  fs::path out = scratch("writer.emt");
  {
    EmtV2FileWriter w;
    std::string error;
    ASSERT_TRUE(w.open(out.string(), error)) << error;
    w.wall(1, 2);
    const uint64_t stack[] = {0x401234, 0x401000};
    w.inference(7, "main", true, 1);
    w.alloc(7, "main", 0x5000, 128, 0, stack);
    w.alloc(8, "worker", 0x6000, 64, 16, stack);
    w.free(8, "worker", 0x6000);
    w.lost(3);
    w.inference(7, "main", false, 1);
    ASSERT_TRUE(w.close(error)) << error;
  }
  TraceContext context;
  Recorder sink;
  auto decoder = make_decoder(Format::emt, context, sink);
  std::string bytes = read_file(out.string());
  decoder->feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  decoder->finish();
  ASSERT_EQ(sink.events.size(), 5u);
  EXPECT_EQ(sink.events[0].kind, EventKind::inference_begin);
  EXPECT_EQ(sink.events[1].kind, EventKind::alloc);
  EXPECT_EQ(sink.events[1].thread, 7u);
  EXPECT_EQ(sink.events[1].address, 0x5000u);
  EXPECT_EQ(context.sites.name(sink.events[1].site), "0x401000;0x401234");
  EXPECT_EQ(sink.events[2].thread, 8u);
  EXPECT_EQ(sink.events[2].align, 16u);
  EXPECT_EQ(sink.events[3].kind, EventKind::free);
  EXPECT_EQ(sink.events[3].address, 0x6000u);
  EXPECT_EQ(sink.events[4].kind, EventKind::inference_end);
  EXPECT_EQ(decoder->stats().dropped_records, 3u);
}

TEST(EbpfRecord, AFunctionIsFoundByItsNameAndAMisspellingGetsASuggestion) {
  std::string error;
  auto elf = read_elf_functions(kProgram, error);
  ASSERT_TRUE(elf) << error;
  ASSERT_TRUE(elf->find_user_named("infer_once"));
  EXPECT_FALSE(elf->find_user_named("infer_onse"));
  EXPECT_EQ(elf->nearest("infer_onse"), "infer_once");
  // A C++ function by its unqualified name, whatever its parameters.
  auto loop = read_elf_functions(EDGEMEM_INFERENCE_LOOP, error);
  ASSERT_TRUE(loop) << error;
  const ElfFunction* f = loop->find_user_named("run_inference");
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->name.starts_with("_Z")) << f->name;
}

// Overloads: nn::Model::run(double) and run(int). The probe went on the
// first one found and counted 1 call of 26 (a helper's program); the name
// now finds both, and a whole signature or the symbol one.
TEST(EbpfRecord, AnOverloadedNameFindsEveryOverload) {
  ElfFunctions elf;
  elf.functions = {{"_ZN2nn5Model3runEd", "nn::Model::run(double)", 0x1000},
                   {"_ZN2nn5Model3runEi", "nn::Model::run(int)", 0x1100},
                   {"_ZN2nn5Model4initEv", "nn::Model::init()", 0x1200}};
  EXPECT_EQ(elf.all_user_named("nn::Model::run").size(), 2u);
  EXPECT_EQ(elf.all_user_named("run").size(), 2u);
  ASSERT_EQ(elf.all_user_named("nn::Model::run(int)").size(), 1u);
  EXPECT_EQ(elf.all_user_named("nn::Model::run(int)")[0]->address, 0x1100u);
  EXPECT_EQ(elf.all_user_named("_ZN2nn5Model3runEd").size(), 1u);
  EXPECT_EQ(elf.all_user_named("init").size(), 1u);
  std::string error;
  const std::string program = std::string(EDGEMEM_INFERENCE_LOOP);
  EXPECT_TRUE(find_inference_function("run_inference", {program}, error)) << error;
}

// pvalloc rounds its request up to whole pages, and the preload records
// the block that way: the eBPF script read pvalloc(100) as 100 B, the
// preload as 4,096 B. A request within a page of 2^64 stays as asked.
TEST(EbpfRecord, PvallocIsRecordedInWholePagesAsThePreloadRecordsIt) {
  UprobeTargets t;
  t.pid = 4242;
  t.allocators = {{"/usr/lib/x86_64-linux-gnu/libc.so.6", "pvalloc"}};
  const std::string script = bpftrace_script(t);
  const long page = sysconf(_SC_PAGESIZE);
  EXPECT_NE(script.find(fmt::format("if (arg0 == 0) {{ @size[tid] = {0}; }} else if (arg0 + {1} > arg0) {{ @size[tid] = "
                                    "(arg0 + {1}) / {0} * {0}; }}",
                                    page, page - 1)),
            std::string::npos)
      << script;
}

// libstdc++'s path holds '+', which bpftrace's probe syntax takes for an
// operator unless the path is quoted; every probe is limited to the process.
// Operator new has no return probe (C++ exceptions cannot unwind through
// one), and a script without it reads none of its maps (bpftrace refuses
// a map never written: the C program's attach failed).
TEST(EbpfRecord, TheScriptQuotesAPathBpftraceCannotReadBare) {
  UprobeTargets t;
  t.pid = 4242;
  t.allocators = {{"/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc"},
                  {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "_Znwm"}};
  std::string script = bpftrace_script(t);
  EXPECT_NE(script.find("uprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:malloc /pid == 4242"), std::string::npos) << script;
  EXPECT_NE(script.find("uprobe:\"/usr/lib/x86_64-linux-gnu/libstdc++.so.6\":_Znwm /pid == 4242"), std::string::npos)
      << script;
  EXPECT_EQ(script.find("uretprobe:\"/usr/lib/x86_64-linux-gnu/libstdc++.so.6\""), std::string::npos) << script;
  t.allocators = {{"/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc"}, {"/usr/lib/x86_64-linux-gnu/libc.so.6", "memalign"}};
  EXPECT_EQ(bpftrace_script(t).find("@n"), std::string::npos) << bpftrace_script(t);
}

#define SKIP_WITHOUT_UPROBES()                                                       \
  if (std::string why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;

// Ctrl-C while attached to a process that runs on and allocates all the
// An eBPF attach marks its recording as the preload's attach does: ATTACHED,
// and a free of each block made before it, counted, not placed. A uprobe
// sees no size: the report says so instead of "0 B" (before, the recording
// read as the whole heap's, with no word of the attach).
TEST(EbpfRecord, AnAttachIsSaidAndItsEarlierBlocksFreesCountedWithoutSizes) {
  fs::path out = scratch("ebpf-attach.emt");
  {
    EmtV2FileWriter w;
    std::string error;
    ASSERT_TRUE(w.open(out.string(), error)) << error;
    UprobeRecording recording(w, getpid(), 1);
    recording.attached();
    auto record = [&](UprobeRecord::Kind kind, uint64_t time, uint64_t address, uint64_t size = 0) {
      UprobeRecord r;
      r.kind = kind;
      r.tid = static_cast<uint32_t>(getpid());
      r.time = time;
      r.address = address;
      r.size = size;
      recording.add(r);
    };
    using K = UprobeRecord::Kind;
    record(K::alloc, 10, 0x5000, 300);
    record(K::free, 20, 0x9000);  // made before the attach
    record(K::free, 30, 0x9100);
    record(K::free, 40, 0x5000);
    recording.finish();
    EXPECT_EQ(recording.stats().unknown_frees, 2u);
    ASSERT_TRUE(w.close(error)) << error;
  }
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  const DecodeStats& s = outcome.run->input.stats;
  EXPECT_TRUE(s.attached);
  EXPECT_EQ(s.frees_before_attach, 2u);
  EXPECT_EQ(s.bytes_freed_before_attach, 0u);
  EXPECT_EQ(outcome.run->result.counts.frees, 1u);
  const std::string text = text_report(outcome.run->input, outcome.run->result);
  EXPECT_NE(text.find("2 frees (their sizes not known: the eBPF recorder sees only the address a free is given)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("(0 B"), std::string::npos) << text;
}

// time: the recording ends in seconds (its output is never quiet, and the
// CPUs' heartbeats go on), the process keeps running, and the recording
// holds its allocations up to the stop with nothing lost. The recorder runs
// on unprobed copies of its libraries: on the probed ones its own
// allocations trapped, and it held 0 of the ~12,000 made in 4 s, or lost
// most of them once bpftrace ran on copies.
TEST(EbpfRecord, StoppingAnAttachedRecordingEndsItWhileTheProcessRunsOn) {
  SKIP_WITHOUT_UPROBES();
  fs::path out = scratch("stopped.emt"), log = scratch("stopped.log");
  pid_t program = fork();
  if (program == 0) {
    execl(EDGEMEM_INFERENCE_LOOP, "inference_loop", "--inferences", "100000", "--pace-ms", "10", static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t recorder =
      start(fmt::format("exec {} record --via ebpf --pid {} -o {}", EDGEMEM_BINARY, program, out.string()), log);
  bool attached = false;
  for (int i = 0; i < 1200 && !attached; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    attached = read_file(log.string()).find("recording process") != std::string::npos;
  }
  const std::string recorder_maps = read_file(fmt::format("/proc/{}/maps", recorder));
  std::this_thread::sleep_for(std::chrono::seconds(4));
  kill(recorder, SIGINT);  // Ctrl-C
  int status = 0;
  bool ended = false;
  for (int i = 0; i < 300 && !ended; ++i) {  // 30 s
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ended = waitpid(recorder, &status, WNOHANG) == recorder;
  }
  const bool running = kill(program, 0) == 0;
  kill(program, SIGKILL);  // frees a recorder that hung (bpftrace ends with its process)
  waitpid(program, nullptr, 0);
  if (!ended) waitpid(recorder, &status, 0);
  std::string said = read_file(log.string());
  ASSERT_TRUE(attached) << said;
  EXPECT_TRUE(ended) << "the recording went on for 30 s after Ctrl-C: " << said;
  EXPECT_TRUE(running);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << said;
  EXPECT_NE(said.find("recorded "), std::string::npos) << said;
  EXPECT_EQ(said.find("DATA LOSS"), std::string::npos) << said;
  EXPECT_NE(recorder_maps.find("/edgemem-unprobed-"), std::string::npos) << recorder_maps;
  EXPECT_EQ(recorder_maps.find(find_libc(read_mapped_objects(getpid()))), std::string::npos) << recorder_maps;
  // ~38 allocations an inference, one inference every 10 ms or more
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  EXPECT_GE(outcome.run->result.counts.allocs, 1000u) << said;
  // Frees of blocks made before the attach: the few an inference holds at
  // once. (bpftrace detaches malloc's probes before free's when told to
  // stop: what came after that was ~4,000 frees of blocks never seen
  // allocated, in most runs.)
  std::smatch unknown;
  if (std::regex_search(said, unknown, std::regex(R"((\d+) frees were of blocks allocated before)"))) {
    EXPECT_LT(std::stoul(unknown[1]), 200u) << said;
  }
  // The copies are gone once bpftrace has started.
  const size_t at = recorder_maps.find("/edgemem-unprobed-");
  ASSERT_NE(at, std::string::npos);
  const size_t from = recorder_maps.rfind(' ', at) + 1;
  const std::string copies = recorder_maps.substr(from, recorder_maps.find('/', at + 1) - from);
  EXPECT_FALSE(fs::exists(copies)) << copies;
}

// The environment the first run hands its new image, applied here as the
// exec would: the three variables it sets, and none it leaves out.
UnprobedLibraries adopt_as_run_again(const std::vector<std::string>& env) {
  for (const char* name : {"LD_LIBRARY_PATH", "EDGEMEM_UNPROBED_LIBRARIES", "EDGEMEM_UNPROBED_LD_LIBRARY_PATH"}) {
    unsetenv(name);
    for (const std::string& e : env)
      if (e.starts_with(std::string(name) + "=")) setenv(name, e.substr(e.find('=') + 1).c_str(), 1);
  }
  return UnprobedLibraries::adopt();
}

std::optional<std::string> env_of(const char* name) {
  const char* v = getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

// The copies are of the libraries this process runs on, under their
// sonames; running again on them puts them first on the library path, and
// the run again gives the programs it starts the path the first run had:
// set, set but empty, or unset.
TEST(EbpfRecord, TheRecorderRunsAgainOnCopiesOfItsLibrariesAndItsProgramsOnTheOriginals) {
  const std::optional<std::string> saved = env_of("LD_LIBRARY_PATH");
  const std::string libc = find_libc(read_mapped_objects(getpid()));
  for (const std::optional<std::string>& was : {std::optional<std::string>("/opt/was"), std::optional<std::string>(""),
                                                std::optional<std::string>()}) {
    SCOPED_TRACE(was ? "LD_LIBRARY_PATH=" + *was : "no LD_LIBRARY_PATH");
    if (was) setenv("LD_LIBRARY_PATH", was->c_str(), 1);
    else unsetenv("LD_LIBRARY_PATH");
    std::string why;
    std::optional<UnprobedLibraries> copies = UnprobedLibraries::copy_own(why);
    ASSERT_TRUE(copies) << why;
    const std::string dir = copies->directory();
    EXPECT_EQ(read_file(dir + "/libc.so.6"), read_file(libc));
    EXPECT_TRUE(fs::exists(dir + "/libstdc++.so.6"));
    const std::vector<std::string> env = copies->environment_for_run_again();
    const std::string path = was && !was->empty() ? dir + ":" + *was : dir;  // never an empty entry
    EXPECT_EQ(std::count(env.begin(), env.end(), "LD_LIBRARY_PATH=" + path), 1);
    EXPECT_EQ(std::count_if(env.begin(), env.end(), [](const std::string& e) { return e.starts_with("LD_LIBRARY_PATH="); }), 1);

    UnprobedLibraries adopted = adopt_as_run_again(env);
    EXPECT_EQ(adopted.directory(), dir);
    EXPECT_EQ(env_of("LD_LIBRARY_PATH"), was);
    EXPECT_EQ(env_of("EDGEMEM_UNPROBED_LIBRARIES"), std::nullopt);
    EXPECT_EQ(env_of("EDGEMEM_UNPROBED_LD_LIBRARY_PATH"), std::nullopt);
    EXPECT_EQ(adopted.original(dir + "/libc.so.6"), libc);
    EXPECT_TRUE(adopted.is_copy(dir + "/libc.so.6"));
    EXPECT_EQ(adopted.original("/usr/lib/other.so"), "/usr/lib/other.so");
    EXPECT_EQ(UnprobedLibraries::adopt().directory(), "") << "told once";
    adopted.remove();
    EXPECT_FALSE(fs::exists(dir));
  }

  // A value this process's previous image did not write (inherited, or set
  // by hand) is not taken, and nothing it names is removed.
  std::string why;
  std::optional<UnprobedLibraries> copies = UnprobedLibraries::copy_own(why);
  ASSERT_TRUE(copies) << why;
  std::vector<std::string> env = copies->environment_for_run_again();
  for (std::string& e : env)
    if (e.starts_with("EDGEMEM_UNPROBED_LIBRARIES=")) e.replace(e.find('=') + 1, std::to_string(getpid()).size(), std::string(std::to_string(getpid()).size(), '0'));
  {
    UnprobedLibraries foreign = adopt_as_run_again(env);
    EXPECT_EQ(foreign.directory(), "");
    EXPECT_FALSE(foreign.ran_again());
  }
  EXPECT_TRUE(fs::exists(copies->directory() + "/libc.so.6"));
  // Written by this image but naming no directory it can take (gone, say):
  // still the run again, which must not run again itself (it would copy
  // and exec for ever), with the user's library path back (none, when
  // these copies were made).
  env = copies->environment_for_run_again();
  for (std::string& e : env)
    if (e.starts_with("EDGEMEM_UNPROBED_LIBRARIES=")) e.replace(e.find(copies->directory()), copies->directory().size(), "/nonexistent/edgemem-unprobed-gone");
  {
    UnprobedLibraries gone = adopt_as_run_again(env);
    EXPECT_EQ(gone.directory(), "");
    EXPECT_TRUE(gone.ran_again());
    EXPECT_EQ(env_of("LD_LIBRARY_PATH"), std::nullopt);
  }
  if (saved) setenv("LD_LIBRARY_PATH", saved->c_str(), 1);
  else unsetenv("LD_LIBRARY_PATH");
}

// Where the copies cannot be loaded (a noexec mount for TMPDIR), there are
// none, and nothing is left behind: the recording runs on the probed files.
TEST(EbpfRecord, CopiesANoexecMountCannotLoadAreNotMade) {
  fs::path mount_point = scratch("noexec");
  fs::create_directories(mount_point);
  if (mount("tmpfs", mount_point.c_str(), "tmpfs", MS_NOEXEC, "size=64m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << strerror(errno);
  const std::optional<std::string> saved = env_of("TMPDIR");
  setenv("TMPDIR", mount_point.c_str(), 1);
  std::string why;
  std::optional<UnprobedLibraries> copies = UnprobedLibraries::copy_own(why);
  if (saved) setenv("TMPDIR", saved->c_str(), 1);
  else unsetenv("TMPDIR");
  EXPECT_FALSE(copies);
  EXPECT_NE(why.find("cannot map"), std::string::npos) << why;
  EXPECT_TRUE(fs::is_empty(mount_point));
  umount2(mount_point.c_str(), MNT_DETACH);
}

// A program `record --via ebpf` starts runs on the original libraries (it
// is probed: its allocations are recorded) with the user's library path,
// and does not see how edgemem ran itself.
TEST(EbpfRecord, AProgramItStartsHasTheUsersLibraryPathAndTheProbedLibraries) {
  SKIP_WITHOUT_UPROBES();
  fs::path out = scratch("started-env.emt"), log = scratch("started-env.log");
  pid_t recorder = start(fmt::format("LD_LIBRARY_PATH=/opt/edgemem-test exec {} record --via ebpf -o {} -- /bin/sh -c "
                                     "'echo \"path=$LD_LIBRARY_PATH told=${{EDGEMEM_UNPROBED_LIBRARIES:-none}}\"; "
                                     "echo \"copies mapped: $(grep -c edgemem-unprobed /proc/$$/maps)\"'",
                                     EDGEMEM_BINARY, out.string()),
                         log);
  EXPECT_EQ(exit_status(recorder), 0);
  std::string said = read_file(log.string());
  EXPECT_NE(said.find("path=/opt/edgemem-test told=none"), std::string::npos) << said;
  EXPECT_NE(said.find("copies mapped: 0"), std::string::npos) << said;
  EXPECT_EQ(said.find("run on the probed libraries"), std::string::npos) << said;
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  EXPECT_GT(outcome.run->result.counts.allocs, 0u) << said;
}

// The program is already traced (by this test, as strace or a debugger
// would), so gdb's ptrace attach is refused: record --pid falls back to
// uprobes. The 10 blocks allocated before the attach and freed after are
// counted as unknown frees; every leak made after it is found with its
// exact bytes and count at its line.
TEST(EbpfRecord, WherePtraceIsRefusedAttachFallsBackToUprobesAndFindsTheLeak) {
  SKIP_WITHOUT_UPROBES();
  fs::path go = scratch("go"), out = scratch("fallback.emt"), log = scratch("fallback.log");
  fs::remove(go);
  pid_t program = fork();
  if (program == 0) {
    execl(kProgram.c_str(), "record_leak_per_call", "40", go.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_EQ(ptrace(PTRACE_SEIZE, program, nullptr, nullptr), 0) << strerror(errno);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // past its 10 early allocations
  pid_t recorder = start(fmt::format("{} record --pid {} -o {}", EDGEMEM_BINARY, program, out.string()), log);
  bool attached = false;
  for (int i = 0; i < 600 && !attached; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    attached = read_file(log.string()).find("recording process") != std::string::npos;
  }
  std::ofstream(go.string()) << "go\n";
  int status = 0;
  while (waitpid(program, &status, 0) == program && WIFSTOPPED(status))
    ptrace(PTRACE_CONT, program, nullptr, WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(exit_status(recorder), 0) << read_file(log.string());
  std::string said = read_file(log.string());
  ASSERT_TRUE(attached) << said;
  EXPECT_NE(said.find("ptrace refused attaching"), std::string::npos) << said;
  EXPECT_NE(said.find("recording with eBPF uprobes instead"), std::string::npos) << said;
  EXPECT_NE(said.find("10 frees were of blocks allocated before the probes were attached"), std::string::npos) << said;

  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  const AnalysisResult& r = outcome.run->result;
  const SiteLeak* leak = leak_at(r, "infer_once (" + leak_line() + ")");
  ASSERT_TRUE(leak) << (r.leaks.empty() ? "no leaks" : r.leaks[0].site);
  EXPECT_EQ(leak->bytes, 40u * 128);
  EXPECT_EQ(leak->count, 40u);
  EXPECT_TRUE(leak->site.starts_with("main (leak_per_call.c:")) << leak->site;
  EXPECT_GE(r.counts.allocs, 80u);  // each call's descriptor and scratch buffer
  // Every scratch buffer allocated while recording is freed in the
  // recording: no free went unseen while the probes were being attached.
  TraceContext context;
  Recorder sink;
  auto decoder = make_decoder(Format::emt, context, sink);
  std::string bytes = read_file(out.string());
  decoder->feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  decoder->finish();
  std::set<uint64_t> scratch_live;
  int scratch_allocs = 0;
  for (const Event& e : sink.events) {
    // (stdout's 4 KiB buffer is libc's, not the program's scratch)
    if (e.kind == EventKind::alloc && e.size == 4096 && context.sites.name(e.site).find("infer_once (") != std::string::npos) {
      ++scratch_allocs;
      scratch_live.insert(e.address);
    }
    if (e.kind == EventKind::free) scratch_live.erase(e.address);
  }
  EXPECT_EQ(scratch_allocs, 40);
  EXPECT_TRUE(scratch_live.empty()) << scratch_live.size() << " scratch buffers never freed";
}

// The program's own anonymous mappings are the "mmap" pool, as the preload
// records them: the same bytes, blocks and sites by either recorder (a
// munmap of a mapping's head leaves its tail, an mremap moves it, a thread
// routine's tail call returns from mmap into the C library, one is made
// through mmap64, which the preload once missed), and not
// malloc's own large blocks, a mapped file or the C library's thread stack.
TEST(EbpfRecord, AnonymousMappingsAreTheirOwnPoolAsThePreloadRecordsThem) {
  SKIP_WITHOUT_UPROBES();
  const std::string program = std::string(EDGEMEM_RECORD_PROGRAMS) + "/record_anonymous_maps";
  struct Pool {
    uint64_t bytes = 0, blocks = 0;
    std::set<std::string> sites;
  };
  auto mmap_pool = [&](const std::string& via) {
    fs::path out = scratch("maps-" + via + ".emt"), log = scratch("maps-" + via + ".log");
    pid_t recorder = start(fmt::format("{} record --via {} -o {} -- {}", EDGEMEM_BINARY, via, out.string(), program), log);
    EXPECT_EQ(exit_status(recorder), 0) << read_file(log.string());
    TraceOutcome outcome = analyse_trace_file(out.string(), {});
    Pool p;
    if (!outcome.run) return p;
    for (const PoolSummary& s : outcome.run->result.pools)
      if (s.name == "mmap") p = {s.final_bytes, s.live_count.value_or(0), {}};
    // What stays mapped is a leak or a block the program keeps, by its site.
    for (const SiteLeak& l : outcome.run->result.leaks)
      if (l.pool == "mmap") p.sites.insert(fmt::format("{} {} B x{}", l.site, l.bytes, l.count));
    for (const PersistentBlock& b : outcome.run->result.persistent)
      if (b.pool == "mmap") p.sites.insert(fmt::format("{} {} B x{}", b.site, b.bytes, b.count));
    return p;
  };
  Pool ebpf = mmap_pool("ebpf");
  EXPECT_EQ(ebpf.bytes, (48u + 128 + 32 + 8 + 16) << 10);
  EXPECT_EQ(ebpf.blocks, 5u);
  EXPECT_EQ(ebpf.sites.size(), 5u);
  Pool preload = mmap_pool("auto");
  EXPECT_EQ(preload.bytes, ebpf.bytes);
  EXPECT_EQ(preload.blocks, ebpf.blocks);
  EXPECT_EQ(preload.sites, ebpf.sites);
}

// The mmap pool of `program` (one of tests/record/programs) recorded with
// eBPF, as its analysis summarises it.
std::optional<PoolSummary> ebpf_mmap_pool(const std::string& program, const std::string& args = "") {
  fs::path out = scratch(program + ".emt"), log = scratch(program + ".log");
  pid_t recorder = start(fmt::format("{} record --via ebpf -o {} -- {}/{} {}", EDGEMEM_BINARY, out.string(),
                                     EDGEMEM_RECORD_PROGRAMS, program, args),
                         log);
  EXPECT_EQ(exit_status(recorder), 0) << read_file(log.string());
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  if (outcome.run)
    for (const PoolSummary& s : outcome.run->result.pools)
      if (s.name == "mmap") return s;
  return std::nullopt;
}

// Mappings cut in pieces (tests/record/programs/mmap_pieces.c), as the
// preload records them (record_test.cc): what is still mapped, by range.
TEST(EbpfRecord, MappingsCutInPiecesLeaveWhatIsStillMapped) {
  SKIP_WITHOUT_UPROBES();
  std::optional<PoolSummary> pool = ebpf_mmap_pool("record_mmap_pieces");
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->final_bytes, 2097152u + (48 + 32) * 1024 + 2 * 64 * 1024);
  EXPECT_EQ(pool->live_count, 5u);
  EXPECT_EQ(pool->peak_bytes, 4u << 20);
}

// mremap's edges, as the preload records them (record_test.cc): a refused
// growth in place leaves no trace, and a reservation shrunk past its
// committed pages holds no memory (each read 16 KiB more).
TEST(EbpfRecord, AnMremapRefusedOrShrunkPastCommittedPagesLeavesOnlyWhatIsMapped) {
  SKIP_WITHOUT_UPROBES();
  std::optional<PoolSummary> pool = ebpf_mmap_pool("record_mmap_pieces", "--mremap-edges");
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->final_bytes, 2097152u + (48 + 32) * 1024 + 2 * 64 * 1024 + (32 + 16 + 32) * 1024);
  EXPECT_EQ(pool->live_count, 9u);
}

// PROT_NONE reservations are not memory here either, and what mprotect
// commits inside them is, as the preload records it (record_test.cc): three
// committed 256 KiB pages, the 1 MiB mapping less its guard page, the 128
// KiB mapped with MAP_FIXED into a reservation, and 64 pages committed
// whole after each was committed and given back alone (one mapping: the
// pieces were joined again; in review they were 64).
TEST(EbpfRecord, ReservedAddressSpaceIsNotMemory) {
  SKIP_WITHOUT_UPROBES();
  std::optional<PoolSummary> pool = ebpf_mmap_pool("record_mmap_reserve");
  ASSERT_TRUE(pool);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t kept = 3 * 262144 + (1048576 - page) + 131072 + 64 * page;
  EXPECT_EQ(pool->final_bytes, kept);
  EXPECT_EQ(pool->peak_bytes, kept);
  EXPECT_EQ(pool->live_count, 6u);
}

// One of tests/record/programs recorded `via` a recorder ("ebpf", or "auto":
// the preload), which must exit 0, and analysed; what the recorder said.
struct ProgramRecording {
  std::string said;
  TraceOutcome outcome;
};
ProgramRecording record_program(const std::string& program, const std::string& via) {
  fs::path out = scratch(program + "-" + via + ".emt"), log = scratch(program + "-" + via + ".log");
  pid_t recorder = start(fmt::format("{} record --via {} -o {} -- {}/{}", EDGEMEM_BINARY, via, out.string(),
                                     EDGEMEM_RECORD_PROGRAMS, program),
                         log);
  ProgramRecording r;
  const int status = exit_status(recorder);
  r.said = read_file(log.string());
  EXPECT_EQ(status, 0) << r.said;
  r.outcome = analyse_trace_file(out.string(), {});
  return r;
}

// Failed requests of every C++ and C form (tests/record/programs/failed_new.cc):
// the program catches each bad_alloc and ends normally. A return probe on
// operator new once ended it in std::terminate (exit 134): the unwinder
// cannot step through the kernel's trampoline. Each failure is one failed
// allocation, new's at its caller (main), a new_handler's retry not again;
// an overflowing calloc or reallocarray at SIZE_MAX (calloc's read 4 B, and
// reallocarray's were not seen).
TEST(EbpfRecord, AProgramCatchingFailedNewsRunsOnAndEachFailureIsRecordedOnce) {
  SKIP_WITHOUT_UPROBES();
  ProgramRecording recorded = record_program("record_failed_new", "ebpf");
  EXPECT_NE(recorded.said.find("failed-new-test: 10 failed"), std::string::npos) << recorded.said;
  ASSERT_TRUE(recorded.outcome.run);
  const AnalysisResult& r = recorded.outcome.run->result;
  EXPECT_EQ(r.counts.failed, 10u);
  size_t at_main = 0, at_size_max = 0;
  for (const AllocFailure& f : r.fragmentation.failures) {
    at_main += f.site == "main" || f.site.starts_with("main (");
    at_size_max += f.size == UINT64_MAX;
  }
  EXPECT_EQ(at_main, 10u);
  EXPECT_EQ(at_size_max, 3u);  // calloc, and reallocarray of nothing and of a block
  EXPECT_TRUE(r.leaks.empty());
}

// After a failed new, requests of its size from deeper frames: each is
// its own, at its own site (tests/record/programs/new_after_failed_new.cc),
// as the preload records them. The failed new once stayed pending: a later
// failure read as its retry (lost) and a success took its stack.
TEST(EbpfRecord, RequestsAfterAFailedNewAreEachTheirOwn) {
  SKIP_WITHOUT_UPROBES();
  auto failures_and_leak = [](const std::string& via) {
    std::vector<std::string> sites;
    TraceOutcome outcome = record_program("record_new_after_failed_new", via).outcome;
    if (!outcome.run) return sites;
    for (const AllocFailure& f : outcome.run->result.fragmentation.failures) sites.push_back("failed at " + f.site);
    for (const PersistentBlock& g : outcome.run->result.persistent)
      if (g.bytes == 64) sites.push_back("64 B at " + g.site);
    return sites;
  };
  std::vector<std::string> ebpf = failures_and_leak("ebpf");
  ASSERT_EQ(ebpf.size(), 4u) << fmt::format("{}", fmt::join(ebpf, " | "));
  EXPECT_EQ(ebpf, failures_and_leak("auto"));  // the preload
  EXPECT_NE(ebpf[1].find("nothrow_below"), std::string::npos) << ebpf[1];
  EXPECT_NE(ebpf[2].find("malloc_below"), std::string::npos) << ebpf[2];
}

// A program's own operator new (tests/record/programs/replaced_new.cc),
// which libstdc++'s new[] and nothrow new call: each block at its line of
// main, as the preload names it (the caller's frame was lost, the sites
// read "operator new[];operator new").
TEST(EbpfRecord, AProgramsOwnOperatorNewKeepsTheCallersSite) {
  SKIP_WITHOUT_UPROBES();
  auto kept = [](const std::string& via) {
    std::map<std::string, uint64_t> bytes;
    TraceOutcome outcome = record_program("record_replaced_new", via).outcome;
    if (!outcome.run) return bytes;
    // The program's own blocks, made in main (not stdout's buffer below it).
    auto own = [](const std::string& site) { return site.starts_with("main (replaced_new.cc:") && site.find(';') == std::string::npos; };
    for (const SiteLeak& l : outcome.run->result.leaks)
      if (own(l.site)) bytes[l.site] += l.bytes;
    for (const PersistentBlock& p : outcome.run->result.persistent)
      if (own(p.site)) bytes[p.site] += p.bytes;
    return bytes;
  };
  std::map<std::string, uint64_t> ebpf = kept("ebpf");
  EXPECT_EQ(ebpf.size(), 3u) << (ebpf.empty() ? "none" : ebpf.begin()->first);
  EXPECT_EQ(ebpf, kept("auto"));  // the preload
}

// Each call of the named function is an inference: 25 of them, 128 B each.
TEST(EbpfRecord, EachCallOfTheInferenceFunctionIsOneInference) {
  SKIP_WITHOUT_UPROBES();
  fs::path out = scratch("inference-fn.emt"), log = scratch("inference-fn.log");
  pid_t recorder =
      start(fmt::format("{} record --via ebpf --inference-fn infer_once -o {} -- {} 25", EDGEMEM_BINARY, out.string(), kProgram), log);
  ASSERT_EQ(exit_status(recorder), 0) << read_file(log.string());
  EXPECT_NE(read_file(log.string()).find("25 calls of infer_once"), std::string::npos) << read_file(log.string());
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  const AnalysisResult& r = outcome.run->result;
  EXPECT_EQ(r.inferences, 25u);
  const SiteLeak* leak = leak_at(r, "infer_once (" + leak_line() + ")");
  ASSERT_TRUE(leak) << (r.leaks.empty() ? "no leaks" : r.leaks[0].site);
  EXPECT_EQ(leak->bytes, 25u * 128);
  EXPECT_EQ(leak->count, 25u);
  ASSERT_TRUE(leak->bytes_per_inference);
  EXPECT_NEAR(*leak->bytes_per_inference, 128.0, 0.5);
}

// CI, loaded: the program ended before its /proc maps were read and every
// frame stayed an address. The kernel's mapping records outlive the process:
// read here only after it has exited and been reaped.
TEST(EbpfRecord, AProgramThatEndsAtOnceStillHasItsModuleMap) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  if (child == 0) {
    close(go[1]);
    char byte;
    if (read(go[0], &byte, 1) != 1) _exit(126);
    // Through a shell that first runs a child of its own (which maps libc
    // elsewhere) and then execs the program: only the program's image counts.
    std::string script = "/bin/true; exec " + kProgram + " 0";
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(go[0]);
  std::string why;
  auto watch = MmapWatch::open(child, why);
  ASSERT_EQ(write(go[1], "g", 1), 1);
  close(go[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  if (!watch) GTEST_SKIP() << "the kernel refuses perf events here: " << why;
  EXPECT_TRUE(read_mapped_objects(child).empty());  // gone with the process
  auto objects = watch->objects();
  auto find = [&](const std::string& path) -> const MappedObject* {
    for (const MappedObject& o : objects)
      if (o.path == path) return &o;
    return nullptr;
  };
  const MappedObject* program = find(fs::canonical(kProgram).string());
  ASSERT_TRUE(program) << objects.size() << " objects";
  EXPECT_TRUE(program->executable);
  EXPECT_EQ(program->offset0, program->start);  // a PIE's first segment is its file's start
  std::string libc = find_libc(objects);
  ASSERT_FALSE(libc.empty());
  EXPECT_GT(find(libc)->end, find(libc)->offset0);
  EXPECT_LT(find(libc)->end - find(libc)->start, 64u << 20);  // one process's mapping, not a span over several
  EXPECT_EQ(find(fs::canonical("/bin/sh").string()), nullptr);  // the image the exec replaced
  EXPECT_EQ(watch->lost(), 0u);
}

// A burst of mmaps (large mallocs) fills the kernel's buffer: the loss is
// told, whether the kernel has said so yet (it does only before the next
// record that fits) or not, and a library mapped after the burst is there.
TEST(EbpfRecord, MappingRecordsTheKernelDroppedAreTold) {
  int go[2], to_child[2], from_child[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const std::string library = fs::canonical(kProgram).string();  // any file: mapped after the burst
  pid_t child = fork();
  if (child == 0) {
    close(go[1]);
    char byte;
    if (read(go[0], &byte, 1) != 1) _exit(126);
    // One CPU: the buffers are per CPU, and the kernel tells a loss in the
    // one that lost, before its next record.
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(125);
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    std::string flood = std::string(EDGEMEM_RECORD_PROGRAMS) + "/record_mmap_flood";
    execl(flood.c_str(), flood.c_str(), "20000", library.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(go[0]);
  close(to_child[0]);
  close(from_child[1]);
  std::string why;
  auto watch = MmapWatch::open(child, why);
  ASSERT_EQ(write(go[1], "g", 1), 1);
  close(go[1]);
  char byte = 0;
  ASSERT_EQ(read(from_child[0], &byte, 1), 1);  // the burst is over
  if (!watch) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    GTEST_SKIP() << "the kernel refuses perf events here: " << why;
  }
  watch->objects();
  EXPECT_TRUE(watch->found_full());
  ASSERT_EQ(write(to_child[1], "m", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto objects = watch->objects();
  EXPECT_GT(watch->lost(), 0u);  // said before the library's record
  EXPECT_TRUE(std::any_of(objects.begin(), objects.end(), [&](const MappedObject& o) { return o.path == library; }));
  EXPECT_TRUE(std::none_of(objects.begin(), objects.end(), [](const MappedObject& o) { return o.path.starts_with("//"); }));
  close(to_child[1]);
  close(from_child[0]);
}

TEST(EbpfRecord, AnUnknownInferenceFunctionIsRefusedInOneLineWithASuggestion) {
  SKIP_WITHOUT_UPROBES();
  fs::path out = scratch("misspelt.emt"), log = scratch("misspelt.log");
  pid_t recorder =
      start(fmt::format("{} record --via ebpf --inference-fn infer_onse -o {} -- {} 3", EDGEMEM_BINARY, out.string(), kProgram), log);
  EXPECT_EQ(exit_status(recorder), 2);
  std::string said = read_file(log.string());
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  EXPECT_NE(said.find("no function of that name"), std::string::npos) << said;
  EXPECT_NE(said.find("did you mean infer_once?"), std::string::npos) << said;
}

// Neither gdb nor eBPF: one line saying what to do (here: not root).
TEST(EbpfRecord, WithoutRootTheEbpfPathSaysSoInOneLine) {
  fs::path log = scratch("unprivileged.log");
  fs::permissions(log.parent_path(), fs::perms::all);
  pid_t recorder = fork();
  if (recorder == 0) {
    if (geteuid() == 0 && setuid(65534) != 0) _exit(126);
    std::string line = fmt::format("{} record --via ebpf --pid {} -o {} >{} 2>&1", EDGEMEM_BINARY, getppid(),
                                   (log.parent_path() / "unprivileged.emt").string(), log.string());
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  EXPECT_EQ(exit_status(recorder), 2);
  std::string said = read_file(log.string());
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  EXPECT_NE(said.find("needs root"), std::string::npos) << said;
}

}  // namespace
}  // namespace edgemem::test
