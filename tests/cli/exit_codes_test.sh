#!/usr/bin/env bash
# The command line as CI scripts use it: exit codes 0/1/2, one-line errors,
# stdin, and the JSON document on stdout.
set -u
edgemem=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect CODE DESCRIPTION -- command...
  local want=$1 what=$2
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$tmp/err"; fail=1
  else
    echo "ok: $what"
  fi
}

expect 0 "demo runs" -- "$edgemem" demo
grep -q "model.c:" "$tmp/out" || { echo "FAIL: demo does not name the leak site"; fail=1; }
expect 2 "missing file" -- "$edgemem" analyze "$tmp/nope.log"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "nope.log" "$tmp/err" || { echo "FAIL: error is not one line naming the file"; fail=1; }
printf 'hello\nworld\n' >"$tmp/plain.txt"
expect 2 "text without records" -- "$edgemem" analyze "$tmp/plain.txt"
printf '\x13\x37\x42\x99' >"$tmp/junk.bin"
expect 2 "garbage as seedbin" -- "$edgemem" analyze --format seedbin "$tmp/junk.bin"
grep -q "offset 0" "$tmp/err" || { echo "FAIL: garbage error does not name the offset"; fail=1; }
expect 2 "bad --fail-on" -- "$edgemem" analyze --fail-on leaks "$src/examples/traces/kws_fragment.log"
expect 2 "bad --format" -- "$edgemem" analyze --format xml "$src/examples/traces/kws_fragment.log"
expect 1 "--fail-on fragmentation=danger breaks" -- "$edgemem" analyze --fail-on fragmentation=danger "$src/examples/traces/kws_fragment.log"
expect 0 "--fail-on guard holds" -- "$edgemem" analyze --fail-on guard "$src/examples/traces/kws_fragment.log"
expect 0 "stdin" -- sh -c "\"$edgemem\" analyze - <\"$src/examples/traces/kws_fragment.log\""
grep -q "ALLOC FAIL" "$tmp/out" || { echo "FAIL: stdin analysis lost the failed allocation"; fail=1; }
expect 0 "json" -- "$edgemem" analyze --json "$src/examples/traces/kws_fragment.log"
grep -q '"schema": "edgemem.analyze/1"' "$tmp/out" || { echo "FAIL: no schema in JSON"; fail=1; }
# edgemem plan: a model, its JSON, and damaged input.
model=$src/../shared/corpus/tflite/mlperftiny_vww_96_int8.tflite
if [ -f "$model" ]; then
  expect 0 "plan" -- "$edgemem" plan "$model"
  grep -q "lower bound" "$tmp/out" || { echo "FAIL: plan prints no lower bound"; fail=1; }
  expect 0 "plan --json" -- "$edgemem" plan --json "$model"
  grep -q '"schema": "edgemem.plan/1"' "$tmp/out" || { echo "FAIL: no plan schema"; fail=1; }
  head -c 3000 "$model" >"$tmp/cut.tflite"
  expect 2 "truncated model" -- "$edgemem" plan "$tmp/cut.tflite"
  grep -q "cut.tflite" "$tmp/err" || { echo "FAIL: model error does not name the file"; fail=1; }
fi
expect 2 "not a model" -- "$edgemem" plan "$tmp/plain.txt"
# edgemem map: a real map, and text that is not one.
map=$src/../shared/corpus/map/own_cm4_O2.map
if [ -f "$map" ]; then
  expect 0 "map" -- "$edgemem" map "$map"
  grep -q "tensor_arena" "$tmp/out" || { echo "FAIL: map does not find the arena"; fail=1; }
fi
expect 2 "not a map" -- "$edgemem" map "$tmp/plain.txt"
# edgemem fit: fits, does not fit (exit 1, for CI), unknown chip (exit 2).
kws=$src/../shared/corpus/tflite/tflm_keyword_scrambled.tflite
person=$src/../shared/corpus/tflite/tflm_person_detect.tflite
if [ -f "$map" ] && [ -f "$kws" ]; then
  expect 0 "fit" -- "$edgemem" fit "$kws" --map "$map" --mcu nRF52840
  grep -q "^FITS" "$tmp/out" || { echo "FAIL: fit prints no verdict"; fail=1; }
  expect 1 "fit: too big for the chip" -- "$edgemem" fit "$person" --map "$map" --mcu STM32F103C8
  grep -q "SHORT by" "$tmp/out" || { echo "FAIL: fit does not say how much is missing"; fail=1; }
  expect 1 "fit --json exits 1 too" -- "$edgemem" fit "$person" --map "$map" --ram 65536 --flash 262144 --json
  grep -q '"fits": false' "$tmp/out" || { echo "FAIL: fit JSON does not say it does not fit"; fail=1; }
  expect 2 "fit: unknown chip" -- "$edgemem" fit "$kws" --map "$map" --mcu Z80
  expect 2 "fit: text as map" -- "$edgemem" fit "$kws" --map "$tmp/plain.txt"
fi
# edgemem diff: two builds, two runs, and a map against a trace (exit 2).
if [ -f "$map" ]; then
  expect 0 "diff two maps" -- "$edgemem" diff "$map" "$src/../shared/corpus/map/own_cm4_O0.map"
  grep -q "dot_s8  \[new\]" "$tmp/out" || { echo "FAIL: diff does not show the new symbol"; fail=1; }
  expect 2 "diff map vs trace" -- "$edgemem" diff "$map" "$src/examples/traces/kws_fragment.log"
fi
expect 0 "diff two traces" -- "$edgemem" diff "$src/examples/traces/kws_fragment.log" "$src/examples/traces/kws_leak.emt"
grep -q "leak rate" "$tmp/out" || { echo "FAIL: trace diff shows no leak rate"; fail=1; }
# edgemem check: budgets that hold (0), one that breaks (1), a broken budget file (2).
if [ -f "$map" ]; then
  # Inputs named in a budget are relative to the budget file.
  mkdir -p "$tmp/fw" && cp "$map" "$tmp/fw/fw.map"
  cat >"$tmp/ok.json" <<JSON
{"schema": "edgemem.budget/1", "inputs": {"map": "fw/fw.map"},
 "regions": {"RAM": {"max_percent": 85}}, "symbols": {"tensor_arena": {"max_bytes": 16384}}}
JSON
  expect 0 "check: budgets hold" -- "$edgemem" check --budget "$tmp/ok.json"
  cat >"$tmp/tight.json" <<JSON
{"inputs": {"map": "fw/fw.map"}, "regions": {"RAM": {"max_percent": 30}}}
JSON
  expect 1 "check: RAM over budget" -- "$edgemem" check --budget "$tmp/tight.json"
  grep -q "budget broken: regions.RAM.max_percent" "$tmp/err" || { echo "FAIL: check does not name the broken budget"; fail=1; }
  [ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: check prints more than one line per broken budget"; fail=1; }
  echo '{"regions": {"RAM": {"max_percent": 30}}' >"$tmp/bad.json"
  expect 2 "check: malformed budget" -- "$edgemem" check --budget "$tmp/bad.json" --map "$map"
  echo '{"regons": {}}' >"$tmp/typo.json"
  expect 2 "check: unknown key" -- "$edgemem" check --budget "$tmp/typo.json" --map "$map"
  grep -q "unknown key" "$tmp/err" || { echo "FAIL: typo in a budget is not named"; fail=1; }
fi
expect 1 "check: trace leaks" -- "$edgemem" check --budget /dev/stdin --trace "$src/examples/traces/kws_leak.emt" <<<'{"leak": {"max_bytes_per_inference": 0}}'
# edgemem stack: the corpus' own build, and a directory with nothing in it.
su=$src/../shared/corpus/su
if [ -d "$su" ]; then
  mkdir -p "$tmp/o2" && cp "$su"/own_O2_* "$tmp/o2/"
  expect 0 "stack" -- "$edgemem" stack "$tmp/o2"
  grep -q "136 B" "$tmp/out" || { echo "FAIL: stack does not find 136 B"; fail=1; }
fi
mkdir -p "$tmp/empty"
expect 2 "stack without .su files" -- "$edgemem" stack "$tmp/empty"
# analyze refuses what is not a trace (exit 2, one line: the file, what it
# looks like, what to run instead) instead of decoding it as ITM.
refused() {  # refused DESCRIPTION FILE EXPECTED-LINE
  expect 2 "analyze refuses $1" -- "$edgemem" analyze "$2"
  [ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: refusal of $1 is not one line"; cat "$tmp/err"; fail=1; }
  grep -qF -- "$3" "$tmp/err" || { echo "FAIL: refusal of $1 does not say: $3"; cat "$tmp/err"; fail=1; }
  [ ! -s "$tmp/out" ] || { echo "FAIL: $1 printed an analysis"; fail=1; }
}
refused "an ELF" "$src/examples/traces/kws_leak.elf" \
  "kws_leak.elf: an ELF file, not a trace; for its sections and symbols run \`edgemem map --elf $src/examples/traces/kws_leak.elf\`"
refused "a .tflite model" "$src/fuzz/corpus/tflite/tflm_simple_add_model.tflite" \
  "tflm_simple_add_model.tflite: a TFLite model, not a trace; for its tensor arena plan run \`edgemem plan"
head -c 102400 /dev/urandom >"$tmp/random.bin"
refused "100 KB of random bytes" "$tmp/random.bin" "random.bin: not a trace edgemem can read (tried emt: no SYNC marker; "
grep -q "; force a decoder with --format$" "$tmp/err" || { echo "FAIL: random bytes: no --format advice"; fail=1; }
# An ESP32 app image header (E9, 4 segments, DIO, 4 MB @ 40 MHz, entry 0x400807a8) and its payload.
{ printf '\xe9\x04\x02\x20\xa8\x07\x08\x40'; head -c 16 /dev/zero; head -c 8192 /dev/urandom; } >"$tmp/app.bin"
refused "an ESP32 app image" "$tmp/app.bin" "app.bin: a firmware image (ESP app image, 4 segments), not a trace; "
printf ':020000040800F2\n:10000000000002208901000891010008930100082E\n:00000001FF\n' >"$tmp/fw.hex"
refused "an Intel HEX image" "$tmp/fw.hex" "fw.hex: a firmware image (Intel HEX), not a trace; "
gnu_map=$src/fuzz/corpus/linker_map/own_cm4_O2.map
refused "a GNU map" "$gnu_map" "own_cm4_O2.map: a GNU ld linker map, not a trace; for its regions, sections and symbols run \`edgemem map $gnu_map\`"
refused "an IAR map" "$src/fuzz/corpus/linker_map/iar_head.map" "iar_head.map: an IAR linker map, not a trace; "
expect 2 "diff of two models is refused" -- "$edgemem" diff "$src/fuzz/corpus/tflite/tflm_simple_add_model.tflite" \
  "$src/fuzz/corpus/tflite/tflm_hello_world_int8.tflite"
grep -q "a TFLite model, not a trace" "$tmp/err" || { echo "FAIL: diff of two models is not refused as models"; cat "$tmp/err"; fail=1; }
! grep -q "changed)" "$tmp/out" || { echo "FAIL: diff of two models printed a comparison"; fail=1; }
expect 0 "--format forces a decoder on anything" -- "$edgemem" analyze --format itm "$src/examples/traces/kws_leak.elf"
exit $fail
