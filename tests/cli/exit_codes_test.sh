#!/usr/bin/env bash
# The command line as CI scripts use it: exit codes 0/1/2, one-line errors,
# stdin, and the JSON document on stdout.
set -u
edgemem=$1
src=$2
# Real files written by others, vendored in tests/data/corpus (SOURCES.md there).
corpus=$src/tests/data/corpus
# Missing test data is a broken checkout: say which file and stop.
for f in tflite/mlperftiny_vww_96_int8.tflite tflite/tflm_keyword_scrambled.tflite tflite/tflm_person_detect.tflite \
         map/own_cm4_O2.map map/own_cm4_O0.map map/own_cm4_O2.elf map/own_cm4_O0.elf \
         map/logitacker_nrf52840_pca10059.map su/own_O2_own_app.su; do
  [ -r "$corpus/$f" ] || { echo "FAIL: test data missing: $corpus/$f (see tests/data/SOURCES.md)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$(dirname "$0")/expect.sh"

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
# An output that is the input, or two outputs on one file, are refused before anything is read or written.
cp "$src/examples/traces/kws_fragment.log" "$tmp/in.log"
expect 2 "--textlog onto its own input" -- "$edgemem" analyze "$tmp/in.log" --textlog "$tmp/./in.log"
cmp -s "$tmp/in.log" "$src/examples/traces/kws_fragment.log" || { echo "FAIL: --textlog onto the input changed it"; fail=1; }
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "is an input" "$tmp/err" || { echo "FAIL: the clash is not one line"; fail=1; }
expect 2 "two exports onto one file" -- "$edgemem" analyze "$tmp/in.log" --perfetto "$tmp/x" --chrome-json "$tmp/x"
[ ! -e "$tmp/x" ] || { echo "FAIL: a refused run wrote an export"; fail=1; }
expect 0 "two exports onto /dev/null (devices take any number)" -- "$edgemem" analyze "$tmp/in.log" --html /dev/null --perfetto /dev/null
expect 2 "watch --html onto its source" -- "$edgemem" watch "$tmp/in.log" --until 1 --html "$tmp/in.log"
cmp -s "$tmp/in.log" "$src/examples/traces/kws_fragment.log" || { echo "FAIL: watch --html onto the input changed it"; fail=1; }
# "-", /dev/stdout or the file stdout goes to: the output alone on stdout,
# the summary on stderr (a file named "-" was written, /dev/stdout mixed the
# two, and a redirected file was emptied under the summary); two outputs
# there, or one with --json, are refused.
expect 0 "--textlog - writes to stdout" -- sh -c "cd \"$tmp\" && \"$edgemem\" analyze in.log --textlog -"
[ ! -e "$tmp/-" ] && grep -q '^\[MEM\]' "$tmp/out" && ! grep -q "ALLOC FAIL" "$tmp/out" && grep -q "ALLOC FAIL" "$tmp/err" ||
  { echo "FAIL: --textlog - is not the log alone on stdout"; fail=1; }
expect 0 "--folded into the file stdout goes to" -- sh -c "\"$edgemem\" analyze \"$tmp/in.log\" --folded \"$tmp/f.txt\" >\"$tmp/f.txt\""
grep -q "ALLOC FAIL" "$tmp/f.txt" && { echo "FAIL: the summary went into the folded stacks"; fail=1; }
[ -s "$tmp/f.txt" ] && grep -q "ALLOC FAIL" "$tmp/err" || { echo "FAIL: folded stacks or summary lost"; fail=1; }
expect 2 "two outputs on stdout" -- "$edgemem" analyze "$tmp/in.log" --folded - --textlog /dev/stdout
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "standard output" "$tmp/err" || { echo "FAIL: two outputs on stdout not one line"; fail=1; }
expect 2 "--json and an output on stdout" -- "$edgemem" analyze "$tmp/in.log" --json --perfetto -
expect 2 "watch --html -" -- "$edgemem" watch "$tmp/in.log" --until 1 --html -
# A report that cannot be written to stdout is no success, and no abort.
if [ -w /dev/full ]; then
  expect 2 "text report to a full disk" -- sh -c "\"$edgemem\" analyze \"$tmp/in.log\" >/dev/full"
  grep -q "cannot write the report to stdout" "$tmp/err" || { echo "FAIL: a full stdout is not said"; cat "$tmp/err"; fail=1; }
  expect 2 "JSON to a full disk" -- sh -c "\"$edgemem\" analyze --json \"$tmp/in.log\" >/dev/full"
  # Said as standard output with the write's own reason: not as fmt's
  # "cannot write to file", nor, after an export on stdout had failed, with
  # the errno of a later stat ("No such file or directory") on a second line.
  [ "$(cat "$tmp/err")" = "edgemem: cannot write the report to stdout: No space left on device" ] ||
    { echo "FAIL: JSON to a full stdout:"; cat "$tmp/err"; fail=1; }
  expect 2 "--folded - to a full disk" -- sh -c \
    "\"$edgemem\" analyze \"$tmp/in.log\" --folded - --speedscope \"$tmp/full.speedscope\" >/dev/full"
  [ "$(grep -c "cannot write" "$tmp/err")" = 1 ] && ! grep -q "No such file" "$tmp/err" ||
    { echo "FAIL: --folded - to a full stdout is not said once with its reason:"; grep edgemem: "$tmp/err"; fail=1; }
fi
printf '{"schema":"edgemem.budget/1","regions":{"RAM":{"max_percent":1e400}}}' >"$tmp/huge.json"
expect 2 "a budget number past any double" -- "$edgemem" check --budget "$tmp/huge.json" --map "$corpus/map/own_cm4_O2.map"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "huge.json" "$tmp/err" || { echo "FAIL: 1e400 is not one line naming the file"; cat "$tmp/err"; fail=1; }
# --metrics-file is written by a rename: a FIFO or device is refused, not replaced; a link keeps pointing at the new file.
mkfifo "$tmp/fifo"
expect 2 "--metrics-file onto a FIFO" -- "$edgemem" analyze "$tmp/in.log" --metrics-file "$tmp/fifo"
[ -p "$tmp/fifo" ] || { echo "FAIL: --metrics-file replaced a FIFO"; fail=1; }
expect 2 "record -o onto a FIFO" -- "$edgemem" record -o "$tmp/fifo" -- true
touch "$tmp/real.prom" && ln -s real.prom "$tmp/link.prom"
expect 0 "--metrics-file through a link" -- "$edgemem" analyze "$tmp/in.log" --metrics-file "$tmp/link.prom"
[ -L "$tmp/link.prom" ] && grep -q "edgemem_inferences_total" "$tmp/real.prom" || { echo "FAIL: the link was replaced"; fail=1; }
cp "$corpus/map/own_cm4_O2.map" "$tmp/a.map"
expect 2 "map --html onto its map" -- "$edgemem" map "$tmp/a.map" --html "$tmp/a.map"
cmp -s "$tmp/a.map" "$corpus/map/own_cm4_O2.map" || { echo "FAIL: map --html onto the map changed it"; fail=1; }
echo keep >"$tmp/old.log"
expect 2 "a trace that cannot be read" -- "$edgemem" analyze "$tmp/nope.log" --textlog "$tmp/old.log"
[ "$(cat "$tmp/old.log")" = keep ] || { echo "FAIL: a failed run changed an earlier --textlog file"; fail=1; }
expect 2 "--top -1 (CLI11 read it as 2^64 - 1)" -- "$edgemem" map "$corpus/map/own_cm4_O2.map" --top -1
expect 2 "--clock-hz inf" -- "$edgemem" analyze "$tmp/in.log" --clock-hz inf
# An empty file name (an unset shell variable) was taken for the option left
# out: no report written, or no ELF read, exit 0.
for args in "analyze $tmp/in.log --html" "analyze $tmp/in.log --perfetto" "analyze $tmp/in.log --metrics-file" \
            "analyze $tmp/in.log --elf" "watch $tmp/in.log --until 1 --metrics-file" "record -o" \
            "map $corpus/map/own_cm4_O2.map --elf" "stack $corpus/su --html" "demo --html"; do
  # shellcheck disable=SC2086  # the words of $args are the arguments
  expect 2 "$args ''" -- "$edgemem" $args ""
  [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "expected a file name, got an empty one" "$tmp/err" ||
    { echo "FAIL: $args '': not one line asking for a file name"; cat "$tmp/err"; fail=1; }
done
expect 0 "fit --list-mcus --json" -- "$edgemem" fit --list-mcus --json
cp "$tmp/out" "$tmp/mcus.json"
expect 0 "that list read back as --mcu-table" -- "$edgemem" fit --list-mcus --mcu-table "$tmp/mcus.json"
"$edgemem" fit --list-mcus >"$tmp/builtin.txt" && cmp -s "$tmp/out" "$tmp/builtin.txt" || { echo "FAIL: --list-mcus --json does not read back as the built-in table"; fail=1; }
expect 0 "json" -- "$edgemem" analyze --json "$src/examples/traces/kws_fragment.log"
grep -q '"schema": "edgemem.analyze/1"' "$tmp/out" || { echo "FAIL: no schema in JSON"; fail=1; }
captures="$src/tests/data/tflm_captures"
expect 0 "a TFLite Micro capture its plan matches" -- "$edgemem" analyze "$captures/tflm_hello_world_int8.emt" \
  --model "$src/tests/data/corpus/tflite/tflm_hello_world_int8.tflite" --target x86-64
expect 1 "an x86-64 TFLite Micro capture beside the Cortex-M plan" -- "$edgemem" analyze \
  "$captures/mlperftiny_kws_ref_model.emt" --model "$src/tests/data/corpus/tflite/mlperftiny_kws_ref_model.tflite"
expect 2 "--model with a trace that is no TFLite Micro capture" -- "$edgemem" analyze \
  "$src/examples/traces/kws_leak.emt" --model "$src/tests/data/corpus/tflite/tflm_hello_world_int8.tflite"
grep -q "^Peak" "$tmp/out" || { echo "FAIL: a capture --model cannot compare lost its report"; fail=1; }
# edgemem plan: a model, its JSON, and damaged input.
model=$corpus/tflite/mlperftiny_vww_96_int8.tflite
expect 0 "plan" -- "$edgemem" plan "$model"
grep -q "lower bound" "$tmp/out" || { echo "FAIL: plan prints no lower bound"; fail=1; }
# The parts listed do not add up to the arena on their own (a helper summed
# them): the size line says which moment of AllocateTensors() sets it.
expect 0 "plan, planning sets the size" -- "$edgemem" plan --target x86-64 "$corpus/tflite/tflm_keyword_scrambled.tflite"
grep -q "^  size            18,016 B  .* planning 18,000 B (the largest)" "$tmp/out" ||
  { echo "FAIL: plan does not say planning sets the size"; grep "^  size" "$tmp/out"; fail=1; }
expect 0 "plan --json" -- "$edgemem" plan --json "$model"
grep -q '"schema": "edgemem.plan/1"' "$tmp/out" || { echo "FAIL: no plan schema"; fail=1; }
head -c 3000 "$model" >"$tmp/cut.tflite"
expect 2 "truncated model" -- "$edgemem" plan "$tmp/cut.tflite"
grep -q "cut.tflite" "$tmp/err" || { echo "FAIL: model error does not name the file"; fail=1; }
expect 2 "not a model" -- "$edgemem" plan "$tmp/plain.txt"
# Damage: external data past the end of the file (tests/plan/data/README.md).
expect 2 "plan: a buffer past the end of the file" -- "$edgemem" plan "$src/tests/plan/data/h_extbuf_size_past_eof.tflite"
grep -q "past the end of the 464 B file" "$tmp/err" || { echo "FAIL: plan does not say the buffer lies past the file"; cat "$tmp/err"; fail=1; }
# Models TFLite Micro refuses: exit 1, no arena, in plan and fit.
expect 1 "plan: a planned tensor's offline offset of -5" -- "$edgemem" plan "$src/tests/plan/data/p_offline_neg5.tflite"
expect 1 "plan refuses a 5 GiB tensor" -- "$edgemem" plan --json "$src/tests/plan/data/e_huge_5G.tflite"
grep -q '"recommended_arena_bytes": null' "$tmp/out" || { echo "FAIL: plan recommends an arena for a 5 GiB tensor"; fail=1; }
expect 1 "fit refuses weights outside the flatbuffer" -- "$edgemem" fit "$src/tests/plan/data/t3_extbuf.tflite" --ram 1M --flash 1M
# A Flex model TFLite Micro cannot run: refused by plan, fit and check, never sized.
flex=$src/tests/data/realworld/tflite/litert_multi_add_flex.tflite
expect 1 "plan refuses a Flex model" -- "$edgemem" plan --json "$flex"
grep -q '"recommended_arena_bytes": null' "$tmp/out" || { echo "FAIL: a Flex model got an arena size"; fail=1; }
expect 1 "fit refuses a Flex model" -- "$edgemem" fit "$flex" --map "$src/tests/data/realworld/map/microdoom_zephyr_esp32.map" --ram 65536 --flash 262144
grep -q "FlexAddV2" "$tmp/out" || { echo "FAIL: fit does not name the Flex op"; fail=1; }
expect 1 "fit --json of a Flex model claims no RAM fit" -- "$edgemem" fit --json "$flex" --mcu nrf52840
python3 -c "
import json, sys
d = json.load(open('$tmp/out'))
sys.exit(not (d['verdict'] == 'tflm_cannot_run' and d['ram']['need_bytes'] is None and d['ram']['fits'] is None))" ||
  { echo "FAIL: fit JSON of a Flex model claims a RAM need or fit"; fail=1; }
expect 1 "check refuses a Flex model" -- "$edgemem" check --budget /dev/stdin --model "$flex" --map "$corpus/map/own_cm4_O2.map" <<<'{"arena": {"min_margin_bytes": 0}}'
grep -q "^BROKEN arena.model .*FlexAddV2" "$tmp/out" || { echo "FAIL: check does not report the Flex op as a broken budget"; cat "$tmp/out"; fail=1; }
# edgemem map: a real map, and text that is not one.
map=$corpus/map/own_cm4_O2.map
expect 0 "map" -- "$edgemem" map "$map"
grep -q "tensor_arena" "$tmp/out" || { echo "FAIL: map does not find the arena"; fail=1; }
expect 2 "not a map" -- "$edgemem" map "$tmp/plain.txt"
# edgemem fit: fits, does not fit (exit 1, for CI), unknown chip (exit 2).
kws=$corpus/tflite/tflm_keyword_scrambled.tflite
person=$corpus/tflite/tflm_person_detect.tflite
expect 0 "fit" -- "$edgemem" fit "$kws" --map "$map" --mcu nRF52840
grep -q "^FITS" "$tmp/out" || { echo "FAIL: fit prints no verdict"; fail=1; }
expect 1 "fit: too big for the chip" -- "$edgemem" fit "$person" --map "$map" --mcu STM32F103C8
grep -q "SHORT by" "$tmp/out" || { echo "FAIL: fit does not say how much is missing"; fail=1; }
expect 1 "fit --json exits 1 too" -- "$edgemem" fit "$person" --map "$map" --ram 65536 --flash 262144 --json
grep -q '"fits": false' "$tmp/out" || { echo "FAIL: fit JSON does not say it does not fit"; fail=1; }
# The firmware's own 16 KiB tensor_arena is short of MLPerf Tiny KWS's: it
# fits the chip, but the firmware as built fails AllocateTensors(), so CI stops it.
expect 1 "fit: the declared arena is short" -- "$edgemem" fit "$corpus/tflite/mlperftiny_kws_ref_model.tflite" --map "$map" --mcu nRF52840
grep -q "^FITS -- once the declared arena is enlarged" "$tmp/out" || { echo "FAIL: fit does not say the arena is short"; fail=1; }
expect 2 "fit: --arena-symbol names no symbol" -- "$edgemem" fit "$corpus/tflite/mlperftiny_kws_ref_model.tflite" --map "$map" --arena-symbol no_such_array
grep -q "no symbol no_such_array in the map (--arena-symbol)" "$tmp/err" || { echo "FAIL: --arena-symbol not found: $(cat "$tmp/err")"; fail=1; }
expect 2 "fit: --arena-symbol without --map" -- "$edgemem" fit "$corpus/tflite/mlperftiny_kws_ref_model.tflite" --mcu nRF52840 --arena-symbol tensor_arena
expect 2 "fit: unknown chip" -- "$edgemem" fit "$kws" --map "$map" --mcu Z80
expect 2 "fit: 8 GiB of RAM on a 32-bit target" -- "$edgemem" fit "$kws" --ram 8G --flash 1M
expect 0 "fit: 8 GiB of RAM on x86-64" -- "$edgemem" fit "$kws" --ram 8G --flash 1M --target x86-64
expect 2 "fit: text as map" -- "$edgemem" fit "$kws" --map "$tmp/plain.txt"
# An ELF given as the map: named, with where it goes (it was "line 23: expected ...").
expect 2 "fit: an ELF as map" -- "$edgemem" fit "$kws" --map "$corpus/map/own_cm4_O2.elf" --mcu nRF52840
grep -q "an ELF file, not a linker map: .* --elf " "$tmp/err" || { echo "FAIL: fit does not say the ELF goes beside the map"; cat "$tmp/err"; fail=1; }
# A map with no flash region cannot stand for the chip (it read 0 B of flash:
# DOES NOT FIT), nor say what the firmware takes of a chip named (its
# sections lie in no region: 0 B, it read FITS). The advice is the same
# with the chip named or not (in review, naming it as advised was refused).
sed '/^FLASH /d' "$map" >"$tmp/ram_only.map"
for chip in "" "--mcu nRF52840"; do
  expect 2 "fit: a map without flash ($chip)" -- "$edgemem" fit "$kws" --map "$tmp/ram_only.map" $chip
  grep -q "names no flash region.*so what the firmware takes of the chip is not known: leave out --map" "$tmp/err" ||
    { echo "FAIL: fit does not say the map names no flash ($chip)"; cat "$tmp/err"; fail=1; }
done
# edgemem diff: two builds, two runs, and a map against a trace (exit 2).
expect 0 "diff two maps" -- "$edgemem" diff "$map" "$corpus/map/own_cm4_O0.map"
grep -q "dot_s8  \[new\]" "$tmp/out" || { echo "FAIL: diff does not show the new symbol"; fail=1; }
expect 2 "diff map vs trace" -- "$edgemem" diff "$map" "$src/examples/traces/kws_fragment.log"
# A map against an ELF would show every row changed with nothing grown (found in review).
armlink_map=$src/tests/data/realworld/armlink/liteos_stm32f429_ac5_5.05u1.map
expect 2 "diff map vs ELF" -- "$edgemem" diff "$armlink_map" "$src/tests/data/realworld/elf/liteos_stm32f429_ac5_5.05u1.axf"
grep -q "compare two maps or two ELFs" "$tmp/err" || { echo "FAIL: diff map vs ELF does not say what to compare"; fail=1; }
# A map cut short is a map with the parser's reason, not "no map or ELF"; a directory is named as one.
head -c 2000 "$map" >"$tmp/diff-cut.map"
expect 2 "diff of a map cut short" -- "$edgemem" diff "$tmp/diff-cut.map" "$map"
grep -q "diff-cut.map: line" "$tmp/err" || { echo "FAIL: diff does not give the cut map's reason"; cat "$tmp/err"; fail=1; }
expect 2 "diff of a directory" -- "$edgemem" diff "$tmp" "$map"
grep -q "a directory" "$tmp/err" || { echo "FAIL: diff does not say it was given a directory"; fail=1; }
expect 2 "analyze of a directory" -- "$edgemem" analyze "$tmp"
grep -q "cannot open (a directory, expected a file)" "$tmp/err" || { echo "FAIL: analyze does not say it was given a directory"; cat "$tmp/err"; fail=1; }
expect 0 "diff two traces" -- "$edgemem" diff "$src/examples/traces/kws_fragment.log" "$src/examples/traces/kws_leak.emt"
grep -q "leak rate" "$tmp/out" || { echo "FAIL: trace diff shows no leak rate"; fail=1; }
# edgemem check: budgets that hold (0), one that breaks (1), a broken budget file (2).
# Inputs named in a budget are relative to the budget file.
mkdir -p "$tmp/fw" && cp "$map" "$tmp/fw/fw.map"
cat >"$tmp/ok.json" <<JSON
{"schema": "edgemem.budget/1", "inputs": {"map": "fw/fw.map"},
 "regions": {"RAM": {"max_percent": 85}}, "symbols": {"tensor_arena": {"max_bytes": 16384}}}
JSON
expect 0 "check: budgets hold" -- "$edgemem" check --budget "$tmp/ok.json"
echo '{"Inputs": {"Map": "fw/fw.map"}, "REGIONS": {"ram": {"max_percent": 85}}}' >"$tmp/case.json"
expect 0 "check: inputs and keys in any case" -- "$edgemem" check --budget "$tmp/case.json"
cat >"$tmp/tight.json" <<JSON
{"inputs": {"map": "fw/fw.map"}, "regions": {"RAM": {"max_percent": 30}}}
JSON
expect 1 "check: RAM over budget" -- "$edgemem" check --budget "$tmp/tight.json"
# The verdict first, then the broken budget, all on stdout so nothing comes out of order.
head -1 "$tmp/out" | grep -q "^BROKEN: 1 of 1 budgets" || { echo "FAIL: check does not start with its verdict"; fail=1; }
sed -n 3p "$tmp/out" | grep -q "^BROKEN regions.RAM.max_percent .*31.3 %" || { echo "FAIL: check does not name the broken budget"; fail=1; }
[ ! -s "$tmp/err" ] || { echo "FAIL: check writes its findings to stderr"; cat "$tmp/err"; fail=1; }
expect 1 "check: budget keys and regions in any case, limits as sizes" -- "$edgemem" check --budget /dev/stdin --map "$map" \
  <<<'{"Regions": {"ram": {"max_bytes": "16K"}}}'
grep -q "RAM uses 20,512 B, limit 16,384 B" "$tmp/out" || { echo "FAIL: check does not read 16K"; fail=1; }
expect 1 "check --json exits 1 too" -- "$edgemem" check --json --budget "$tmp/tight.json"
python3 -c "
import json, sys
o = json.load(open('$tmp/out'))['outcomes'][0]
sys.exit(not (o['unit'] == 'fraction' and 0.31 < o['measured'] < 0.32 and o['limit'] == 0.3))" ||
  { echo "FAIL: check JSON lacks the measured fraction and its limit"; fail=1; }
echo '{"regions": {"RAM": {"max_percent": 30}}' >"$tmp/bad.json"
expect 2 "check: malformed budget" -- "$edgemem" check --budget "$tmp/bad.json" --map "$map"
echo '{"regons": {}}' >"$tmp/typo.json"
expect 2 "check: unknown key" -- "$edgemem" check --budget "$tmp/typo.json" --map "$map"
grep -q "unknown key 'regons' (did you mean regions?" "$tmp/err" || { echo "FAIL: typo in a budget is not named"; fail=1; }
expect 1 "check: trace leaks" -- "$edgemem" check --budget /dev/stdin --trace "$src/examples/traces/kws_leak.emt" <<<'{"leak": {"max_bytes_per_inference": 0}}'
# Never a silent pass (found in review): a key given twice in any case, a
# percentage of a region without a length, an --elf beside a --map.
expect 2 "check: a key given twice" -- "$edgemem" check --budget /dev/stdin --map "$map" \
  <<<'{"regions": {"RAM": {"max_bytes": 1}}, "Regions": {"FLASH": {"max_bytes": 100000}}}'
grep -q '"regions" and "Regions"' "$tmp/err" || { echo "FAIL: check does not name the repeated key"; fail=1; }
expect 2 "check: max_percent of a region without a length" -- "$edgemem" check --budget /dev/stdin \
  --map "$src/tests/data/realworld/iar/jagaldol_runningalarm_stm32_ewarm9.30.1.map" <<<'{"regions": {"A0": {"max_percent": 0}}}'
expect 2 "check: --map and --elf together" -- "$edgemem" check --budget /dev/stdin --map "$map" --elf /nonexistent.elf \
  <<<'{"regions": {"RAM": {"max_percent": 90}}}'
# A rebuild whose sections kept their sizes while its code moved: its ELF
# beside the other link's map is not the same link.
relink=$src/tests/data/map_binutils
expect 2 "check: an ELF of another link, sections of the same sizes" -- "$edgemem" check --budget /dev/stdin \
  --map "$relink/relink_fg.map" --elf "$relink/relink_gf.elf" <<<'{"regions": {"FLASH": {"max_bytes": 100}}}'
grep -q "relink_gf.elf: is not of the link .*relink_fg.map describes (f_step: map at 0x08000000, ELF at 0x08000014, ...)" "$tmp/err" ||
  { echo "FAIL: check does not name the symbol that moved"; cat "$tmp/err"; fail=1; }
expect 0 "check: the ELF of the map's own link" -- "$edgemem" check --budget /dev/stdin \
  --map "$relink/relink_fg.map" --elf "$relink/relink_fg.elf" <<<'{"regions": {"FLASH": {"max_bytes": 100}}}'
# An ELF cut to its header: libdwfl took it and named nothing (exit 0, sites
# left as addresses); refused as `map --elf` refuses it (found by fuzzing).
head -c 64 "$src/examples/traces/kws_leak.elf" >"$tmp/cut.elf"
expect 2 "analyze --elf of an ELF cut short" -- "$edgemem" analyze "$src/examples/traces/kws_leak.emt" --elf "$tmp/cut.elf"
grep -q "the ELF is cut short" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] ||
  { echo "FAIL: a cut ELF is not refused in one line"; cat "$tmp/err"; fail=1; }
# JSON nested 150,000 deep: the parser's document was copied recursively and
# overflowed the stack (SIGSEGV, found by fuzzing).
python3 -c "import sys; sys.stdout.write('['*150000+']'*150000)" >"$tmp/deep.json"
expect 2 "check: a budget nested 150,000 deep" -- "$edgemem" check --budget "$tmp/deep.json" --map "$map"
grep -q "nested more than 64 levels deep" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] ||
  { echo "FAIL: a deeply nested budget is not refused in one line"; cat "$tmp/err"; fail=1; }
# edgemem stack: the corpus' own build, and a directory with nothing in it.
su=$corpus/su
mkdir -p "$tmp/o2" && cp "$su"/own_O2_* "$tmp/o2/"
expect 0 "stack" -- "$edgemem" stack "$tmp/o2"
grep -q "136 B" "$tmp/out" || { echo "FAIL: stack does not find 136 B"; fail=1; }
mkdir -p "$tmp/empty"
expect 2 "stack without .su files" -- "$edgemem" stack "$tmp/empty"

# Exit codes, the same rule everywhere: 1 is a verdict against you.
expect 1 "plan: declared arena short" -- "$edgemem" plan --declared 5000 "$kws"
head -2 "$tmp/out" | grep -q "declared 5,000 B: SHORT by 10,808 B" || { echo "FAIL: plan's verdict is not first"; fail=1; }
expect 1 "plan --json: declared arena short" -- "$edgemem" plan --json --declared 5000 "$kws"
grep -q '"verdict": "declared_short"' "$tmp/out" || { echo "FAIL: plan JSON has no verdict"; fail=1; }
expect 2 "plan --reorder of a model with an offline plan" -- "$edgemem" plan --reorder "$corpus/tflite/tflm_person_detect_vela.tflite"
grep -q "offline memory plan" "$tmp/err" || { echo "FAIL: --reorder of a Vela model is not refused"; fail=1; }
# Short only by the 16 B an unaligned array loses: enough if aligned, said so.
expect 0 "plan: declared within the alignment allowance" -- "$edgemem" plan --json --declared 15800 "$kws"
grep -q '"verdict": "declared_enough_if_aligned"' "$tmp/out" || { echo "FAIL: 15,800 B is not enough-if-aligned"; fail=1; }
expect 0 "plan: declared 64K is enough" -- "$edgemem" plan --declared 64K "$kws"
grep -q "declared 65,536 B (64.0 KiB): enough" "$tmp/out" || { echo "FAIL: 64K is not 65,536 B"; fail=1; }
expect 0 "plan: declared 0x10000" -- "$edgemem" plan --declared 0x10000 "$kws"
# declared + the alignment allowance wrapped near 2^64 and read as short.
expect 0 "plan: a declared size near 2^64 is enough" -- "$edgemem" plan --json --declared 0xFFFFFFFFFFFFFFF0 "$kws"
grep -q '"verdict": "declared_enough"' "$tmp/out" || { echo "FAIL: a declared size near 2^64 is not enough"; fail=1; }
expect 2 "plan: a negative size" -- "$edgemem" plan --declared -5 "$kws"
grep -q "'-5' is not a size" "$tmp/err" || { echo "FAIL: -5 is not refused as a size"; fail=1; }
expect 2 "plan: a zero size" -- "$edgemem" plan --declared 0 "$kws"
expect 0 "plan: --target in any case" -- "$edgemem" plan --target X86-64 "$kws"
head -1 "$tmp/out" | grep -q "(kTensorArenaSize, x86-64)" || { echo "FAIL: X86-64 is not read as x86-64"; fail=1; }
expect 2 "plan: --target typo" -- "$edgemem" plan --target cortexm "$kws"
grep -q "did you mean cortex-m?" "$tmp/err" || { echo "FAIL: no did-you-mean for --target"; fail=1; }
expect 0 "fit: MCU in any case, without a map" -- "$edgemem" fit "$kws" --mcu nrf52840
head -1 "$tmp/out" | grep -q "^FITS on nRF52840" || { echo "FAIL: fit's verdict is not first"; fail=1; }
grep -q "firmware's own code and data are not counted" "$tmp/out" || { echo "FAIL: fit without a map does not say what it left out"; fail=1; }
expect 0 "fit --json without a map" -- "$edgemem" fit --json "$kws" --ram 256K --flash 1M
grep -q '"map": null' "$tmp/out" && grep -q '"firmware_counted": false' "$tmp/out" ||
  { echo "FAIL: fit JSON without a map"; fail=1; }
expect 0 "fit with capacities given" -- "$edgemem" fit "$kws" --ram 256K --flash 1M
grep -q "^FITS on 262,144 B RAM and 1,048,576 B flash" "$tmp/out" || { echo "FAIL: fit does not name the capacities it judged against"; head -1 "$tmp/out"; fail=1; }
expect 2 "fit: MCU typo" -- "$edgemem" fit "$kws" --mcu nrf52480
grep -q "did you mean nRF52840?" "$tmp/err" || { echo "FAIL: no did-you-mean for --mcu"; fail=1; }
expect 2 "fit: neither map nor chip" -- "$edgemem" fit "$kws"
expect 2 "fit: --ram -5" -- "$edgemem" fit "$kws" --ram -5 --flash 1M
expect 2 "analyze: --arena-size -5" -- "$edgemem" analyze --arena-size -5 "$src/examples/traces/kws_fragment.log"
expect 0 "analyze: --arena-size 64K" -- "$edgemem" analyze --arena-size 64K "$src/examples/traces/kws_fragment.log"
expect 0 "analyze: --format in any case" -- "$edgemem" analyze --format LOG "$src/examples/traces/kws_fragment.log"
expect 2 "analyze: --format typo" -- "$edgemem" analyze --format seedbn "$src/examples/traces/kws_fragment.log"
grep -q "did you mean seedbin?" "$tmp/err" || { echo "FAIL: no did-you-mean for --format"; fail=1; }
expect 2 "subcommand typo" -- "$edgemem" anaylze "$src/examples/traces/kws_fragment.log"
grep -q "unknown command 'anaylze' (did you mean analyze?" "$tmp/err" || { echo "FAIL: no did-you-mean for a subcommand"; fail=1; }
[ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: the subcommand typo is not one line"; fail=1; }
expect 2 "another command's option" -- "$edgemem" analyze "$src/examples/traces/kws_fragment.log" --until 3 --bogus
[ "$(cat "$tmp/err")" = "edgemem: analyze does not take --until 3 --bogus; --until is an option of watch (see edgemem analyze --help)" ] ||
  { echo "FAIL: words not expected are not named in order with the command that takes them: $(cat "$tmp/err")"; fail=1; }
expect 0 "subcommand in any case" -- "$edgemem" ANALYZE "$src/examples/traces/kws_fragment.log"
for cmd in analyze plan map stack fit check diff; do
  expect 0 "$cmd --help" -- "$edgemem" "$cmd" --help
  grep -q "^Exit codes:" "$tmp/out" && grep -A4 "^Exit codes:" "$tmp/out" | grep -q "^  1 " && grep -q "^Example:" "$tmp/out" ||
    { echo "FAIL: $cmd --help does not list its exit codes with an example"; fail=1; }
done
expect 0 "--version" -- "$edgemem" --version
# `git describe` at every build: the commit checked out now, or one whose
# code is the same (commits of documents only since the build); at
# configure time only, a rebuild after new commits named an old one.
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  described=$(sed -n 's/^edgemem [0-9.]* (\(.*\))$/\1/p' "$tmp/out")
  commit=$(printf '%s' "$described" | sed 's/-dirty$//; s/.*-g\([0-9a-f]*\)$/\1/')
  [ -n "$commit" ] && git -C "$src" cat-file -e "$commit^{commit}" 2>/dev/null &&
    git -C "$src" diff --quiet "$commit" HEAD -- . ':(exclude)docs' ':(exclude)*.md' ||
    { echo "FAIL: --version does not name the commit checked out ($(git -C "$src" rev-parse --short HEAD))"; cat "$tmp/out"; fail=1; }
fi
# map: an ELF where the map goes is read as one; a map and an ELF of two links disagree (1).
expect 0 "map FW.elf" -- "$edgemem" map "$corpus/map/own_cm4_O2.elf"
# No regions in an ELF: not "no region overflowed" over an empty region table.
grep -q "^no memory regions to check (an ELF names none" "$tmp/out" && ! grep -q "^region " "$tmp/out" ||
  { echo "FAIL: map of an ELF claims regions"; head -5 "$tmp/out"; fail=1; }
grep -q "(ELF)" "$tmp/out" || { echo "FAIL: map FW.elf is not read as an ELF"; fail=1; }
grep -Eq "^\.text +0x[0-9a-f]{8} +[0-9,]+ B" "$tmp/out" || { echo "FAIL: map addresses are not 0x%08x or sizes lack a unit"; fail=1; }
expect 1 "map: map and ELF from two links" -- "$edgemem" map "$map" --elf "$corpus/map/own_cm4_O0.elf"
head -1 "$tmp/out" | grep -q "^MISMATCH" || { echo "FAIL: the mismatch is not the first line"; fail=1; }
expect 1 "map --json: map and ELF from two links" -- "$edgemem" map --json "$map" --elf "$corpus/map/own_cm4_O0.elf"
expect 0 "map and ELF of one link" -- "$edgemem" map "$map" --elf "$corpus/map/own_cm4_O2.elf"
# stack: the worst case and its unbounded flag come first.
mkdir -p "$tmp/o0" && cp "$su"/own_O0_* "$tmp/o0/"
expect 0 "stack O0" -- "$edgemem" stack "$tmp/o0"
head -1 "$tmp/out" | grep -q "^main stack worst case: 312 B" || { echo "FAIL: stack's verdict is not first"; fail=1; }
sed -n 2p "$tmp/out" | grep -q "UNBOUNDED" || { echo "FAIL: the verdict drops the unbounded flag"; fail=1; }
# A region used past its length is a verdict against you: exit 1, in text and JSON.
printf '%s\n' "Memory Configuration" "" "Name             Origin             Length             Attributes" \
  "RAM              0x0000000020000000 0x0000000000000100 xrw" "*default*        0x0000000000000000 0xffffffffffffffff" "" \
  "Linker script and memory map" "" ".bss            0x0000000020000000      0x180" \
  " .bss           0x0000000020000000      0x180 main.o" "OUTPUT(main.elf elf32-littlearm)" >"$tmp/over.map"
expect 1 "map: an overflowed region" -- "$edgemem" map "$tmp/over.map"
head -1 "$tmp/out" | grep -q "^OVERFLOWED: RAM by 128 B" || { echo "FAIL: map's overflow verdict is not first"; fail=1; }
expect 1 "map --json: an overflowed region" -- "$edgemem" map --json "$tmp/over.map"
grep -q '"verdict": "region_overflow"' "$tmp/out" || { echo "FAIL: map JSON calls an overflowed link ok"; fail=1; }
# Colour only on a terminal or when asked; NO_COLOR is honoured.
expect 0 "no colour into a pipe" -- "$edgemem" diff "$src/examples/traces/kws_fragment.log" "$src/examples/traces/kws_leak.emt"
! grep -q $'\x1b\[' "$tmp/out" || { echo "FAIL: colour codes written into a pipe"; fail=1; }
expect 0 "--color=always" -- "$edgemem" --color=always diff "$src/examples/traces/kws_fragment.log" "$src/examples/traces/kws_leak.emt"
grep -q $'\x1b\[' "$tmp/out" || { echo "FAIL: --color=always does not colour"; fail=1; }
expect 0 "analyze --color=always" -- "$edgemem" analyze --color=always "$src/examples/traces/kws_leak.emt"
grep -q $'\x1b\[1;31m\[LEAK\]' "$tmp/out" || { echo "FAIL: analyze does not colour its finding tags"; fail=1; }
expect 0 "analyze into a file is plain" -- "$edgemem" analyze "$src/examples/traces/kws_leak.emt"
! grep -q $'\x1b' "$tmp/out" || { echo "FAIL: analyze colours output that is not a terminal"; fail=1; }
expect 2 "--color typo" -- "$edgemem" --color=alwys diff "$src/examples/traces/kws_fragment.log" "$src/examples/traces/kws_leak.emt"
# diff: units on every row, integers for bytes and a fraction for fragmentation in JSON.
expect 0 "diff rows carry units" -- "$edgemem" diff "$src/examples/traces/kws_fragment.log" "$src/examples/traces/kws_leak.emt"
grep -Eq "10,276 B -> +34,128 B +\+23,852 B" "$tmp/out" || { echo "FAIL: diff rows have no unit"; fail=1; }
expect 0 "diff --json" -- "$edgemem" diff --json "$src/examples/traces/kws_fragment.log" "$src/examples/traces/kws_leak.emt"
python3 -c "
import json, sys
rows = {r['name']: r for g in json.load(open('$tmp/out'))['groups'] for r in g['rows']}
ok = isinstance(rows['peak_bytes']['after_bytes'], int) and 0 <= rows['fragmentation_max_rate']['after_fraction'] <= 1
sys.exit(not ok)" || { echo "FAIL: diff JSON bytes are not integers or fragmentation is not a fraction"; fail=1; }
# A reader that stops early (| head) ends the output, not with a crash, even when SIGPIPE is ignored.
big=$corpus/map/logitacker_nrf52840_pca10059.map  # its JSON is more than a pipe holds
code=$(trap '' PIPE; "$edgemem" map --json "$big" 2>"$tmp/pipe_err" | head -c 10 >/dev/null; echo "${PIPESTATUS[0]}")
if [ "$code" != 141 ] || grep -q "terminate\|what()" "$tmp/pipe_err"; then
  echo "FAIL: a closed pipe: exit $code, expected 141 without a trace"; cat "$tmp/pipe_err"; fail=1
else
  echo "ok: closed pipe"
fi
# An export sent to stdout meets the closed pipe first: said, and still the shell's 141.
awk 'BEGIN { for (i = 1; i <= 20000; i++) printf "[MEM][%d] ALLOC size=16 addr=%#x\n", i, 4096 + 16 * i }' >"$tmp/many.log"
code=$("$edgemem" analyze "$tmp/many.log" --textlog - 2>"$tmp/pipe_err" | head -c 100 >/dev/null; echo "${PIPESTATUS[0]}")
if [ "$code" != 141 ]; then
  echo "FAIL: --textlog - into a closed pipe: exit $code, expected 141"; cat "$tmp/pipe_err"; fail=1
else
  echo "ok: export into a closed pipe"
fi
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
# Names match in any case, and a near miss is answered with the name meant.
expect 1 "--fail-on in capitals" -- "$edgemem" analyze --fail-on FRAGMENTATION=Danger "$src/examples/traces/kws_fragment.log"
expect 2 "--fail-on typo" -- "$edgemem" analyze --fail-on leek "$src/examples/traces/kws_fragment.log"
grep -q "unknown --fail-on item 'leek' (did you mean leak?" "$tmp/err" || { echo "FAIL: no did-you-mean for leek"; cat "$tmp/err"; fail=1; }
# An empty list checks nothing: a CI line built from an unset variable (it passed).
expect 2 "--fail-on empty" -- "$edgemem" analyze --fail-on "" "$src/examples/traces/kws_fragment.log"
grep -q "no rule given" "$tmp/err" || { echo "FAIL: an empty --fail-on is not refused"; cat "$tmp/err"; fail=1; }
# A rule whose check did not run is said and neither holds nor breaks; a
# gate that could judge none of its rules is refused (it passed in silence).
{ for i in 1 2 3 4 5 6 7 8 9 10; do
    echo "[MEM][$((i * 10))] INFER begin $i"; echo "[MEM][$((i * 10 + 1))] ALLOC size=64 offset=0 pool=arena site=m.c:3"
    echo "[MEM][$((i * 10 + 2))] FREE offset=0 pool=arena"; echo "[MEM][$((i * 10 + 3))] INFER end $i"; done; } >"$tmp/nosize.log"
expect 2 "--fail-on overflow without a size judges nothing" -- "$edgemem" analyze --fail-on overflow "$tmp/nosize.log"
grep -q "fail-on overflow: not checked, so it neither holds nor breaks (size of 'arena' unknown" "$tmp/err" ||
  { echo "FAIL: the unjudged overflow rule is not named: $(cat "$tmp/err")"; fail=1; }
expect 0 "--fail-on leak,overflow judges the leak rule" -- "$edgemem" analyze --fail-on leak,overflow "$tmp/nosize.log"
grep -q "fail-on overflow: not checked" "$tmp/err" || { echo "FAIL: the unjudged rule is not said beside the judged one"; fail=1; }
expect 2 "an option before the command" -- "$edgemem" --json analyze "$src/examples/traces/kws_fragment.log"
[ "$(cat "$tmp/err")" = "edgemem: --json comes before the command: options go after it (edgemem analyze --json ...; see edgemem analyze --help)" ] ||
  { echo "FAIL: an option before the command is blamed on the command: $(cat "$tmp/err")"; fail=1; }
expect 2 "an option with its value before the command" -- "$edgemem" --fail-on leak analyze "$src/examples/traces/kws_fragment.log"
grep -q "^edgemem: --fail-on comes before the command: options go after it (edgemem analyze --fail-on leak ...;" "$tmp/err" ||
  { echo "FAIL: an option's value before the command is read as a command: $(cat "$tmp/err")"; fail=1; }
expect 2 "record --via typo" -- "$edgemem" record --via gbd -- /bin/true
grep -q "did you mean gdb?" "$tmp/err" || { echo "FAIL: no did-you-mean for --via gbd"; cat "$tmp/err"; fail=1; }
# record -o where no recording can be: refused before the program runs, nothing replaced.
mkdir -p "$tmp/outdir"
expect 2 "record -o a directory" -- "$edgemem" record -o "$tmp/outdir" -- /bin/true
[ -d "$tmp/outdir" ] && grep -q "outdir is a directory; give a file in it" "$tmp/err" ||
  { echo "FAIL: record -o a directory: $(cat "$tmp/err")"; ls -la "$tmp/outdir"; fail=1; }
expect 2 "record -o in a missing directory" -- "$edgemem" record -o "$tmp/none/run.emt" -- /bin/true
grep -q "there is no directory $tmp/none" "$tmp/err" || { echo "FAIL: record -o missing dir: $(cat "$tmp/err")"; fail=1; }
# A file given to the wrong command is named, with the command that reads it.
expect 2 "plan of a trace" -- "$edgemem" plan "$src/examples/traces/kws_leak.emt"
grep -q "; it is an emt trace: run \`edgemem analyze $src/examples/traces/kws_leak.emt\`" "$tmp/err" ||
  { echo "FAIL: plan of a trace: $(cat "$tmp/err")"; fail=1; }
expect 2 "stack of a map" -- "$edgemem" stack "$corpus/map/own_cm4_O2.map"
grep -q "; it looks like a GNU ld linker map; for its regions, sections and symbols run \`edgemem map" "$tmp/err" ||
  { echo "FAIL: stack of a map: $(cat "$tmp/err")"; fail=1; }
# A map that fit --map cannot read is not sent to `edgemem map`, which reads it no better.
head -c 5000 "$corpus/map/own_cm4_O2.map" >"$tmp/cut.map"
expect 2 "fit --map of a cut map" -- "$edgemem" fit "$corpus/tflite/tflm_seanet_strided_slice0.tflite" --map "$tmp/cut.map"
grep -q "it is cut short" "$tmp/err" && ! grep -q "it looks like" "$tmp/err" ||
  { echo "FAIL: fit --map of a cut map: $(cat "$tmp/err")"; fail=1; }
expect 2 "analyze --elf of a missing file" -- "$edgemem" analyze "$src/examples/traces/kws_leak.emt" --elf "$tmp/none.elf"
grep -q "none.elf: no such file (expected the firmware ELF" "$tmp/err" || { echo "FAIL: --elf missing: $(cat "$tmp/err")"; fail=1; }
expect 2 "plan of a directory" -- "$edgemem" plan "$tmp"
grep -q "cannot open (a directory, expected a file)" "$tmp/err" || { echo "FAIL: plan of a directory: $(cat "$tmp/err")"; fail=1; }
# check and diff take --format, which their refusal of a non-trace advises.
expect 0 "diff --format log" -- "$edgemem" diff --format log "$src/examples/traces/kws_fragment.log" "$src/examples/traces/kws_fragment.log"
: >"$tmp/empty.file"
expect 2 "diff of an empty file" -- "$edgemem" diff "$tmp/empty.file" "$corpus/map/own_cm4_O2.map"
grep -q "empty.file: empty file, expected a map, an ELF or a trace" "$tmp/err" || { echo "FAIL: diff empty: $(cat "$tmp/err")"; fail=1; }
# Options that cannot apply are refused with the reason.
expect 2 "--tpiu-stream past the 7-bit IDs" -- "$edgemem" analyze --tpiu-stream 300 "$src/examples/traces/kws_leak.emt"
expect 2 "--model with stdin" -- sh -c "\"$edgemem\" analyze - --model \"$corpus/tflite/tflm_keyword_scrambled.tflite\" <\"$src/examples/traces/kws_leak.emt\""
grep -q "needs the capture as a file, not stdin" "$tmp/err" || { echo "FAIL: --model stdin: $(cat "$tmp/err")"; fail=1; }
expect 2 "--metrics-file in a missing directory" -- "$edgemem" analyze "$src/examples/traces/kws_leak.emt" --metrics-file "$tmp/none/m.prom"
grep -q "none/m.prom: cannot write: No such file or directory" "$tmp/err" || { echo "FAIL: metrics-file: $(cat "$tmp/err")"; fail=1; }
# Files cut short are refused, never read as smaller than they are.
head -c 3000 "$corpus/map/own_cm4_O2.map" >"$tmp/cut.map"
expect 2 "a map cut short" -- "$edgemem" map "$tmp/cut.map"
grep -q "the map ends before ld's OUTPUT(...) line" "$tmp/err" || { echo "FAIL: cut map: $(cat "$tmp/err")"; fail=1; }
echo '{"schema": "edgemem.budget/1", "regions": {"RAM": {"max_percent": 85}}}' >"$tmp/any.json"
expect 2 "check --map on a map cut short" -- "$edgemem" check --budget "$tmp/any.json" --map "$tmp/cut.map"
head -c 2000 "$corpus/map/own_cm4_O2.elf" >"$tmp/cut.elf"
expect 2 "an ELF cut short" -- "$edgemem" map "$tmp/cut.elf"
grep -q "section headers run past the end of the file (2000 bytes): the ELF is cut short" "$tmp/err" ||
  { echo "FAIL: cut ELF: $(cat "$tmp/err")"; fail=1; }
head -c 500 "$su/own_O2_own_app.ci" >"$tmp/cut.ci"
expect 2 "a call graph cut short" -- "$edgemem" stack "$tmp/cut.ci"
grep -q "before the graph's closing '}': it is cut short" "$tmp/err" || { echo "FAIL: cut .ci: $(cat "$tmp/err")"; fail=1; }
# A Keil call graph or a compressed map given to the wrong command: the
# command that reads it, or how to unpack it (they were a bare parse error).
htm=$corpus/stack_keil/badshun_minirtos_ac5_5.06u7.htm
expect 2 "map of a Keil call graph" -- "$edgemem" map "$htm"
grep -q "static call graph (Keil .htm); for worst-case stack depth run \`edgemem stack" "$tmp/err" || { echo "FAIL: map .htm: $(cat "$tmp/err")"; fail=1; }
expect 2 "analyze of a Keil call graph" -- "$edgemem" analyze "$htm"
grep -q "static call graph (Keil .htm), not a trace" "$tmp/err" || { echo "FAIL: analyze .htm: $(cat "$tmp/err")"; fail=1; }
gzip -c "$map" >"$tmp/fw.map.gz"
expect 2 "map of a gzipped map" -- "$edgemem" map "$tmp/fw.map.gz"
grep -q "it is gzip-compressed: decompress it first (gzip -dc " "$tmp/err" || { echo "FAIL: map .gz: $(cat "$tmp/err")"; fail=1; }
xz -c "$src/examples/traces/kws_fragment.log" >"$tmp/trace.log.xz"
expect 2 "map of a compressed trace" -- "$edgemem" map "$tmp/trace.log.xz"
grep -q "it is an xz-compressed log trace: run \`edgemem analyze $tmp/trace.log.xz\` (it reads it compressed)" "$tmp/err" ||
  { echo "FAIL: map of a .log.xz: $(cat "$tmp/err")"; fail=1; }
# zstd gives nothing before a whole block is in (28 KB here, past any 4 KiB taste).
for i in $(seq 3000); do echo "[MEM][$i] ALLOC size=$((i * 7 % 500 + 1)) addr=0x$(printf %x $((i * 4109))) site=a.c:$i"; done |
  zstd -qc >"$tmp/trace.log.zst"
expect 2 "plan of a zstd trace" -- "$edgemem" plan "$tmp/trace.log.zst"
grep -q "it is a zstd-compressed log trace: run" "$tmp/err" || { echo "FAIL: plan of a .log.zst: $(cat "$tmp/err")"; fail=1; }
head -c 20000 "$corpus/stack_keil/badshun_minirtos_ac5_5.06u7.htm" >"$tmp/cut.htm"
expect 2 "a Keil call graph cut short" -- "$edgemem" stack "$tmp/cut.htm"
grep -q "the report ends before its closing </html>: it is cut short" "$tmp/err" || { echo "FAIL: cut .htm: $(cat "$tmp/err")"; fail=1; }
head -c 150 "$su/own_O2_own_app.su" >"$tmp/cut.su"
expect 2 "a stack usage file cut short" -- "$edgemem" stack "$tmp/cut.su"
# A section placed at its own address at RAM's end (tests/data/map_placed):
# RAM read 100 % used and the model did not fit; the statics can grow up
# to the placed section (0x2001ffe0 - 0x20000000 - 4,112 B of statics).
expect 1 "fit beside a section placed at its own address" -- "$edgemem" fit \
  "$corpus/tflite/mlperftiny_pretrainedResnet_quant.tflite" --map "$src/tests/data/map_placed/mbox.map"
grep -q "of 126,928 B contiguous  fits" "$tmp/out" && head -1 "$tmp/out" | grep -q "^FITS" ||
  { echo "FAIL: fit with a placed section: $(cat "$tmp/out")"; fail=1; }
# The linked image settles a weak callback (tests/data/stack/README.md):
# 876 B, no doubt left; a budget naming the ELF and the stack files uses it.
weak=$(cd "$src/tests/data/stack/weak_callback" && pwd)
expect 0 "stack --elf" -- "$edgemem" stack "$weak" --elf "$weak/weak.elf"
head -1 "$tmp/out" | grep -qx "main stack worst case: 876 B (thread 288 B + its one handler and its 36 B exception frame)" ||
  { echo "FAIL: stack --elf: $(head -1 "$tmp/out")"; fail=1; }
printf '{"schema": "edgemem.budget/1", "inputs": {"elf": "%s", "stack": "%s"}, "stack": {"main_stack_bytes": 860}}\n' \
  "$weak/weak.elf" "$weak" >"$tmp/stack_budget.json"
expect 1 "check: stack settled by the budget's ELF" -- "$edgemem" check --budget "$tmp/stack_budget.json"
grep -q "876 B" "$tmp/out" && ! grep -q "if static" "$tmp/out" || { echo "FAIL: check with ELF: $(cat "$tmp/out")"; fail=1; }
# Its own build's ELF (with DWARF), though the unit the linker dropped calls
# a header's static function no linked unit emits (a reviewer's build:
# once refused as "linked from other sources").
hs=$src/tests/data/stack/header_static
expect 0 "stack --elf: a dropped unit's header function" -- "$edgemem" stack "$hs" --elf "$hs/fw.elf"
grep -q "not counted as roots: unused_fn" "$tmp/out" || { echo "FAIL: header_static: $(cat "$tmp/out")"; fail=1; }
expect 2 "stack --elf of a stripped image" -- "$edgemem" stack "$weak" --elf /bin/true
grep -q "no symbol table (stripped?)" "$tmp/err" || { echo "FAIL: stripped ELF: $(cat "$tmp/err")"; fail=1; }
# An export cut short (a full disk; here a 64 KiB file-size limit, with
# SIGXFSZ ignored so the write fails with EFBIG) exits 2 and leaves the
# last good file whole, not a cut page; nothing temporary is left beside it.
printf 'good\n' >"$tmp/last.html"
expect 2 "an export cut short keeps the last good file" -- bash -c \
  "trap '' XFSZ; ulimit -f 64; exec '$edgemem' analyze '$src/examples/traces/kws_leak.emt' --html '$tmp/last.html'"
[ "$(cat "$tmp/last.html")" = good ] && [ -z "$(ls "$tmp" | grep 'last.html.tmp')" ] && grep -q "last.html: cannot write: File too large" "$tmp/err" ||
  { echo "FAIL: export cut short: $(head -c 80 "$tmp/last.html"); $(cat "$tmp/err")"; fail=1; }
# Replaced whole, the report keeps what the old file was: its permissions
# (a private 0600 report stayed private), its other hard links (written in
# place), a dangling link's target (written through, as `>` does).
mkdir -p "$tmp/aw/sub" && printf 'old\n' >"$tmp/aw/p.html" && chmod 600 "$tmp/aw/p.html"
printf 'old\n' >"$tmp/aw/h1.html" && ln "$tmp/aw/h1.html" "$tmp/aw/h2.html" && ln -s sub/new.html "$tmp/aw/d.html"
for out in p.html h1.html d.html; do
  expect 0 "report over $out" -- "$edgemem" analyze "$src/examples/traces/kws_leak.emt" --html "$tmp/aw/$out"
done
[ "$(stat -c %a "$tmp/aw/p.html")" = 600 ] && grep -q "<html" "$tmp/aw/h2.html" && [ -L "$tmp/aw/d.html" ] &&
  grep -q "<html" "$tmp/aw/sub/new.html" && [ -z "$(ls -A "$tmp/aw" | grep edgemem-)" ] ||
  { echo "FAIL: a replaced report lost its permissions, links or target: $(ls -la "$tmp/aw" "$tmp/aw/sub")"; fail=1; }
# A link through a directory link and `..` is resolved as the kernel does
# (dl/.. is real/, not aw/); another user's file keeps its owner.
mkdir -p "$tmp/aw/real/inner" && ln -s real/inner "$tmp/aw/dl" && ln -s dl/../x.prom "$tmp/aw/out.prom"
printf 'OLD\n' >"$tmp/aw/real/x.prom"
expect 0 "metrics through dl/.." -- "$edgemem" analyze "$src/examples/traces/kws_leak.emt" --metrics-file "$tmp/aw/out.prom"
grep -q "edgemem_inferences" "$tmp/aw/real/x.prom" && [ ! -e "$tmp/aw/x.prom" ] ||
  { echo "FAIL: a link through dl/.. wrote the wrong file"; fail=1; }
if [ "$(id -u)" = 0 ]; then
  printf 'old\n' >"$tmp/aw/owned.prom" && chown nobody:nogroup "$tmp/aw/owned.prom"
  expect 0 "metrics over another user's file" -- "$edgemem" analyze "$src/examples/traces/kws_leak.emt" --metrics-file "$tmp/aw/owned.prom"
  [ "$(stat -c %U:%G "$tmp/aw/owned.prom")" = nobody:nogroup ] || { echo "FAIL: the metrics file lost its owner"; fail=1; }
fi
exit $fail
