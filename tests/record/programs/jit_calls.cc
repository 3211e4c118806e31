// A native function called the way a JavaScript runtime calls it, for the
// record tests: V8 runs the caller in its interpreter first (its frames are
// V8's builtins, Builtins_*, in node's binary, and V8's C++ that calls the
// native function), then compiled (code in anonymous executable memory,
// calling through another builtin), then compiled again at another address.
// The native function leaks 3,072 B per call and keeps a ring of its last 4
// buffers of 2,048 B (freeing the oldest): one leak, and no other.
//   jit_calls N   N inferences (N > 30): interpreted up to 29, then the two compilations halve the rest
// Exits with 77 where it cannot make code (not x86-64).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "edgemem_marker.h"

#define NOINLINE __attribute__((noinline))

namespace {
void* volatile kept;
void* ring[4];
unsigned next;
volatile int depth;  // touched after each call: no call is a tail call
}  // namespace

extern "C" NOINLINE void leak_block() { kept = malloc(3072); /* jit-calls-test: leak */ }

extern "C" NOINLINE void ring_block() {
  free(ring[next % 4]);
  ring[next++ % 4] = malloc(2048); /* jit-calls-test: ring */
}

// The native function (an addon's N-API callback).
extern "C" NOINLINE void addon_callback(int) {
  leak_block();
  ring_block();
  depth = depth + 1;
}

// V8's C++ on the interpreter's path to a native function.
namespace v8::internal {
NOINLINE void FunctionCallbackArguments_Call(int i) {
  addon_callback(i);
  depth = depth + 1;
}
NOINLINE void Builtin_HandleApiCall(int i) {
  FunctionCallbackArguments_Call(i);
  depth = depth + 1;
}
}  // namespace v8::internal

// V8's builtins, as node's binary names them.
extern "C" NOINLINE void Builtins_CEntry_Return1_ArgvOnStack_BuiltinExit(int i) {
  v8::internal::Builtin_HandleApiCall(i);
  depth = depth + 1;
}
extern "C" NOINLINE void Builtins_InterpreterEntryTrampoline(int i) {
  Builtins_CEntry_Return1_ArgvOnStack_BuiltinExit(i);
  depth = depth + 1;
}
extern "C" NOINLINE void Builtins_CallApiCallback(int i) {
  addon_callback(i);
  depth = depth + 1;
}

namespace {

using Code = void (*)(int);

// Compiled code: a function in anonymous executable memory that keeps a
// frame pointer (as V8's code does) and calls `callee` with its argument.
Code compile(Code callee) {
#if defined(__x86_64__)
  uint8_t code[] = {0x55,                                // push %rbp
                    0x48, 0x89, 0xe5,                    // mov %rsp,%rbp
                    0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,  // movabs $callee,%rax
                    0xff, 0xd0,                          // call *%rax
                    0x5d,                                // pop %rbp
                    0xc3};                               // ret
  memcpy(code + 6, &callee, sizeof callee);
  void* at = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) return nullptr;
  memcpy(at, code, sizeof code);
  if (mprotect(at, 4096, PROT_READ | PROT_EXEC) != 0) return nullptr;
  return reinterpret_cast<Code>(at);
#else
  (void)callee;
  return nullptr;
#endif
}

NOINLINE void run_script(Code compiled, int i) {
  if (compiled) compiled(i);
  else Builtins_InterpreterEntryTrampoline(i);
  depth = depth + 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 0;
  if (n <= 30) {
    fprintf(stderr, "usage: %s N (N > 30)\n", argv[0]);
    return 2;
  }
  Code first = compile(Builtins_CallApiCallback), second = compile(Builtins_CallApiCallback);
  if (!first || !second) {
    printf("jit_calls: no compiled code on this machine\n");
    return 77;
  }
  const int compiled_from = 30, again_from = compiled_from + (n - compiled_from) / 2;
  for (int i = 1; i <= n; ++i) {
    edgemem_mark_inference_begin(i);
    run_script(i < compiled_from ? nullptr : i < again_from ? first : second, i);
    edgemem_mark_inference_end(i);
  }
  printf("jit_calls: %d calls, compiled from %d, again from %d\n", n, compiled_from, again_from);
  return 0;
}
