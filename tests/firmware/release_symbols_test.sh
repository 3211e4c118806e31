#!/usr/bin/env bash
# Without EDGEMEM_ENABLE the device library must vanish: no recording
# symbol, no data, on every core we support. The arena allocator stays (it
# is the allocator), but holds no recording call.
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
for cpu in cortex-m0plus cortex-m3 cortex-m4 cortex-m7; do
  for src in edgemem.c edgemem_malloc_wrap.c edgemem_arena.c; do
    arm-none-eabi-gcc -std=c99 -mcpu="$cpu" -mthumb -Os -Wall -Wextra -Werror -pedantic \
      -c "$root/target/$src" -o "$work/$src.o"
    bad=$(arm-none-eabi-nm "$work/$src.o" | grep -E ' (em_(init|alloc|free|realloc|alloc_failed|inference|guard|mark|counter|pool|ring|site|dropped|now)|__wrap_|em$)' || true)
    calls=$(arm-none-eabi-nm -u "$work/$src.o" | grep -E ' em_' || true)
    if [ -n "$bad$calls" ]; then echo "FAIL $cpu $src keeps: $bad $calls"; fail=1; fi
  done
  # And with it on: warning-free, and the flash/RAM cost of the recorder.
  arm-none-eabi-gcc -std=c99 -mcpu="$cpu" -mthumb -Os -Wall -Wextra -Werror -pedantic -DEDGEMEM_ENABLE=1 \
    -ffunction-sections -c "$root/target/edgemem.c" -o "$work/on.o"
  # No libc but what docs/device.md names (libgcc's __aeabi_ helpers are no libc).
  libc=$(arm-none-eabi-nm -u "$work/on.o" | awk '{print $2}' | grep -vxE 'memcpy|memset|__aeabi_.*' || true)
  [ -z "$libc" ] || { echo "FAIL $cpu: edgemem.c calls $libc"; fail=1; }
  read -r text data bss _ < <(arm-none-eabi-size "$work/on.o" | tail -1)
  echo "$cpu: edgemem.c recording on: $text B flash, $((data + bss)) B RAM"
  [ "$text" -le 2304 ] || { echo "FAIL $cpu: more than 2.25 KiB of flash"; fail=1; }
  [ $((data + bss)) -le 128 ] || { echo "FAIL $cpu: more than 128 B of RAM"; fail=1; }
done
[ $fail -eq 0 ] && echo "release objects: no edgemem symbols"
exit $fail
