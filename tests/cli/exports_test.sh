#!/usr/bin/env bash
# `edgemem analyze` writes every export in one run from the demo capture, and
# a path it cannot write exits 2 with one line naming it while the others
# are still written.
# Usage: exports_test.sh EDGEMEM SOURCE_DIR
set -u
edgemem=$1 src=$2
trace=$src/examples/traces/kws_leak.emt
[ -r "$trace" ] || { echo "FAIL: demo trace missing: $trace"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$edgemem" analyze "$trace" --elf "$src/examples/traces/kws_leak.elf" --perfetto "$tmp/t.pftrace" \
  --chrome-json "$tmp/chrome.json" --folded "$tmp/end.txt" --folded-peak "$tmp/peak.txt" \
  --speedscope "$tmp/speedscope.json" --textlog "$tmp/t.log" >"$tmp/out" 2>"$tmp/err"
code=$?
# The demo leaks: exit 0 without --fail-on.
[ "$code" = 0 ] || { echo "FAIL: analyze with every export: exit $code"; cat "$tmp/err"; fail=1; }
for f in t.pftrace chrome.json end.txt peak.txt speedscope.json t.log; do
  [ -s "$tmp/$f" ] || { echo "FAIL: $f not written or empty"; fail=1; }
done
[ "$(grep -c 'written to' "$tmp/err")" = 6 ] || { echo "FAIL: expected 6 'written to' lines:"; cat "$tmp/err"; fail=1; }
grep -q "^\[MEM\]\[[0-9]*\] ALLOC .* site=" "$tmp/t.log" || { echo "FAIL: the text log has no ALLOC with a site"; fail=1; }
grep -q "Perfetto trace written to $tmp/t.pftrace" "$tmp/err" || { echo "FAIL: stderr does not name the Perfetto file"; fail=1; }
grep -q "model.c:" "$tmp/end.txt" || { echo "FAIL: the folded stacks do not name the leak site"; cat "$tmp/end.txt"; fail=1; }
python3 -c "import json,sys; json.load(open(sys.argv[1])); json.load(open(sys.argv[2]))" "$tmp/chrome.json" "$tmp/speedscope.json" ||
  { echo "FAIL: a JSON export does not parse"; fail=1; }
# The summary is still printed.
grep -q "LEAK" "$tmp/out" || { echo "FAIL: the summary was not printed"; fail=1; }

# A directory that does not exist: exit 2, one line naming the file and the option; the other export is written.
"$edgemem" analyze "$trace" --perfetto "$tmp/no/such/dir/t.pftrace" --folded "$tmp/again.txt" >"$tmp/out" 2>"$tmp/err"
code=$?
[ "$code" = 2 ] || { echo "FAIL: unwritable --perfetto: exit $code, expected 2"; fail=1; }
errors=$(grep -v 'written to' "$tmp/err")
[ "$(printf '%s\n' "$errors" | wc -l)" = 1 ] && printf '%s' "$errors" | grep -q "no/such/dir/t.pftrace.*--perfetto" ||
  { echo "FAIL: the error is not one line naming the file and --perfetto:"; cat "$tmp/err"; fail=1; }
[ -s "$tmp/again.txt" ] || { echo "FAIL: --folded was not written beside the failing --perfetto"; fail=1; }

# The same for --textlog, which is opened before the trace is read.
rm -f "$tmp/again.txt"
"$edgemem" analyze "$trace" --textlog "$tmp/no/such/dir/t.log" --folded "$tmp/again.txt" >"$tmp/out" 2>"$tmp/err"
code=$?
[ "$code" = 2 ] || { echo "FAIL: unwritable --textlog: exit $code, expected 2"; fail=1; }
errors=$(grep -v 'written to' "$tmp/err")
[ "$(printf '%s\n' "$errors" | wc -l)" = 1 ] && printf '%s' "$errors" | grep -q "no/such/dir/t.log.*--textlog" ||
  { echo "FAIL: the error is not one line naming the file and --textlog:"; cat "$tmp/err"; fail=1; }
[ -s "$tmp/again.txt" ] || { echo "FAIL: --folded was not written beside the failing --textlog"; fail=1; }

# What a trace lost is in its text log (DROP lines), so a gate on the log
# judges as one on the trace: 3,000 records with 7 dropped mid-way (past the
# 1,024 events between the log's looks at the decoder's losses).
python3 - "$tmp/lossy.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("[MEM][1] POOL name=h kind=heap size=65536 base=0x10000\n")
    t = 2
    for i in range(1500):
        if i == 700:
            f.write(f"[MEM][{t}] DROP 7\n")
        f.write(f"[MEM][{t}] ALLOC size=64 addr={0x10000 + 64 * (i % 600):#x} pool=h site=s{i % 3}\n")
        f.write(f"[MEM][{t + 1}] FREE addr={0x10000 + 64 * (i % 600):#x} pool=h\n")
        t += 2
PY
"$edgemem" analyze "$tmp/lossy.log" --textlog "$tmp/lossy.out.log" --fail-on fragmentation=warning >/dev/null 2>&1
source_code=$?
"$edgemem" analyze "$tmp/lossy.out.log" --fail-on fragmentation=warning >/dev/null 2>&1
log_code=$?
[ "$source_code" = "$log_code" ] || { echo "FAIL: --fail-on on the text log exits $log_code, on its trace $source_code"; fail=1; }
dropped=$(awk '/ DROP /{n += $NF} END {print n + 0}' "$tmp/lossy.out.log")
[ "$dropped" = 7 ] || { echo "FAIL: the text log drops $dropped records, its trace 7"; fail=1; }
# Lost before stamp 1402 (the 1,401st record); a DROP line comes before a record at most 1,024 later.
awk -F'[][]' '/ DROP / && $4 >= 1402 && $4 <= 1402 + 1024 {ok = 1} END {exit !ok}' "$tmp/lossy.out.log" ||
  { echo "FAIL: the DROP line is not within 1,024 records of the loss:"; grep -n DROP "$tmp/lossy.out.log"; fail=1; }

# The exports' time axis divides by the clock: zero or a negative clock is refused in one line.
for hz in 0 -25e6 fast; do
  "$edgemem" analyze "$trace" --clock-hz "$hz" --perfetto "$tmp/clock.pftrace" >"$tmp/out" 2>"$tmp/err"
  code=$?
  [ "$code" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "--clock-hz" "$tmp/err" ||
    { echo "FAIL: --clock-hz $hz: exit $code, expected 2 with one line:"; cat "$tmp/err"; fail=1; }
done

[ $fail = 0 ] && echo "PASS: exports"
exit $fail
