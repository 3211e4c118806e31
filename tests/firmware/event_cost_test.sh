#!/usr/bin/env bash
# Instructions per recorded event on Cortex-M3, measured under QEMU -icount
# (one instruction per virtual ns; see examples/firmware/main.c, VARIANT 5).
# The goal, 60 instructions per event, is the bound.
set -euo pipefail
root=$1
out=$(mktemp)
trap 'rm -f "$out" "$out.elf"' EXIT
"$root/examples/firmware/capture.sh" cost "$out"
read -r alloc free < <(sed -E 's/alloc_instructions_x10=([0-9]+) free_instructions_x10=([0-9]+)/\1 \2/' "$out")
printf 'Cortex-M3, ring buffer transport: %d.%d instructions per alloc event, %d.%d per free event\n' \
  $((alloc / 10)) $((alloc % 10)) $((free / 10)) $((free % 10))
[ "$alloc" -le 600 ] && [ "$free" -le 600 ] || { echo "FAIL: an event costs more than 60 instructions"; exit 1; }
