// Allocations made while the frame-pointer register holds 0, as code built
// without frame pointers may leave it (Debian's git and python do): a null
// saved frame pointer there is not the outermost frame, and the stack must
// still reach main. And while it holds -16 (GNU as 2.40 does before
// xmalloc): an address whose frame record would wrap past the top of the
// address space, which the walk once read and crashed on.
// Prints "null-frame-pointer-test: done".
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
// fn(arg) with %rbp = fp for the call; the CFI lets an unwinder through.
void* call_with_fp(void* fn, uintptr_t arg, uintptr_t fp);
__asm__(".text\n"
        ".globl call_with_fp\n"
        ".type call_with_fp, @function\n"
        "call_with_fp:\n"
        ".cfi_startproc\n"
        "push %rbp\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_rel_offset %rbp, 0\n"
        "mov %rdx, %rbp\n"
        "mov %rdi, %rax\n"
        "mov %rsi, %rdi\n"
        "call *%rax\n"
        "pop %rbp\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_restore %rbp\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size call_with_fp, .-call_with_fp\n");
#else
static void* call_with_fp(void* fn, uintptr_t arg, uintptr_t fp) {
  (void)fp;
  return ((void* (*)(uintptr_t))fn)(arg);
}
#endif

static const char kText[] = "a string strdup copies";

__attribute__((noinline)) void* from_program(void) { return call_with_fp((void*)malloc, 300, 0); }
__attribute__((noinline)) void* through_libc(void) { return call_with_fp((void*)strdup, (uintptr_t)kText, 0); }
__attribute__((noinline)) void* near_the_top(void) { return call_with_fp((void*)malloc, 200, (uintptr_t)-16); }

int main(void) {
  for (int i = 0; i < 3; ++i) from_program();   // leaked: 3 x 300 B
  for (int i = 0; i < 5; ++i) through_libc();   // leaked: 5 x 23 B
  for (int i = 0; i < 7; ++i) near_the_top();   // leaked: 7 x 200 B
  puts("null-frame-pointer-test: done");
  return 0;
}
