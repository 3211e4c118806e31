#!/usr/bin/env bash
# check as a merge gate, on traces whose truth is known by construction (a
# CI engineer's findings): a gate never passes what it could not judge, and
# says what its verdict rests on.
set -u
edgemem=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$(dirname "$0")/expect.sh"
has() {  # has FILE TEXT DESCRIPTION: the output holds TEXT (fixed string)
  grep -qF -- "$2" "$tmp/$1" || { echo "FAIL: $3: no '$2' in:"; cat "$tmp/$1"; fail=1; }
}
# One boot per argument, INFERENCES:KEPT: a 2,000 B block before the first
# inference, 1,000 B made and freed in each, and KEPT bytes made in each and
# never freed.
boots() {
  local t=0 spec n kept i
  for spec in "$@"; do
    n=${spec%:*} kept=${spec#*:}
    echo "[MEM][$((t += 10))] BOOT"
    echo "[MEM][$((t += 10))] POOL name=heap kind=heap base=0x20000000 size=65536"
    echo "[MEM][$((t += 10))] ALLOC size=2000 addr=0x20000000 pool=heap site=init.c:5"
    for ((i = 1; i <= n; i++)); do
      echo "[MEM][$((t += 10))] INFER begin $i"
      echo "[MEM][$((t += 10))] ALLOC size=1000 addr=0x200007d0 pool=heap site=work.c:10"
      if [ "$kept" -gt 0 ]; then
        printf '[MEM][%d] ALLOC size=%d addr=0x%x pool=heap site=leak.c:42\n' $((t += 10)) "$kept" \
          $((0x20001000 + (i - 1) * kept))
      fi
      echo "[MEM][$((t += 10))] FREE addr=0x200007d0 pool=heap"
      echo "[MEM][$((t += 10))] INFER end $i"
    done
  done
}
echo '{"schema": "edgemem.budget/1", "leak": {"max_bytes_per_inference": 0, "max_leaked_bytes": 0}}' >"$tmp/leak0.json"

# One inference keeping 10,000 B cannot show growth: once "ok ... 0.0 B per
# inference over 1 inferences" and "[OK] no leak".
boots 1:10000 >"$tmp/one.log"
expect 2 "check: a leak budget on one inference is not judged" -- \
  "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/one.log"
has err "leak.max_bytes_per_inference: the leak check did not run on this trace (1 inference ended in the trace: a leak shows as growth over at least two; 10,000 B made since the first inference began are still live at the end (largest leak.c:42)" \
  "the refusal says why and what is kept"
expect 2 "analyze --fail-on leak on one inference" -- "$edgemem" analyze --fail-on leak "$tmp/one.log"
has out "[NOT CHECKED] leak" "analyze says the leak check did not run"
boots 2:10000 >"$tmp/two.log"
expect 1 "check: two inferences keeping 10,000 B each leak" -- \
  "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/two.log"

# Each boot is judged on its own, the ones before the latest as they went
# down. Boot 1 leaking 32 B in each of 50 inferences, then a restart: once
# "0.0 B per inference over 51 inferences", and a clean boot 2 once passed
# boot 1's 1,600 B (analyze said "[OK] no leak").
boots 50:32 1:32 >"$tmp/reboot_leak1.log"
expect 1 "check: a leak in the boot before a restart breaks, one inference after it" -- \
  "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/reboot_leak1.log"
has out "leaks 32.0 B per inference in boot 1, before the device started again (50 inferences), limit 0 B" \
  "the rate is the leaking boot's"
boots 50:32 50:0 >"$tmp/reboot_clean.log"
expect 1 "check: a clean boot after a restart does not hide the leak of the boot before" -- \
  "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/reboot_clean.log"
has out "1,600 B leaked at 1 site(s) (first leak.c:42) in boot 1, before the device started again (50 inferences), limit 0 B" \
  "the bytes are the leaking boot's"
has out "leaks are judged in each boot on its own (the latest: 50 of 100 inferences); 1 boot before the latest leaked" \
  "the restart note names the leaking boot"
expect 1 "analyze --fail-on leak: a leak in the boot before a restart breaks" -- \
  "$edgemem" analyze --fail-on leak "$tmp/reboot_clean.log"
has out "[LEAK]        32 B per inference at leak.c:42, in boot 1 (it went down after inference 50, 3,600 B in use)" \
  "analyze names the boot the leak was in"
has err "edgemem: fail-on leak: in 1 boot before the device started again; in boot 1: 1 site, 1,600 B leaked at leak.c:42 first" \
  "the broken rule names the boot"
boots 50:0 50:0 >"$tmp/reboot_both_clean.log"
expect 0 "check: two clean boots hold" -- \
  "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/reboot_both_clean.log"
# One inference in the boot before shows no growth: it can hide a leak.
boots 1:32 50:0 >"$tmp/reboot_unjudged.log"
expect 2 "check: a boot before the latest that could not be judged holds no leak limit" -- \
  "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/reboot_unjudged.log"
has err "leak.max_bytes_per_inference: the device started again 1 time in the trace, and 1 boot before the latest could not be judged (boot 1: 1 inference ended in that boot: a leak shows as growth over at least two" \
  "the refusal says which boot before was not judged and why"
expect 2 "analyze --fail-on leak: a boot before the latest that could not be judged neither holds nor breaks" -- \
  "$edgemem" analyze --fail-on leak "$tmp/reboot_unjudged.log"
# A leak in the boot before does not make a latest boot of one inference
# judged: under the limit it is refused (it once held, exit 0, where the
# latest boot alone is refused).
boots 40:32 1:10000 >"$tmp/reboot_leak_then_one.log"
echo '{"leak": {"max_leaked_bytes": 2000, "max_bytes_per_inference": 40}}' >"$tmp/leak2000.json"
expect 2 "check: a latest boot of one inference is not judged beside a leak before it" -- \
  "$edgemem" check --budget "$tmp/leak2000.json" --trace "$tmp/reboot_leak_then_one.log"
has err "the leak check did not run on the latest boot (1 inference ended since the device last started again" \
  "the refusal names the latest boot"
# Boots past the first 256 restarts kept are judged all the same: 300 clean
# boots hold (they were once refused as not judged).
boots $(for _ in $(seq 300); do printf "3:0 "; done) >"$tmp/many_clean.log"
expect 0 "check: 300 clean boots hold" -- "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/many_clean.log"
# The capture stops just after the device rebooted (the latest boot ended no
# inference): boot 1 judged, nothing hidden in the latest (once refused).
boots 40:32 0:0 >"$tmp/reboot_then_stop.log"
expect 0 "check: a capture that stops after the reboot holds a limit the leak is under" -- \
  "$edgemem" check --budget "$tmp/leak2000.json" --trace "$tmp/reboot_then_stop.log"
# Without inference markers the latest boot's growth is measured with the
# boots before: boot 2 leaking twice boot 1's once passed on boot 1's bytes.
boots 40:32 40:64 | grep -v INFER >"$tmp/nomarkers_two_boots.log"
expect 2 "check: a latest boot without markers after a restart is not judged" -- \
  "$edgemem" check --budget /dev/stdin --trace "$tmp/nomarkers_two_boots.log" <<<'{"leak": {"max_leaked_bytes": 2000}}' 
has err "the leak check did not run on the latest boot (no inference markers" "the refusal says why"
# A summarised pool that grew 100 B per inference in boot 1, then a clean
# boot: not judged there (it once held a 40 B limit, exit 0).
expect 2 "check: a summarised pool's growth before a restart is not judged" -- \
  "$edgemem" check --budget /dev/stdin --trace "$(dirname "$0")/../data/restarts/summarised_growth_then_clean.emt" \
  <<<'{"leak": {"max_bytes_per_inference": 40}}'
has err "(boot 1: summary records carry no blocks" "the refusal names the boot and why"
# A boot loop in setup (boot 1 began no inference), then a boot leaking
# 32 B per inference: its first inference is not its setup (it once read
# 29 B per inference and held a 30 B limit).
boots 0:0 10:32 10:0 >"$tmp/setup_loop_then_leak.log"
expect 1 "check: a leak after a boot that began no inference keeps its rate" -- \
  "$edgemem" check --budget /dev/stdin --trace "$tmp/setup_loop_then_leak.log" <<<'{"leak": {"max_bytes_per_inference": 30}}'
has out "leaks 32.0 B per inference in boot 2" "the boot's own rate"
# A capture stopped just after the reboot: analyze's gate agrees with check.
boots 10:0 0:0 >"$tmp/clean_then_stop.log"
expect 0 "analyze --fail-on leak: a latest boot that ended no inference hides nothing" -- \
  "$edgemem" analyze --fail-on leak "$tmp/clean_then_stop.log"
# A leak on a thread that marks no inferences, in boot 2 only: its threads'
# lives span the boots, so the boot is not judged (it read "[OK] no leak").
{
  t=0
  for boot in 1 2 3; do
    echo "[MEM][$((t += 1))] BOOT"
    echo "[MEM][$((t += 1))] POOL name=heap kind=heap base=0x20000000 size=65536"
    for i in $(seq 20); do
      echo "[MEM][$((t += 1))] INFER begin $i thread=1"
      echo "[MEM][$((t += 1))] ALLOC size=100 addr=0x20008000 site=work.c:1 thread=1"
      echo "[MEM][$((t += 1))] FREE addr=0x20008000 thread=1"
      echo "[MEM][$((t += 1))] INFER end $i thread=1"
      if [ $((i % 2)) = 0 ]; then
        printf '[MEM][%d] ALLOC size=48 addr=0x%x site=bg.c:3 thread=2\n' $((t += 1)) $((0x20001000 + i * 64))
        [ "$boot" = 2 ] || printf '[MEM][%d] FREE addr=0x%x thread=2\n' $((t += 1)) $((0x20001000 + i * 64))
      fi
    done
  done
} >"$tmp/off_thread_boot2.log"
expect 2 "analyze --fail-on leak: a boot after a restart with blocks of an unmarked thread is not judged" -- \
  "$edgemem" analyze --fail-on leak "$tmp/off_thread_boot2.log"
has out "[NOT CHECKED] leak" "the report says so"
# A restart before any inference (a boot banner, the serial port's open
# resetting the board) hides nothing: the clean run holds.
boots 0:0 50:0 >"$tmp/banner_then_clean.log"
expect 0 "check: a restart before the first inference holds a clean run" -- \
  "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/banner_then_clean.log"
boots 50:0 50:32 >"$tmp/reboot_then_leak.log"
expect 1 "check: a leak in the latest boot breaks" -- \
  "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/reboot_then_leak.log"
has out "over 50 inferences of the latest boot, the worst of every boot (100 in the trace: the device started again 1 time)" \
  "the rate names the inferences judged"
has out "[RESTART]   $tmp/reboot_then_leak.log: the device started again 1 time: leaks are judged in each boot on its own (the latest: 50 of 100 inferences)" \
  "the restart is said under the verdict"
expect 1 "check --json after a restart" -- \
  "$edgemem" check --json --budget "$tmp/leak0.json" --trace "$tmp/reboot_then_leak.log"
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
assert (t["inferences"], t["latest_boot_inferences"], t["device_restarts"], t["leaking_boots"], t["unjudged_boots"]) == (100, 50, 1, 0, 0), t
' "$tmp/out" || { echo "FAIL: check --json does not say the restart"; fail=1; }

# A trace cut at its end is judged on what arrived, and says so on stdout
# and in the JSON (a record cut mid-line once passed with no word at all,
# a cut gzip with a warning on stderr only).
boots 50:0 >"$tmp/cut.log"
printf '[MEM][9999] ALLOC size=99' >>"$tmp/cut.log"
expect 0 "check: a trace cut mid-record is judged on what arrived" -- \
  "$edgemem" check --budget "$tmp/leak0.json" --trace "$tmp/cut.log"
sed -n 2p "$tmp/out" | grep -qF "[DATA LOST] $tmp/cut.log: 25 bytes of a cut-off last record ignored; the limits were judged on the data that arrived" ||
  { echo "FAIL: the cut end is not said under the verdict"; cat "$tmp/out"; fail=1; }
boots 50:0 | gzip -c | head -c 400 >"$tmp/cut.log.gz"
expect 0 "check --json: a gzip cut short" -- "$edgemem" check --json --budget "$tmp/leak0.json" --trace "$tmp/cut.log.gz"
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
assert "the gzip stream ends early" in (t["data_lost"] or ""), t
' "$tmp/out" || { echo "FAIL: check --json does not say the gzip was cut"; fail=1; }
expect 0 "check --json: a whole trace" -- "$edgemem" check --json --trace "$tmp/two.log" --budget /dev/stdin <<<'{"fragmentation": {"max_alloc_failures": 0}}'
python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["trace"]["data_lost"] is None
' "$tmp/out" || { echo "FAIL: check --json: data_lost of a whole trace is not null"; cat "$tmp/out"; fail=1; }

# "16kB" is 16,000 B in SI: 16,200 B leaked once held against it, read as 16,384.
boots 2:8100 >"$tmp/leak16200.log"
expect 2 "check: a kB limit is refused as ambiguous" -- "$edgemem" check --trace "$tmp/leak16200.log" \
  --budget /dev/stdin <<<'{"leak": {"max_leaked_bytes": "16kB"}}'
has err "leak.max_leaked_bytes: '16kB' is ambiguous: 16,000 B in SI, 16,384 B as many tools count; write 16K or 16KiB for 16,384, or 16000" \
  "the refusal gives the spellings that are not ambiguous"

# A margin percent no arena can leave is a mistake in the budget, as a
# max_percent over 100 is (exit 2, not 1); a rate takes a size string; the
# JSON's 94.7 % is 0.947.
expect 2 "check: min_margin_percent over 100 is refused" -- "$edgemem" check --trace "$tmp/two.log" \
  --budget /dev/stdin <<<'{"arena": {"min_margin_percent": 101}}'
has err "arena.min_margin_percent: 101 % no arena can leave" "the refusal says why"
expect 1 "check: a rate as a size string" -- "$edgemem" check --json --trace "$tmp/two.log" \
  --budget /dev/stdin <<<'{"leak": {"max_bytes_per_inference": "32K"}, "arena": {"min_margin_percent": 94.7}}'
grep -q '"limit": 0.947,' "$tmp/out" || { echo "FAIL: 94.7 % is not the limit 0.947"; cat "$tmp/out"; fail=1; }
grep -q '"limit": 32768.0,' "$tmp/out" || { echo "FAIL: the rate limit is not 32K"; cat "$tmp/out"; fail=1; }

# An arena margin and a fragmentation band are judged per sized pool: a
# pool of unknown size beside a sized one was skipped in silence.
{ boots 2:0; echo "[MEM][900] ALLOC size=64 addr=0x30000000 pool=scratch site=s.c:1"; } >"$tmp/unsized.log"
expect 0 "check: an arena margin over a sized and an unsized pool" -- "$edgemem" check --trace "$tmp/unsized.log" \
  --budget /dev/stdin <<<'{"arena": {"min_margin_percent": 10}}'
has out "[UNSIZED]" "the unsized pool is said"
has out "not judged for 'scratch' (arena margin): an arena margin needs the pool's size" \
  "the note names the pool and what it was not judged by"
# A heap with a size and no base is no extent: its band is not judged.
sed 's/ base=0x20000000//' "$tmp/two.log" >"$tmp/nobase.log"
expect 2 "check: a band over no pool of known extent is refused" -- "$edgemem" check --trace "$tmp/nobase.log" \
  --budget /dev/stdin <<<'{"fragmentation": {"max_band": "warning"}}'
{ boots 2:0; echo "[MEM][900] POOL name=arena kind=arena size=4096"; echo "[MEM][910] ALLOC size=64 offset=0 pool=arena site=a.c:1"; } |
  sed 's/ base=0x20000000//' >"$tmp/nobase_arena.log"
expect 0 "check: a band judged on the arena alone" -- "$edgemem" check --trace "$tmp/nobase_arena.log" \
  --budget /dev/stdin <<<'{"fragmentation": {"max_band": "warning"}}'
has out "not judged for 'heap' (fragmentation band)" "the heap without a base is named under the band"
expect 0 "check --json: the unsized pools" -- "$edgemem" check --json --trace "$tmp/unsized.log" \
  --budget /dev/stdin <<<'{"arena": {"min_margin_percent": 10}}'
has out '"unsized_pools": [' "the JSON lists them"
expect 0 "check: a leak limit alone names no unsized pool" -- "$edgemem" check --trace "$tmp/unsized.log" \
  --budget /dev/stdin <<<'{"leak": {"max_leaked_bytes": 100000}}'
if grep -qF "[UNSIZED]" "$tmp/out"; then echo "FAIL: [UNSIZED] under a leak limit"; cat "$tmp/out"; fail=1; fi

exit $fail
