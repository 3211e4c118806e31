// `edgemem record --inference-fn NAME` without root: gdb numbers NAME's
// calls from the preload's sequence counter, and the marks join the
// recording as INFER records. The real runs are made as user nobody when
// the tests run as root, so nothing in them may need root (eBPF cannot).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "edgemem/trace_session.h"
#include "record/decoded_recording.h"
#include "record/ebpf_emt_writer.h"
#include "record/inference_function.h"
#include "record/inference_marks.h"
#include "record/trace_packer.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

namespace fs = std::filesystem;

const std::string kPrograms = EDGEMEM_RECORD_PROGRAMS;

// World-writable: the recorded runs write here as nobody.
fs::path scratch(const std::string& name) {
  const fs::path dir = test::scratch_dir("edgemem-infer-test");
  fs::permissions(dir, fs::perms::all);
  return dir / name;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// The marks fall between the records numbered before and after them, on
// the thread that made the calls, and fill the numbers they took: nothing
// counts as lost.
TEST(InferenceProbeMarks, MarksJoinTheRecordingAtTheirSequenceNumbers) {
  fs::path out = scratch("merge.emt"), marks = scratch("merge.marks");
  {
    EmtV2FileWriter w;
    std::string error;
    ASSERT_TRUE(w.open(out.string(), error)) << error;
    w.wall(1, 2);                                  // seq 1
    const uint64_t stack[] = {0x401234};
    w.alloc(7, "main", 0x5000, 128, 0, stack);     // THREAD 2, ALLOC 3
    w.lost(2);                                     // 4, 5: the probe's
    w.alloc(7, "main", 0x6000, 64, 0, stack);      // 6
    w.lost(1);                                     // 7: the probe's
    w.free(7, "main", 0x5000);                     // 8
    ASSERT_TRUE(w.close(error)) << error;
  }
  write_text(marks, "T 99 4 worker one\nB 99 5 1\nE 99 7 1\nX 0\n");
  std::string error;
  auto m = read_inference_marks(marks.string(), error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->inferences, 1u);
  EXPECT_EQ(m->exit_code, 0);
  ASSERT_TRUE(append_inference_marks(out.string(), *m, error)) << error;
  auto d = decode_file(out);
  EXPECT_EQ(d->stats.dropped_records, 0u);
  std::vector<EventKind> kinds;
  for (const Event& e : d->events) kinds.push_back(e.kind);
  using K = EventKind;
  ASSERT_EQ(kinds, (std::vector<K>{K::alloc, K::inference_begin, K::alloc, K::inference_end, K::free}));
  EXPECT_EQ(d->events[1].thread, 99u);
  EXPECT_EQ(d->events[1].size, 1u);
  EXPECT_EQ(d->events[2].thread, 7u);
  EXPECT_EQ(d->context.thread_names[99], "worker one");
}

// The marks' chunks lie after all of the program's in the file; packing
// puts them in sequence order, so a begin numbered before a million
// records is still read first (the reader holds a bounded number of
// records, EmtV2Reader::kMaxPendingBytes, waiting for an earlier one).
TEST(InferenceProbeMarks, MarksAfterAMillionRecordsAreReadInOrderOncePacked) {
  fs::path out = scratch("million.emt"), marks = scratch("million.marks");
  const uint64_t frees = (1u << 20) + 1000;
  {
    EmtV2FileWriter w;
    std::string error;
    ASSERT_TRUE(w.open(out.string(), error)) << error;
    w.wall(1, 2);  // seq 1
    w.lost(2);     // 2, 3: THREAD and begin
    for (uint64_t i = 0; i < frees; ++i) w.free(7, "main", 0x5000 + 16 * i);  // THREAD 4, then 5 ...
    w.lost(1);     // the end
    ASSERT_TRUE(w.close(error)) << error;
  }
  write_text(marks, fmt::format("T 9 2 worker\nB 9 3 1\nE 9 {} 1\nX 0\n", frees + 5));
  std::string error;
  auto m = read_inference_marks(marks.string(), error);
  ASSERT_TRUE(m) << error;
  ASSERT_TRUE(append_inference_marks(out.string(), *m, error)) << error;
  ASSERT_TRUE(pack_recording(out.string()).packed);
  auto d = decode_file(out);
  EXPECT_EQ(d->stats.dropped_records, 0u);
  ASSERT_EQ(d->events.size(), frees + 2);
  EXPECT_EQ(d->events.front().kind, EventKind::inference_begin);
  EXPECT_EQ(d->events.back().kind, EventKind::inference_end);
  EXPECT_EQ(d->events.front().thread, 9u);
}

// The probe writes whole lines; one cut short by a kill is dropped, and a
// line it cannot have written is an error naming the file and line.
TEST(InferenceProbeMarks, ACutLastLineIsDroppedAndAWrongLineIsNamed) {
  fs::path cut = scratch("cut.marks"), bad = scratch("bad.marks");
  write_text(cut, "T 5 1 main\nB 5 2 1\nE 5 3");
  write_text(bad, "T 5 1 main\nB 5 x 1\n");
  std::string error;
  auto m = read_inference_marks(cut.string(), error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->marks.size(), 2u);
  EXPECT_FALSE(m->exit_code || m->signal);
  EXPECT_FALSE(read_inference_marks(bad.string(), error));
  EXPECT_NE(error.find(bad.string() + ": line 2: "), std::string::npos) << error;
}

bool have_gdb() { return !find_in_path("gdb").empty(); }

#define SKIP_WITHOUT_GDB() \
  if (!have_gdb()) GTEST_SKIP() << "gdb is not installed"

struct Said {
  int status = -1;  // the shell's exit status
  std::string said;
};

// As nobody when root (setpriv), so the path under test cannot rely on
// root; `command` runs in sh with its stderr in the result.
Said run_unprivileged(const std::string& command, const fs::path& log) {
  std::string line = command + " >" + log.string() + " 2>&1";
  std::string shell = geteuid() == 0
                          ? fmt::format("setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c '{}'", line)
                          : line;
  Said r;
  int status = system(shell.c_str());
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.said = read_file(log.string());
  return r;
}

std::string source_line(const std::string& file, const std::string& marker) {
  std::ifstream source(std::string(EDGEMEM_SOURCE_DIR) + "/tests/record/programs/" + file);
  std::string line;
  for (int n = 1; std::getline(source, line); ++n)
    if (line.find(marker) != std::string::npos) return file + ":" + std::to_string(n);
  return "?";
}

// Leaked bytes at sites whose innermost frame is `innermost`.
uint64_t leaked_at(const AnalysisResult& r, const std::string& innermost) {
  uint64_t bytes = 0;
  for (const SiteLeak& l : r.leaks)
    if (l.site.ends_with(innermost)) bytes += l.bytes;
  return bytes;
}

std::string record(const fs::path& out, const std::string& fn, const std::string& program_and_args) {
  return fmt::format("{} record --inference-fn {} -o {} -- {}", EDGEMEM_BINARY, fn, out.string(), program_and_args);
}

TEST(InferenceProbe, EachCallIsOneInferenceWithoutRootOrEbpf) {
  SKIP_WITHOUT_GDB();
  fs::path out = scratch("leak.emt");
  Said r = run_unprivileged(record(out, "infer_once", kPrograms + "/record_leak_per_call 25"), scratch("leak.log"));
  ASSERT_EQ(r.status, 0) << r.said;
  EXPECT_NE(r.said.find("25 calls of infer_once"), std::string::npos) << r.said;
  EXPECT_EQ(r.said.find("eBPF"), std::string::npos) << r.said;
  EXPECT_NE(r.said.find("leak_per_call: 25 calls"), std::string::npos) << "the program's own output\n" << r.said;
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  const AnalysisResult& a = outcome.run->result;
  EXPECT_EQ(a.inferences, 25u);
  const std::string at = "infer_once (" + source_line("leak_per_call.c", "record-test: leak per call") + ")";
  const SiteLeak* leak = nullptr;
  for (const SiteLeak& l : a.leaks)
    if (l.site.ends_with(at)) leak = &l;
  ASSERT_TRUE(leak) << (a.leaks.empty() ? "no leaks" : a.leaks[0].site);
  EXPECT_EQ(leak->bytes, 25u * 128);
  EXPECT_EQ(leak->count, 25u);
  ASSERT_TRUE(leak->bytes_per_inference);
  EXPECT_NEAR(*leak->bytes_per_inference, 128.0, 0.5);
}

// The pipeline marks its frames itself: under --inference-fn those markers
// are left out, or every inference would be counted twice.
TEST(InferenceProbe, AProgramsOwnMarkersGiveWayToTheProbedFunction) {
  SKIP_WITHOUT_GDB();
  fs::path out = scratch("pipeline.emt");
  Said r = run_unprivileged(record(out, "run_model", std::string(EDGEMEM_PIPELINE) + " --frames 24 --every 4"),
                           scratch("pipeline.log"));
  ASSERT_EQ(r.status, 0) << r.said;
  EXPECT_NE(r.said.find("24 calls of run_model"), std::string::npos) << r.said;
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  EXPECT_EQ(outcome.run->result.inferences, 24u);
}

// The program's markers are left out only in the probed process: a forked
// child (gdb follows the parent) and an exec'd one are not probed, so their
// own markers are all that counts their inferences there.
TEST(InferenceProbe, ChildrenThatAreNotProbedKeepTheirOwnMarkers) {
  SKIP_WITHOUT_GDB();
  fs::path out = scratch("children.emt");
  Said r = run_unprivileged(record(out, "infer_step", kPrograms + "/record_infer_shapes children 5"),
                           scratch("children.log"));
  ASSERT_EQ(r.status, 0) << r.said;
  EXPECT_NE(r.said.find("5 calls of infer_step"), std::string::npos) << r.said;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.said, m, std::regex(R"(children (\d+) and (\d+))"))) << r.said;
  TraceOutcome parent = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(parent.run);
  EXPECT_EQ(parent.run->result.inferences, 5u);
  const std::string leak = fmt::format("({})", source_line("infer_shapes.c", "infer-test: leak per marked inference"));
  for (auto [pid, inferences] : {std::pair{m[1].str(), 3u}, std::pair{m[2].str(), 4u}}) {
    TraceOutcome child = analyse_trace_file(out.string() + "." + pid, {});
    ASSERT_TRUE(child.run) << "no recording of child " << pid << "\n" << r.said;
    EXPECT_EQ(child.run->result.inferences, inferences) << "child " << pid;
    EXPECT_EQ(leaked_at(child.run->result, leak), 16u * inferences) << "child " << pid;
  }
}

// Only the worker calls infer_step: every INFER record is the worker's,
// while the main thread's allocations run alongside (and are stopped while
// the probe numbers a call).
TEST(InferenceProbe, OnlyTheThreadThatCallsTheFunctionMarksInferences) {
  SKIP_WITHOUT_GDB();
  fs::path out = scratch("threads.emt");
  Said r = run_unprivileged(record(out, "infer_step", kPrograms + "/record_infer_shapes threads 10"),
                           scratch("threads.log"));
  ASSERT_EQ(r.status, 0) << r.said;
  auto d = decode_file(out);
  std::set<uint32_t> marking, main_threads;
  int begins = 0, ends = 0;
  for (const Event& e : d->events) {
    if (e.kind == EventKind::inference_begin) ++begins;
    if (e.kind == EventKind::inference_end) ++ends;
    if (e.kind == EventKind::inference_begin || e.kind == EventKind::inference_end) marking.insert(e.thread);
    if (e.kind == EventKind::alloc && e.size == 48) main_threads.insert(e.thread);
  }
  EXPECT_EQ(begins, 10);
  EXPECT_EQ(ends, 10);
  // Every thread is stopped while the probe takes a number: no record
  // shares one with another (the reader would give up on the chunk).
  EXPECT_EQ(d->stats.corrupt_bytes, 0u);
  EXPECT_EQ(d->stats.dropped_records, 0u);
  ASSERT_EQ(marking.size(), 1u);
  ASSERT_EQ(main_threads.size(), 1u);
  EXPECT_NE(*marking.begin(), *main_threads.begin());
  EXPECT_NE(*marking.begin(), 0u);
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  EXPECT_EQ(outcome.run->result.inferences, 10u);
  EXPECT_EQ(leaked_at(outcome.run->result, "infer_step (" + source_line("infer_shapes.c", "infer-test: leak per step") + ")"),
            10u * 64);
}

// infer_recursive recurses 3 deep: each outermost call is one inference
// holding its three 32-byte leaks.
TEST(InferenceProbe, ARecursiveFunctionCountsOncePerOutermostCall) {
  SKIP_WITHOUT_GDB();
  fs::path out = scratch("recursive.emt");
  Said r = run_unprivileged(record(out, "infer_recursive", kPrograms + "/record_infer_shapes recursive 5"),
                           scratch("recursive.log"));
  ASSERT_EQ(r.status, 0) << r.said;
  EXPECT_NE(r.said.find("5 calls of infer_recursive"), std::string::npos) << r.said;
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  EXPECT_EQ(outcome.run->result.inferences, 5u);
  EXPECT_EQ(leaked_at(outcome.run->result,
                      "infer_recursive (" + source_line("infer_shapes.c", "infer-test: leak per level") + ")"),
            5u * 96);
}

// infer_jump never returns: each call's end is the next call's entry at
// the same depth (its frame is gone). The last one ends only if main's
// way out passes the address the call would have returned to.
TEST(InferenceProbe, ACallLeftByLongjmpEndsAtTheNextCall) {
  SKIP_WITHOUT_GDB();
  fs::path out = scratch("longjmp.emt");
  Said r = run_unprivileged(record(out, "infer_jump", kPrograms + "/record_infer_shapes longjmp 4"),
                            scratch("longjmp.log"));
  ASSERT_EQ(r.status, 0) << r.said;
  EXPECT_NE(r.said.find("4 calls of infer_jump"), std::string::npos) << r.said;
  auto d = decode_file(out);
  std::vector<uint64_t> begins, ends;
  for (const Event& e : d->events) {
    if (e.kind == EventKind::inference_begin) begins.push_back(e.size);
    if (e.kind == EventKind::inference_end) ends.push_back(e.size);
  }
  EXPECT_EQ(begins, (std::vector<uint64_t>{1, 2, 3, 4}));
  ASSERT_GE(ends.size(), 3u);
  EXPECT_EQ(std::vector<uint64_t>(ends.begin(), ends.begin() + 3), (std::vector<uint64_t>{1, 2, 3}));
}

// SIGKILL ends the program, not gdb: the marks taken so far are kept, and
// the program's status is reported as its own.
TEST(InferenceProbe, AProgramKilledKeepsItsMarks) {
  SKIP_WITHOUT_GDB();
  fs::path out = scratch("killed.emt");
  Said r = run_unprivileged(record(out, "infer_step", kPrograms + "/record_infer_shapes killed 7"), scratch("killed.log"));
  EXPECT_EQ(r.status, 128 + SIGKILL) << r.said;
  EXPECT_NE(r.said.find("7 calls of infer_step"), std::string::npos) << r.said;
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run);
  EXPECT_EQ(outcome.run->result.inferences, 7u);
}

TEST(InferenceProbe, AMisspeltFunctionIsRefusedInOneLineWithASuggestion) {
  SKIP_WITHOUT_GDB();
  Said r = run_unprivileged(record(scratch("misspelt.emt"), "infer_onse", kPrograms + "/record_leak_per_call 3"),
                           scratch("misspelt.log"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.said.begin(), r.said.end(), '\n'), 1) << r.said;
  EXPECT_NE(r.said.find("did you mean infer_once?"), std::string::npos) << r.said;
}

// --pid: the program runs without the recorder, allocates, and waits for a
// file; gdb injects the recorder, the probe is set, the file appears and
// the 25 calls are marked.
TEST(InferenceProbe, AttachingProbesTheCallsOfARunningProcess) {
  SKIP_WITHOUT_GDB();
  fs::path out = scratch("attach.emt"), go = scratch("attach.go"), log = scratch("attach.log");
  fs::path program_log = scratch("attach-program.log");
  fs::remove(go);
  pid_t program = fork();
  if (program == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(126);
    execl((kPrograms + "/record_leak_per_call").c_str(), "record_leak_per_call", "25", go.c_str(), nullptr);
    _exit(127);
  }
  pid_t recorder = fork();
  if (recorder == 0) {
    std::string command = fmt::format("{} record --pid {} --inference-fn infer_once -o {}", EDGEMEM_BINARY, program,
                                      out.string());
    run_unprivileged(command, log);
    _exit(0);
  }
  bool probing = false;
  for (int i = 0; i < 600 && !probing; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // Not there until the recorder's shell opens it (as nobody: it cannot be made for it).
    probing = fs::exists(log) && read_file(log.string()).find("probing the calls of infer_once") != std::string::npos;
  }
  write_text(go, "");
  int status = 0;
  waitpid(program, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  waitpid(recorder, nullptr, 0);
  std::string said = read_file(log.string());
  ASSERT_TRUE(probing) << said;
  EXPECT_NE(said.find("25 calls of infer_once"), std::string::npos) << said;
  TraceOutcome outcome = analyse_trace_file(out.string(), {});
  ASSERT_TRUE(outcome.run) << said;
  EXPECT_EQ(outcome.run->result.inferences, 25u);
  const std::string at = "infer_once (" + source_line("leak_per_call.c", "record-test: leak per call") + ")";
  EXPECT_EQ(leaked_at(outcome.run->result, at), 25u * 128);
}

// Ctrl-C (SIGINT to edgemem) with --pid stops the probe, not the process:
// gdb detaches, keeping from the process the SIGINT that asked it to, and
// the process then makes its calls unprobed (a breakpoint left behind
// would kill it with SIGTRAP) and exits normally.
TEST(InferenceProbe, CtrlCDetachesTheProbeAndTheProcessRunsOn) {
  SKIP_WITHOUT_GDB();
  fs::path out = scratch("detach.emt"), go = scratch("detach.go"), log = scratch("detach.log");
  fs::remove(go);
  bool root = geteuid() == 0;
  pid_t program = fork();
  if (program == 0) {
    if (root && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(126);
    execl((kPrograms + "/record_leak_per_call").c_str(), "record_leak_per_call", "25", go.c_str(), nullptr);
    _exit(127);
  }
  pid_t recorder = fork();
  if (recorder == 0) {
    FILE* f = fopen(log.c_str(), "w");
    if (!f) _exit(126);
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    std::string pid = std::to_string(program);
    if (root)
      execl("/usr/bin/setpriv", "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", EDGEMEM_BINARY,
            "record", "--pid", pid.c_str(), "--inference-fn", "infer_once", "-o", out.c_str(), nullptr);
    else
      execl(EDGEMEM_BINARY, EDGEMEM_BINARY, "record", "--pid", pid.c_str(), "--inference-fn", "infer_once", "-o",
            out.c_str(), nullptr);
    _exit(127);
  }
  bool probing = false;
  for (int i = 0; i < 600 && !probing; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // Not there until the recorder's shell opens it (as nobody: it cannot be made for it).
    probing = fs::exists(log) && read_file(log.string()).find("probing the calls of infer_once") != std::string::npos;
  }
  kill(recorder, SIGINT);
  int recorder_status = 0;
  waitpid(recorder, &recorder_status, 0);
  write_text(go, "");
  int status = 0;
  waitpid(program, &status, 0);
  std::string said = read_file(log.string());
  ASSERT_TRUE(probing) << said;
  EXPECT_TRUE(WIFEXITED(recorder_status) && WEXITSTATUS(recorder_status) == 0) << said;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the process should run on and exit normally, status " << status << "\n" << said;
  EXPECT_NE(said.find("no call of infer_once was seen"), std::string::npos) << said;
  // No marks to keep for later: the probe's temp dir is gone, not named.
  EXPECT_EQ(said.find("were not added"), std::string::npos) << said;
}

}  // namespace
}  // namespace edgemem::test
