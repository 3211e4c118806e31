// Worst-case stack from GCC's -fstack-usage (.su) and -fcallgraph-info=su
// (.ci) files, or from the static call graph armlink writes (Keil MDK's
// <image>.htm). Recursion, indirect calls, dynamic frames and calls into code
// without stack information make a root "unbounded": edgemem reports the
// known part and says why, rather than inventing a number.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace edgemem {

struct ElfImage;

// No stack is 4 GiB deep: a larger frame or depth in a file is damage, and
// refusing it keeps every sum of a million frames far from wrapping.
inline constexpr uint64_t kMaxStackBytes = uint64_t{1} << 32;

struct StackFunction {
  std::string name;       // as GCC names it (clones keep their suffix)
  std::string file;       // file:line:column
  uint64_t frame_bytes = 0;
  std::string qualifier;  // static | dynamic | dynamic,bounded
};

struct StackRoot {
  std::string function;
  uint64_t worst_case_bytes = 0;   // along `path`, known frames only
  std::vector<std::string> path;   // root first
  bool unbounded = false;
  std::vector<std::string> reasons;  // "recursion: f", "indirect call in g", "no stack info: memcpy", "dynamic frame: h"
  bool interrupt = false;          // an exception or interrupt handler (..._Handler, ..._IRQHandler, or in the vector table)
  std::optional<uint64_t> stated_bytes;  // the toolchain's own number for it (Keil's "Max Depth")
  std::vector<uint64_t> path_frame_bytes;  // beside `path`: each function's own frame as counted (0 when unknown)
  // Its worst case were every file's own definition that a global shares a
  // name with weak (StackReport::weak_or_static); set when that is larger.
  std::optional<uint64_t> if_weak_bytes;
  // The source file that defines it ("startup.c"; Keil: its object), empty
  // when unknown: two roots of one name are told apart by it.
  std::string file;
};

// The main stack (MSP) on a Cortex-M: thread code, then interrupts stacking
// on top, each with the frame the hardware pushes at worst: 32 B (104 B with
// the FPU context) and the 4 B the core pads with to align the frame to 8 B
// (CCR.STKALIGN, set out of reset on the M3 r2p0 and later, M4, M7, M33).
// How deep interrupts nest depends on their priorities, so both ends are
// given.
inline constexpr uint64_t kExceptionFrameBytes = 32 + 4, kFpuExceptionFrameBytes = 104 + 4;
struct InterruptBudget {
  uint64_t thread_bytes = 0;      // the worst non-interrupt root
  uint64_t one_level_bytes = 0;   // + the worst handler and its frame
  uint64_t all_nested_bytes = 0;  // + every handler and frame (all priorities distinct)
  uint64_t frame_bytes = kExceptionFrameBytes;
  size_t handlers = 0;
};

struct StackReport {
  std::string source = "GCC";            // "GCC" or "Keil"
  std::vector<StackFunction> functions;  // heaviest frame first
  std::vector<StackRoot> roots;          // worst first
  size_t files = 0;
  InterruptBudget interrupts;
  // Keil: "Maximum Stack Usage = N bytes + Unknown(...)" and its chain.
  std::optional<uint64_t> stated_max_bytes;
  std::string stated_unknown;
  std::vector<std::string> stated_chain;
  std::vector<std::string> notes;  // what the reader should know about the bound (a global defined twice)
  // Functions a file defines for itself beside a global of the same name in
  // another: a call graph titles weak and static definitions alike, and
  // only a weak one is replaced by the global at link time. Counted as
  // written (static); `interrupts_if_weak` and each root's if_weak_bytes
  // say what the stack needs were they weak, when that is more.
  std::vector<std::string> weak_or_static;
  std::optional<InterruptBudget> interrupts_if_weak;
  // Read with the linked image (--elf): its path, and the functions nobody
  // calls that it does not hold (removed by the linker, or a weak
  // definition a global replaced), not counted as roots.
  std::string elf;
  std::vector<std::string> not_linked;
};

// One function in a call graph, keyed by a title unique in the image.
struct CallNode {
  StackFunction fn;
  bool has_frame = false;            // its frame size is known
  std::vector<std::string> callees;  // titles; "__indirect_call" for a call through a pointer
  std::optional<uint64_t> stated_depth;
  bool unused = false;               // removed by the linker
  bool calls_unknown = false;        // frame from a .su with no .ci beside it
  bool vectored = false;             // in the linked image's vector table: an exception handler, whatever its name
  // A label with no code of its own: Keil's startup files export each weak
  // IRQ handler as a 0-byte label on Default_Handler's one `B .`. Not a
  // root or a handler of its own: nested 80 times it read 3,480 B.
  bool label_only = false;
};

// Worst case for every root of the graph (a node nobody calls), the
// interrupt budget on top (`fpu`: 108-byte frames), heaviest frames first.
StackReport worst_case_stacks(const std::map<std::string, CallNode>& graph, bool fpu);

// A function's bare name: GCC names C++ functions in .su and .ci files with
// their return type and parameters ("void SysTick_Handler()", even for an
// extern "C" one), C ones as is; Clang's, demangled, keep their parameters.
std::string_view bare_function_name(std::string_view name);

// Whether a function is an exception or interrupt handler by its name
// (CMSIS's ..._Handler and ..._IRQHandler, FreeRTOS ports', isr_*).
bool is_interrupt(const std::string& full_name);

// Keil MDK's static call graph (.htm); nullopt with a reason if it is not one.
std::optional<StackReport> parse_keil_callgraph(std::string_view html, bool fpu, std::string& error);

// The linked image of the build the .su/.ci files describe: its symbol
// table tells a weak definition (replaced by a global, or kept) from a
// static one, and which functions the linker kept.
struct LinkedImage {
  std::string path;
  const ElfImage* image = nullptr;
};

// Reads every .su and .ci file among `paths` (files or directories, searched
// recursively), or one Keil .htm report. Returns nullopt with a reason when
// nothing usable is found or a file cannot be read.
std::optional<StackReport> analyze_stack(const std::vector<std::string>& paths, bool fpu, std::string& error,
                                         const LinkedImage& linked = {});

}  // namespace edgemem
