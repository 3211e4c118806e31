  .syntax unified
  .thumb
  .section .text.main,"ax",%progbits
  .global _start
_start: b _start
  .space 60
  .section .data.x,"aw",%progbits
  .word 0x11111111, 0x22222222
  .section .empty_pb,"aw",%progbits
  .section .tail,"aw",%progbits
  .word 0xdeadbeef, 0xcafef00d
