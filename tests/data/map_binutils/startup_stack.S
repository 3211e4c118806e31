/* A CMSIS-style startup's stack (a reviewer's link): PROGBITS zeros. */
  .section .stack,"aw"
  .align 3
  .globl __StackLimit
__StackLimit:
  .space 0x800
  .globl __StackTop
__StackTop:
