#!/usr/bin/env bash
# Builds one firmware variant for Cortex-M3 (mps2-an385), runs it under
# qemu-system-arm and writes the capture to OUT.
#   examples/firmware/capture.sh VARIANT OUT [ring|itm|text|summary|uart:PORT]
# VARIANT: clean | leak | fragment | overflow | lifo | reboot (or cost: instructions per event). The ELF is left beside
# OUT as OUT.elf (for `edgemem analyze OUT --elf OUT.elf`).
# uart:PORT streams the capture live out of UART0 as a TCP server on 127.0.0.1:PORT
# (`edgemem watch tcp://127.0.0.1:PORT`), one inference per 10 ms of real time; QEMU
# waits for the client before the firmware starts, so nothing is lost, and OUT
# receives nothing. summary builds target/ with -DEDGEMEM_SUMMARY=1: into the ring go
# only per-pool SUMMARY records at each inference end (docs/device.md). Environment: INFERENCES (default 50), ARENA_SIZE (default 40960),
# CHECK=0 (records without check bytes, -DEDGEMEM_CHECK=0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
variant=${1:?variant: clean|leak|fragment|overflow|lifo|reboot}
out=$(realpath -m "${2:?output file}")
transport=${3:-ring}
case "$variant" in
  clean) v=0 ;; leak) v=1 ;; fragment) v=2 ;; overflow) v=3 ;; lifo) v=4 ;;
  reboot) v=6 ;;  # the leak, reset by a watchdog after 30 inferences; 20 more in the second boot (INFERENCES does not apply)
  cost) v=5 ;;  # writes "alloc_instructions_x10=N free_instructions_x10=N" instead of a capture
  *) echo "capture.sh: unknown variant '$variant'" >&2; exit 2 ;;
esac
serial=(-serial null)
timing=(-icount shift=0,align=off,sleep=off)
case "$transport" in
  ring) tdef=-DTRANSPORT_RING ;; itm) tdef=-DTRANSPORT_ITM ;; text) tdef="-DTRANSPORT_TEXT -DEDGEMEM_TEXT=1" ;;
  summary) tdef="-DTRANSPORT_RING -DEDGEMEM_SUMMARY=1" ;;
  uart:[0-9]*)
    tdef=-DTRANSPORT_UART
    serial=(-serial "tcp:127.0.0.1:${transport#uart:},server=on,wait=on")
    timing=()  # the FPGAIO counter then follows the host clock: inferences are paced in real time
    ;;
  *) echo "capture.sh: unknown transport '$transport'" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Compile from here with relative names: __FILE__ sites then read "model.c:58".
cd "$here"
# shellcheck disable=SC2086
arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -std=c99 -O2 -g -Wall -Wextra -Werror \
  -ffunction-sections -fdata-sections -fno-builtin-malloc -fno-builtin-free \
  -DEDGEMEM_ENABLE=1 -DEDGEMEM_NOW_ADDR=0x40028018u -DVARIANT=$v $tdef -I"$root/target" -I"$here" \
  ${CHECK:+-DEDGEMEM_CHECK=$CHECK} \
  ${INFERENCES:+-DINFERENCES=$INFERENCES} ${ARENA_SIZE:+-DARENA_SIZE=$ARENA_SIZE} \
  startup.c semihost.c syscalls.c board.c model.c main.c \
  "$root"/target/edgemem.c "$root"/target/edgemem_arena.c "$root"/target/edgemem_malloc_wrap.c \
  -T link.ld -nostartfiles --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections \
  -Wl,--wrap=malloc,--wrap=free,--wrap=calloc,--wrap=realloc \
  -Wl,-Map="$work/fw.map" -o "$work/fw.elf"
rc=0
cp "$work/fw.elf" "$out.elf"
(cd "$work" && timeout "${QEMU_TIMEOUT:-60}" qemu-system-arm -M mps2-an385 -nographic -monitor none "${serial[@]}" \
  -semihosting-config enable=on,target=native "${timing[@]}" \
  -kernel fw.elf) || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "capture.sh: firmware exited with $rc" >&2
  exit 1
fi
if [ "$variant" = cost ]; then cp "$work/cost.txt" "$out"; elif [ "$tdef" != -DTRANSPORT_UART ]; then cp "$work/capture.bin" "$out"; fi
