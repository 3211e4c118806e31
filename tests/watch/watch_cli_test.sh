#!/usr/bin/env bash
# `edgemem watch` from the command line: a file that grows while it is
# watched, stdin to its end, --until, --for, SIGINT/SIGTERM with the summary
# of everything seen, exit codes (1 after an alert, 0 on a clean trace, 2 on
# a bad source), the status line (one per interval into a file), and a
# read error in the middle of a file (reopened where it was, nothing read
# twice or skipped).
set -u
edgemem=$1
src=$2
read_fault_shim=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# A clean trace: 200 inferences of temporaries only.
python3 - "$tmp/clean.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    t = 0
    f.write("[MEM][0] ALLOC size=4096 align=16 offset=0 site=model.cc:10\n")
    for i in range(1, 201):
        t += 1000
        f.write(f"[MEM][{t}] INFER begin {i}\n[MEM][{t+1}] ALLOC size=2048 align=16 offset=4096 site=conv.cc:1\n"
                f"[MEM][{t+2}] FREE offset=4096\n[MEM][{t+3}] INFER end {i}\n")
PY

# 1. A growing file, appended in two halves, then SIGINT: summary of both halves, exit 1 (alerts).
log=$src/examples/traces/kws_fragment.log
half=$(( $(wc -l <"$log") / 2 ))
"$edgemem" watch "$tmp/growing.log" --interval 200ms --arena-size 64K >"$tmp/out" 2>"$tmp/err" &
pid=$!
# Under load the watch may start late: write only once it has said it waits,
# or the file would already be there when it looks.
for _ in $(seq 100); do grep -q "waiting for it" "$tmp/err" 2>/dev/null && break; sleep 0.1; done
head -n "$half" "$log" >"$tmp/growing.log"
sleep 1.2
tail -n +"$((half + 1))" "$log" >>"$tmp/growing.log"
sleep 1.2
kill -INT "$pid"
wait "$pid"
rc=$?
"$edgemem" analyze "$log" --arena-size 64K --json >"$tmp/whole.json" 2>/dev/null
want=$(python3 -c "import json; print(json.load(open('$tmp/whole.json'))['inferences'])")
grep -q "waiting for it" "$tmp/err" && ok "waits for a file that is not there yet" || bad "no 'waiting for it': $(head -3 "$tmp/err")"
grep -q "^$want inferences | " "$tmp/err" && ok "status line reached all $want inferences" || bad "no status line with $want inferences: $(grep inferences "$tmp/err" | tail -2)"
[ "$(grep -c ' inferences | ' "$tmp/err")" -ge 3 ] && ok "one status line per interval into a file" || bad "fewer than 3 status lines"
grep -q $'\r' "$tmp/err" && bad "carriage returns written into a file" || ok "no carriage returns into a file"
grep -q "^ALERT alloc-failure" "$tmp/err" && ok "failed allocation alerted" || bad "no alloc-failure alert: $(grep ALERT "$tmp/err")"
[ "$(grep -c '^ALERT alloc-failure' "$tmp/err")" = 1 ] && ok "each alert once" || bad "alert repeated"
# Listed again after the summary, with when each fired.
alerts=$(grep -c '^ALERT ' "$tmp/err")
grep -q "^edgemem: $alerts alerts* w[a-z]* raised during the watch:" "$tmp/err" &&
  [ "$(grep -c '^edgemem:   after [0-9]* inferences: ALERT ' "$tmp/err")" = "$alerts" ] &&
  grep -q "^edgemem:   after [0-9]* inferences: ALERT alloc-failure" "$tmp/err" &&
  ok "the alerts listed beside the summary" || bad "no list of alerts at the end: $(tail -4 "$tmp/err")"
# The bundled fragmenting trace read at once: its fragmentation alerts count
# the inference ends that confirmed them (19, 20), the failed request's the
# tick that raised it (50); listed by those counts.
"$edgemem" watch - <"$src/examples/traces/kws_fragment.log" >/dev/null 2>"$tmp/once.err"
counts=$(sed -n 's/^edgemem:   after \([0-9]*\) inferences: ALERT .*/\1/p' "$tmp/once.err" | tr '\n' ' ')
[ "$counts" = "19 20 50 " ] && ok "the alerts at the end are listed by their counts" ||
  bad "alerts at the end listed as: $counts (expected 19 20 50)"
grep -q "stopped by signal 2" "$tmp/err" && ok "says it was stopped" || bad "no 'stopped by signal 2'"
grep -q "ALLOC FAIL" "$tmp/out" && ok "SIGINT prints the analyze summary" || bad "no summary on stdout: $(head -5 "$tmp/out")"
[ "$rc" = 1 ] && ok "exit 1 after an alert" || bad "exit $rc after an alert, expected 1"

# 1a. A file that never appears: after --for, one line saying nothing came, exit 2.
"$edgemem" watch "$tmp/never.log" --for 300ms >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && grep -q "never.log: nothing arrived; no trace to summarise" "$tmp/err" &&
  ! grep -q "empty input" "$tmp/err" && ok "a file that never appeared: nothing arrived, exit 2" ||
  bad "file never appeared: exit $rc, $(tail -2 "$tmp/err")"
# An empty file or stdin, ended by --for, its end or Ctrl-C: that one line
# alone, not first "--for 300 ms elapsed", "end of input" or "stopped by
# signal 2; summary of everything seen" (there is none).
: >"$tmp/empty.log"
"$edgemem" watch "$tmp/empty.log" --for 300ms >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "edgemem: $tmp/empty.log: nothing arrived; no trace to summarise" ] &&
  ok "an empty file: one line, exit 2" || bad "an empty file: exit $rc, $(cat "$tmp/err")"
"$edgemem" watch - <"$tmp/empty.log" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "edgemem: -: nothing arrived; no trace to summarise" ] &&
  ok "an empty stdin: one line, exit 2" || bad "an empty stdin: exit $rc, $(cat "$tmp/err")"
"$edgemem" watch "$tmp/empty.log" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "edgemem: $tmp/empty.log: nothing arrived; no trace to summarise" ] &&
  ok "an empty file, Ctrl-C: one line, exit 2" || bad "an empty file, Ctrl-C: exit $rc, $(cat "$tmp/err")"
# ... and a fatal error before any byte (an --elf that is no ELF) is still said.
printf 'not an elf' >"$tmp/bad.elf"
"$edgemem" watch "$tmp/never.log" --elf "$tmp/bad.elf" --for 300ms >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && grep -q "bad.elf" "$tmp/err" && ok "an unreadable --elf is said though nothing arrived" ||
  bad "bad --elf before any byte: exit $rc, $(tail -2 "$tmp/err")"

# 1b. A read of the watched file fails once (EIO) with most of it still to
# read (it is larger than one read): the watch says so, reopens it where it
# was, and counts every line once. Read from the start again, the first
# 64 KiB would count twice; from the end, the rest would be missing (and
# --until would never be reached).
python3 - "$tmp/flaky.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    t = 0
    for i in range(1, 1501):
        t += 1000
        f.write(f"[MEM][{t}] INFER begin {i}\n[MEM][{t+1}] ALLOC size=2048 align=16 offset=4096 site=conv.cc:1\n"
                f"[MEM][{t+2}] FREE offset=4096\n")
        if i % 10 == 0:
            f.write(f"[MEM][{t+3}] ALLOC size=64 align=16 offset={8192 + 64 * (i // 10)} site=cache.cc:7\n")
        f.write(f"[MEM][{t+4}] INFER end {i}\n")
PY
flaky=$(readlink -f "$tmp/flaky.log")
LD_PRELOAD=$read_fault_shim EDGEMEM_FAIL_READ_PATH=$flaky ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
  timeout -s INT 60 "$edgemem" watch "$tmp/flaky.log" --until 1500 --json >"$tmp/flaky.json" 2>"$tmp/flaky.err"
"$edgemem" analyze "$tmp/flaky.log" --json >"$tmp/flaky-whole.json" 2>/dev/null
[ "$(stat -c %s "$tmp/flaky.log")" -gt 131072 ] && ok "the flaky file is more than two reads" || bad "flaky file too small"
grep -q "flaky.log: read failed: Input/output error; reopening" "$tmp/flaky.err" &&
  ok "a failed read is told" || bad "no read failure told: $(head -3 "$tmp/flaky.err")"
python3 - "$tmp/flaky.json" "$tmp/flaky-whole.json" <<'PY' || fail=1
import json, sys
w, a = (json.load(open(p)) for p in sys.argv[1:])
same = all(w[k] == a[k] for k in ("inferences", "counts", "leaks", "peak_bytes")) and a["inferences"] == 1500
print(("ok: " if same else "FAIL: ") + f"after a failed read, the watch saw the file once: {w['counts']} vs {a['counts']}")
sys.exit(0 if same else 1)
PY

# 2. stdin to its end gives the same findings as analyze on the file.
trace=$src/examples/traces/kws_leak.emt
"$edgemem" watch - --json <"$trace" >"$tmp/stdin.json" 2>"$tmp/stdin.err"
rc=$?
"$edgemem" analyze "$trace" --json >"$tmp/analyze.json" 2>/dev/null
python3 - "$tmp/stdin.json" "$tmp/analyze.json" <<'PY' || fail=1
import json, sys
w, a = (json.load(open(p)) for p in sys.argv[1:])
same = all(w[k] == a[k] for k in ("inferences", "leaks", "persistent", "peak_bytes", "fragmentation", "pools"))
print(("ok: " if same else "FAIL: ") + "watch - and analyze agree on inferences, leaks, peak, fragmentation, pools")
sys.exit(0 if same else 1)
PY
grep -q "end of input" "$tmp/stdin.err" && ok "stdin ends the watch at its end" || bad "no 'end of input'"

# 3. A clean trace: no alert, exit 0; --for ends a watch on a file that stopped growing.
start=$(date +%s%N)
"$edgemem" watch "$tmp/clean.log" --for 1s >"$tmp/out" 2>"$tmp/err"
rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$rc" = 0 ] && ok "clean trace exits 0" || bad "clean trace exit $rc: $(cat "$tmp/err")"
! grep -q ALERT "$tmp/err" && ok "no alert on a clean trace" || bad "alert on a clean trace: $(grep ALERT "$tmp/err")"
[ "$elapsed" -ge 1000 ] && [ "$elapsed" -lt 4000 ] && ok "--for 1s took ${elapsed} ms" || bad "--for 1s took ${elapsed} ms"
grep -q "200 inferences" "$tmp/out" && ok "summary of the clean trace" || bad "no summary: $(head -3 "$tmp/out")"

# On a terminal (script's pty) the status line is rewritten in place instead.
if command -v script >/dev/null; then
  script -qec "\"$edgemem\" watch \"$tmp/clean.log\" --for 1s --interval 200ms >/dev/null" /dev/null >"$tmp/tty"
  grep -q $'\r200 inferences | .*\x1b\[K' "$tmp/tty" && ok "status line rewritten in place on a terminal" ||
    bad "no refreshing status line on a terminal: $(cat -v "$tmp/tty" | head -3)"
fi

# 4. --until stops once that many inferences were seen.
"$edgemem" watch "$tmp/clean.log" --until 50 --json >"$tmp/until.json" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] && grep -q "(--until 50)" "$tmp/err" && ok "--until 50 ends the watch" || bad "--until: exit $rc, $(cat "$tmp/err")"
# Close to 50, not the 200 of the file's whole first read (the 64 KiB sniffing window once held them all).
seen=$(python3 -c "import json; print(json.load(open('$tmp/until.json'))['inferences'])")
[ "$seen" -ge 50 ] && [ "$seen" -le 52 ] && ok "--until 50 summarises $seen inferences" || bad "--until 50 summarised $seen inferences"

# 5. SIGTERM works as SIGINT; --on-alert gets the alert in its environment and on stdin.
"$edgemem" watch "$log" --arena-size 64K --on-alert "echo \"\$EDGEMEM_ALERT|\$EDGEMEM_POOL|\$EDGEMEM_DEVICE\" >>$tmp/hook; cat >>$tmp/hook" \
  --device bench-7 >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1.5
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 1 ] && ok "SIGTERM after an alert exits 1" || bad "SIGTERM: exit $rc"
grep -q "^alloc-failure|[a-z]*|bench-7$" "$tmp/hook" && ok "hook environment: kind, pool, device" || bad "hook saw: $(cat "$tmp/hook" 2>/dev/null)"
grep -q "^ALERT alloc-failure [a-z]*: pool [a-z]*: a [0-9,]* B request failed" "$tmp/hook" && ok "hook stdin: the alert line" || bad "hook stdin: $(cat "$tmp/hook" 2>/dev/null)"

# 5b. A hook's output goes to stderr (stdout is the summary's, here JSON); a
# hook still running at the end does not hold the summary back, and a second
# Ctrl-C stops it at once.
"$edgemem" watch "$log" --arena-size 64K --json --on-alert "echo \$\$ >$tmp/hookpid; echo from-the-hook; sleep 60" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1.5
kill -INT "$pid"
sleep 1
python3 -c "import json; json.load(open('$tmp/out'))" && ok "hook output kept off stdout: the JSON summary parses" ||
  bad "summary not printed whole 1 s after SIGINT, or not JSON: $(head -c 200 "$tmp/out")"
grep -q "^from-the-hook" "$tmp/err" && ok "hook output on stderr" || bad "hook output not on stderr"
kill -INT "$pid"
waited=0
while kill -0 "$pid" 2>/dev/null && [ $waited -lt 60 ]; do sleep 0.1; waited=$((waited + 1)); done
if kill -0 "$pid" 2>/dev/null; then bad "a second SIGINT does not stop the wait for a hook"; kill -KILL "$pid"; fi
wait "$pid"
grep -q "still running when the watch ended: stopped" "$tmp/err" && ok "a second SIGINT stops the hook" || bad "hook stop: $(tail -3 "$tmp/err")"
# (killed processes may linger a moment as zombies of init)
for _ in 1 2 3 4 5 6 7 8 9 10; do pgrep -g "$(cat "$tmp/hookpid")" >/dev/null || break; sleep 0.2; done
pgrep -g "$(cat "$tmp/hookpid")" >/dev/null && bad "the hook's sleep outlived the watch" || ok "nothing the hook started is left"

# 6. Bad sources and options: exit 2 with one line.
"$edgemem" watch tcp://127.0.0.1 2>"$tmp/err" >/dev/null
rc=$?
[ "$rc" = 2 ] && grep -q "expected tcp://HOST:PORT" "$tmp/err" && ok "tcp:// without a port: exit 2" || bad "tcp without port: exit $rc, $(cat "$tmp/err")"
# What a long run would find out only at its end is refused at its start.
for bad_option in "--until 0" "--until -5" "--html /nonexistent/dir/r.html" "--metrics-file $tmp" "--otlp https://127.0.0.1:4318"; do
  # shellcheck disable=SC2086
  timeout 10 "$edgemem" watch "$tmp/clean.log" $bad_option 2>"$tmp/err" >/dev/null
  rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && ok "$bad_option: exit 2 at once ($(cat "$tmp/err"))" ||
    bad "$bad_option: exit $rc, $(head -3 "$tmp/err")"
done
timeout 10 "$edgemem" watch tcp://127.0.0.1:99999 2>"$tmp/err" >/dev/null
rc=$?
[ "$rc" = 2 ] && grep -q "port from 1 to 65535" "$tmp/err" && ok "tcp port 99999: exit 2" || bad "tcp port 99999: exit $rc, $(cat "$tmp/err")"
"$edgemem" watch "$tmp/clean.log" --interval soon 2>"$tmp/err" >/dev/null
rc=$?
[ "$rc" = 2 ] && ok "--interval soon: exit 2" || bad "--interval soon: exit $rc"
head -c 70000 /dev/urandom >"$tmp/noise.bin"
"$edgemem" watch "$tmp/noise.bin" --for 2s 2>"$tmp/err" >/dev/null
rc=$?
[ "$rc" = 2 ] && ok "not a trace: exit 2 ($(tail -1 "$tmp/err"))" || bad "noise: exit $rc, $(cat "$tmp/err")"
# A directory is refused at once (it once spun, telling a failed read 170,000 times a second).
mkdir "$tmp/adir"
timeout 10 "$edgemem" watch "$tmp/adir" --until 5 2>"$tmp/err" >/dev/null
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "is a directory" "$tmp/err" && ok "a directory: exit 2, one line" ||
  bad "directory: exit $rc, $(head -3 "$tmp/err")"
# A file that is positively something else is refused before the sniffing window fills.
timeout 10 "$edgemem" watch "$src/tests/data/corpus/tflite/tflm_seanet_strided_slice0.tflite" --until 5 --interval 200ms \
  2>"$tmp/err" >/dev/null
rc=$?
[ "$rc" = 2 ] && grep -q "a TFLite model, not a trace; .*edgemem plan" "$tmp/err" && ok "a small model: refused at once" ||
  bad "model: exit $rc, $(head -3 "$tmp/err")"
# A short text that may yet be followed by records is waited for, and says so once.
printf 'booting\n' >"$tmp/boot.txt"
"$edgemem" watch "$tmp/boot.txt" --for 1s --interval 200ms 2>"$tmp/err" >/dev/null
[ "$(grep -c "8 bytes so far: not a trace .*; waiting for more (or give --format)" "$tmp/err")" = 1 ] &&
  ok "undecided bytes: told once" || bad "undecided: $(head -3 "$tmp/err")"
exit $fail
