#!/usr/bin/env bash
# Instructions per recorded event on Cortex-M3, measured under QEMU -icount
# (one instruction per virtual ns; see examples/firmware/main.c, VARIANT 5).
# The goal, 60 instructions per event, is the bound for records without
# check bytes (-DEDGEMEM_CHECK=0); the default build's check byte costs
# about 11 more, bounded at 70 so growth is caught.
set -euo pipefail
root=$1
out=$(mktemp)
trap 'rm -f "$out" "$out.elf"' EXIT
fail=0
measure() {  # CHECK value, label, bound x10
  CHECK=$1 "$root/examples/firmware/capture.sh" cost "$out"
  read -r alloc free < <(sed -E 's/alloc_instructions_x10=([0-9]+) free_instructions_x10=([0-9]+)/\1 \2/' "$out")
  printf 'Cortex-M3, ring buffer transport, %s: %d.%d instructions per alloc event, %d.%d per free event\n' \
    "$2" $((alloc / 10)) $((alloc % 10)) $((free / 10)) $((free % 10))
  [ "$alloc" -le "$3" ] && [ "$free" -le "$3" ] || { echo "FAIL: an event costs more than $(($3 / 10)) instructions"; fail=1; }
}
measure 0 "no check bytes (-DEDGEMEM_CHECK=0)" 600
measure 1 "check bytes (the default)" 700
exit $fail
