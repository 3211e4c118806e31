  .syntax unified
  .thumb
  .section .text.main,"ax",%progbits
  .global _start
_start: b _start
  .space 60
  .section fast_ram_code_section,"ax",%progbits
