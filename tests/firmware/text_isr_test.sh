#!/usr/bin/env bash
# Text mode with an interrupt that records: each [MEM] line's stamp must be
# no earlier than the line before it. Read before interrupts were masked,
# an interrupt's line went out between the stamp and its line, with a later
# stamp: the host read the clock as going back 1,492 times in 300 inferences.
set -euo pipefail
root=$1
fw=$root/examples/firmware
here=$root/tests/firmware/isr
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -std=c99 -O2 -Wall -Wextra -Werror \
  -DEDGEMEM_ENABLE=1 -DEDGEMEM_TEXT=1 -DEDGEMEM_NOW_ADDR=0x40028018u -I"$root/target" -I"$fw" \
  "$here/startup.c" "$here/main.c" "$fw/semihost.c" "$fw/syscalls.c" "$fw/board.c" "$root/target/edgemem.c" \
  -T "$fw/link.ld" -nostartfiles --specs=nano.specs --specs=nosys.specs -o "$work/fw.elf"
(cd "$work" && timeout 120 qemu-system-arm -M mps2-an385 -nographic -monitor none -serial null \
  -semihosting-config enable=on,target=native -icount shift=0,align=off,sleep=off -kernel fw.elf) ||
  { echo "FAIL: the firmware exited with $?"; exit 1; }
/usr/bin/python3 - "$work/capture.log" <<'PY'
import re, sys
stamps = [int(m.group(1)) for m in re.finditer(rb"^\[MEM\]\[(\d+)\]", open(sys.argv[1], "rb").read(), re.M)]
isr = open(sys.argv[1], "rb").read().count(b"pool=isr")
back = sum(1 for a, b in zip(stamps, stamps[1:]) if b < a)
print(f"{len(stamps)} lines, {isr} from the interrupt, stamps went back {back} times")
sys.exit(0 if back == 0 and isr > 100 else 1)
PY
echo "ok: text stamps never go back with an interrupt recording"
