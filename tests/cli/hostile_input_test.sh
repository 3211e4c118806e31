#!/usr/bin/env bash
# Hostile input: endless sources (/dev/zero), cut files and a file-size
# limit are refused or reported, one line and exit 2, never read into
# memory until it runs out or left hanging.
# Usage: hostile_input_test.sh EDGEMEM SOURCE_DIR CORPUS_DIR
set -u
edgemem=$1 src=$2 corpus=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
model=$corpus/tflite/tflm_keyword_scrambled.tflite
map=$corpus/map/own_cm4_O2.map
for f in "$model" "$map"; do
  [ -r "$f" ] || { echo "FAIL: test data missing: $f (see tests/data/SOURCES.md)"; exit 1; }
done
expect() {  # expect CODE DESCRIPTION PATTERN -- command...: stderr one line matching PATTERN when CODE is 2
  local want=$1 what=$2 pattern=$3
  shift 4
  timeout 20 "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; head -c 2000 "$tmp/err"; fail=1
  elif ! grep -q -- "$pattern" "$tmp/err" || { [ "$want" = 2 ] && [ "$(wc -l <"$tmp/err")" != 1 ]; }; then
    echo "FAIL: $what: stderr is not one line with '$pattern':"; head -c 2000 "$tmp/err"; fail=1
  else
    echo "ok: $what"
  fi
}

# Inputs read whole are refused on their first bytes: /dev/zero once grew
# edgemem by gigabytes with no output.
expect 2 "map /dev/zero" "/dev/zero: offset 0: a NUL byte: expected text (a linker map)" -- "$edgemem" map /dev/zero
expect 2 "plan /dev/zero" "/dev/zero: offset 4: expected the TFLite file identifier" -- "$edgemem" plan /dev/zero
expect 2 "fit /dev/zero" "/dev/zero: offset 4: expected the TFLite" -- "$edgemem" fit --ram 1M --flash 1M /dev/zero
expect 2 "fit --map /dev/zero" "/dev/zero: offset 0: a NUL byte" -- "$edgemem" fit "$model" --map /dev/zero
expect 2 "stack /dev/zero" "/dev/zero: line 1: expected" -- "$edgemem" stack /dev/zero
expect 2 "check --budget /dev/zero" "/dev/zero: offset 0: a NUL byte: expected text (a budget (JSON))" -- \
  "$edgemem" check --budget /dev/zero
printf '{"inputs": {"model": "/dev/zero"}, "arena": {"max": "64K"}}\n' >"$tmp/budget.json"
expect 2 "check, the budget's model /dev/zero" "/dev/zero: offset 4: expected the TFLite" -- \
  "$edgemem" check --budget "$tmp/budget.json"
# A map from a pipe is read as it arrives, not into a buffer of the pipe's
# limit (the first version of the above filled 1 GiB for a 108 KB map:
# 1,060,872 KB peak RSS).
big_map=$corpus/map_armlink/stm32deployai_cmsisnn_mnist_f407_ac5_5.06u6.map
# Its peak RSS, as the kernel counts it (a sanitizer build needs far more
# address space than memory, so no ulimit -v).
rss=$(python3 - "$edgemem" "$big_map" 2>"$tmp/err" <<'PY'
import resource, subprocess, sys
with open(sys.argv[2], "rb") as f:
    data = f.read()
p = subprocess.run([sys.argv[1], "map", "-"], input=data, capture_output=True)
if p.returncode != 0 or b"(armlink)" not in p.stdout:
    sys.exit("map - exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[:500]))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
if [ -n "$rss" ] && [ "$rss" -lt 300000 ]; then
  echo "ok: map from a pipe: $rss KB at most"
else
  echo "FAIL: map from a pipe: ${rss:-no} KB peak RSS (a 108 KB map)"; head -c 2000 "$tmp/err"; fail=1
fi
# What the first bytes show is still named.
expect 2 "plan of a map" "it looks like" -- "$edgemem" plan "$map"
# A trace refused on its first 64 KiB is refused then, not at the end of an endless source.
expect 2 "analyze /dev/zero" "/dev/zero: " -- "$edgemem" analyze /dev/zero
expect 2 "diff of /dev/zero" "/dev/zero: " -- "$edgemem" diff "$src/examples/traces/kws_leak.emt" /dev/zero
mkfifo "$tmp/fifo"
(head -c 3000000 /dev/urandom; exec sleep 60) >"$tmp/fifo" &
writer=$!
expect 2 "analyze of random bytes from a source that stays open" "fifo: " -- "$edgemem" analyze "$tmp/fifo"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null

# An ELF whose e_shstrndx names no section of it: every section read as ""
# and the vector table unfound, exit 0. Refused by each command that reads one.
elf=$src/examples/traces/kws_leak.elf
python3 - "$elf" "$tmp/shstrndx.elf" <<'PY'
import struct, sys
elf = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<H", elf, 50, 0x7fff)  # ELF32 e_shstrndx
open(sys.argv[2], "wb").write(elf)
PY
bad="shstrndx.elf: offset 50: e_shstrndx 32767 is not the section name table's index"
expect 2 "map --elf, e_shstrndx out of range" "$bad" -- "$edgemem" map --elf "$tmp/shstrndx.elf"
expect 2 "stack --elf, e_shstrndx out of range" "$bad" -- "$edgemem" stack "$corpus/su" --elf "$tmp/shstrndx.elf"
expect 2 "analyze --elf, e_shstrndx out of range" "$bad" -- \
  "$edgemem" analyze "$src/examples/traces/kws_leak.emt" --elf "$tmp/shstrndx.elf"
expect 2 "diff of an ELF, e_shstrndx out of range" "$bad" -- "$edgemem" diff "$elf" "$tmp/shstrndx.elf"

# Control bytes a damaged file holds are quoted escaped, not sent to the
# terminal: a .su line's qualifier once set the window title and cleared it.
printf 'main.c:3:5:main\t16\tstatic\033]0;owned\007\033[2J\n' >"$tmp/escape.su"
expect 2 "stack: escape sequences in a .su line" 'found "static\\x1B]0;owned\\x07\\x1B\[2J"' -- \
  "$edgemem" stack "$tmp/escape.su"
printf '[MEM][1] ALLOC ptr=0x1000 size=16 pool=heap\n[MEM][2] AL\033[2JLOC ptr=0x2000 size=8\n' >"$tmp/escape.log"
expect 0 "analyze: an escape sequence in a [MEM] line" 'unknown .MEM. verb .AL\\x1B\[2JLOC.' -- \
  "$edgemem" analyze "$tmp/escape.log" --format log
if grep -q "$(printf '\033')" "$tmp/out" "$tmp/err"; then
  echo "FAIL: analyze printed the [MEM] line's escape byte raw"; fail=1
fi

# [MEM] lines at the 64-bit edge: a block past 2^64 is dropped as impossible,
# never wrapped to a small address or size; with nothing else the error
# says so, not "expected [MEM] lines".
printf '[MEM][1] ALLOC size=0x20 addr=0xFFFFFFFFFFFFFFF0\n[MEM][2] ALLOC size=0xFFFFFFFFFFFFFFFF addr=0x1000\n' \
  >"$tmp/edge.log"
expect 2 "[MEM] blocks past 2^64 only" \
  "edge.log: 2 memory events decoded, none possible (the first: alloc at time 1: a block of 32 B at 0xfffffffffffffff0 runs past the 64-bit address space)" \
  -- "$edgemem" analyze "$tmp/edge.log"

# Past `ulimit -f` a write fails (EFBIG): said, exit 2, the report still
# printed, no temporary left; SIGXFSZ once ended the run with none of that.
leak=$src/examples/traces/kws_leak.emt
mkdir "$tmp/w"
expect 2 "--html past ulimit -f" "r.html: cannot write: File too large" -- \
  bash -c "cd \"$tmp/w\" && ulimit -f 20 && exec \"$edgemem\" analyze \"$leak\" --html r.html"
grep -q "LEAK" "$tmp/out" || { echo "FAIL: past ulimit -f: no report on stdout"; fail=1; }
[ -z "$(ls -A "$tmp/w")" ] || { echo "FAIL: past ulimit -f: left behind: $(ls -A "$tmp/w")"; fail=1; }
# --textlog is written through a temporary as every export (docs/exports.md):
# a write that fails leaves the old log whole (it was cut in place).
echo "an older log" >"$tmp/w/t.log"
expect 2 "--textlog past ulimit -f" "t.log: cannot write: File too large" -- \
  bash -c "cd \"$tmp/w\" && ulimit -f 20 && exec \"$edgemem\" analyze \"$leak\" --textlog t.log"
[ "$(cat "$tmp/w/t.log")" = "an older log" ] || { echo "FAIL: a failed --textlog replaced the old file"; fail=1; }
[ "$(ls -A "$tmp/w")" = t.log ] || { echo "FAIL: --textlog left behind: $(ls -A "$tmp/w")"; fail=1; }

# diff of a cut trace says so, in text and JSON: "leaked -18,676 B" once
# came with no word that the second trace had lost its end.
head -c 3000 "$leak" >"$tmp/cut.emt"
cut_said=ok
"$edgemem" diff "$leak" "$tmp/cut.emt" >"$tmp/out" 2>"$tmp/err"
grep -q "^.*\[DATA LOST\].* $tmp/cut.emt: .*cut-off" "$tmp/out" && ! grep -q "DATA LOST.* $leak" "$tmp/out" ||
  { echo "FAIL: diff of a cut trace does not say it lost data:"; cat "$tmp/out"; cut_said=; }
"$edgemem" diff --json "$leak" "$tmp/cut.emt" >"$tmp/out" 2>"$tmp/err"
python3 -c "import json, sys; d = json.load(open(sys.argv[1]))['data_lost']; sys.exit(d['before'] is not None or not d['after'])" \
  "$tmp/out" || { echo "FAIL: diff --json of a cut trace: no data_lost.after"; cut_said=; }
[ -n "$cut_said" ] && echo "ok: diff of a cut trace" || fail=1

exit $fail
