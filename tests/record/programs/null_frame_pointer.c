// Allocations made while the frame-pointer register holds 0, as code built
// without frame pointers may leave it (Debian's git and python do): a null
// saved frame pointer there is not the outermost frame, and the stack must
// still reach main. Prints "null-frame-pointer-test: done".
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
// fn(arg) with %rbp zeroed for the call; the CFI lets an unwinder through.
void* call_with_null_fp(void* fn, uintptr_t arg);
__asm__(".text\n"
        ".globl call_with_null_fp\n"
        ".type call_with_null_fp, @function\n"
        "call_with_null_fp:\n"
        ".cfi_startproc\n"
        "push %rbp\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_rel_offset %rbp, 0\n"
        "xor %ebp, %ebp\n"
        "mov %rdi, %rax\n"
        "mov %rsi, %rdi\n"
        "call *%rax\n"
        "pop %rbp\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_restore %rbp\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size call_with_null_fp, .-call_with_null_fp\n");
#else
static void* call_with_null_fp(void* fn, uintptr_t arg) { return ((void* (*)(uintptr_t))fn)(arg); }
#endif

static const char kText[] = "a string strdup copies";

__attribute__((noinline)) void* from_program(void) { return call_with_null_fp((void*)malloc, 300); }
__attribute__((noinline)) void* through_libc(void) { return call_with_null_fp((void*)strdup, (uintptr_t)kText); }

int main(void) {
  for (int i = 0; i < 3; ++i) from_program();   // leaked: 3 x 300 B
  for (int i = 0; i < 5; ++i) through_libc();   // leaked: 5 x 23 B
  puts("null-frame-pointer-test: done");
  return 0;
}
