#!/usr/bin/env bash
# A live capture: `analyze` reading a FIFO whose writer is still open.
# Ctrl-C (SIGINT, then SIGTERM) prints the report of what was decoded so far
# with "interrupted after N bytes" and exits 128 + the signal; a read taking
# over a second shows a progress line on a terminal, and none into a file.
set -u
edgemem=$1
src=$2
trace=$src/examples/traces/kws_fragment.log
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
size=$(wc -c <"$trace")

run() {  # run SIGNAL WANT_CODE [--json]
  local signal=$1 want=$2
  shift 2
  rm -f "$tmp/fifo" && mkfifo "$tmp/fifo"
  "$edgemem" analyze "$@" "$tmp/fifo" >"$tmp/out" 2>"$tmp/err" &
  local pid=$!
  exec 3>"$tmp/fifo"       # the writer stays open: no end of file
  cat "$trace" >&3
  sleep 1                  # let edgemem read all of it and block on the next read
  kill -"$signal" "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ $waited -lt 50 ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    echo "FAIL: $signal: edgemem still reading 5 s after the signal"; kill -KILL "$pid"; fail=1
  fi
  wait "$pid"
  local got=$?
  exec 3>&-
  if [ "$got" != "$want" ]; then echo "FAIL: $signal: exit $got, expected $want"; cat "$tmp/err"; fail=1; else echo "ok: $signal exits $want"; fi
  grep -q "interrupted after $size bytes" "$tmp/err" || { echo "FAIL: $signal: no 'interrupted after $size bytes'"; cat "$tmp/err"; fail=1; }
}

run INT 130
grep -q "^interrupted after $size bytes: partial report" "$tmp/out" || { echo "FAIL: the report does not say it is partial"; fail=1; }
grep -q "ALLOC FAIL" "$tmp/out" || { echo "FAIL: SIGINT: no report of what was decoded"; cat "$tmp/out"; fail=1; }
run TERM 143 --json
python3 -c "import json, sys; d = json.load(open('$tmp/out')); sys.exit(d['schema'] != 'edgemem.analyze/1' or d['input']['interrupted'] is not True)" ||
  { echo "FAIL: SIGTERM: the JSON report is not printed whole, or does not say it was interrupted"; fail=1; }

# A gzip capture stopped half-way: the stream is unfinished because reading
# stopped, so no "ends early" (that is for a file cut off).
gzip -c "$trace" >"$tmp/trace.gz"
half=$(( $(wc -c <"$tmp/trace.gz") / 2 ))
rm -f "$tmp/fifo" && mkfifo "$tmp/fifo"
"$edgemem" analyze "$tmp/fifo" >"$tmp/out" 2>"$tmp/err" &
pid=$!
exec 3>"$tmp/fifo"
head -c "$half" "$tmp/trace.gz" >&3
sleep 1
kill -INT "$pid"
wait "$pid"
got=$?
exec 3>&-
[ "$got" = 130 ] || { echo "FAIL: gzip: exit $got, expected 130"; cat "$tmp/err"; fail=1; }
grep -q "interrupted after $half bytes of the file (" "$tmp/err" || { echo "FAIL: gzip: no 'interrupted after $half bytes of the file'"; cat "$tmp/err"; fail=1; }
! grep -q "ends early" "$tmp/out" "$tmp/err" || { echo "FAIL: gzip: a stopped read called a cut file"; cat "$tmp/err"; fail=1; }
echo "ok: a stopped gzip read"

# SIGTERM before anything was decoded, and in check, which judges whole
# traces only: how many bytes were read is said (it was "0 bytes" for 1,200
# bytes of text, and nothing at all from check).
stopped() {  # stopped FILE PATTERN COMMAND...: FILE through a FIFO that stays open, then SIGTERM
  local file=$1 pattern=$2
  shift 2
  rm -f "$tmp/fifo" && mkfifo "$tmp/fifo"
  "$@" >"$tmp/out" 2>"$tmp/err" &
  local pid=$!
  exec 3>"$tmp/fifo"
  cat "$file" >&3
  sleep 1
  kill -TERM "$pid"
  wait "$pid"
  local got=$?
  exec 3>&-
  if [ "$got" != 143 ]; then echo "FAIL: $*: exit $got, expected 143"; cat "$tmp/err"; fail=1
  elif ! grep -q "$pattern" "$tmp/err"; then echo "FAIL: $*: no '$pattern'"; cat "$tmp/err"; fail=1
  else echo "ok: stopped: $*"; fi
}
for i in $(seq 100); do echo "not a trace"; done >"$tmp/text"  # 1,200 bytes
stopped "$tmp/text" "fifo: interrupted after 1200 bytes, before a memory event was decoded" "$edgemem" analyze "$tmp/fifo"
printf '{"inputs": {"trace": "fifo"}, "leak": {"max_leaked_bytes": 1024}}\n' >"$tmp/budget.json"
stopped "$trace" "fifo: interrupted after $size bytes: check judges whole traces" "$edgemem" check --budget "$tmp/budget.json"

# Progress: the trace arrives in two halves 1.5 s apart; stderr a terminal (script's pty) or a file.
progress() {  # progress COMMAND-PREFIX: runs analyze on a slow FIFO, output in $tmp/out
  rm -f "$tmp/fifo" && mkfifo "$tmp/fifo"
  "$@" >"$tmp/out" 2>&1 &
  local pid=$!
  exec 3>"$tmp/fifo"
  cat "$trace" >&3
  sleep 1.5
  cat "$trace" >&3
  exec 3>&-
  wait "$pid"
}
if command -v script >/dev/null; then
  progress script -qec "\"$edgemem\" analyze \"$tmp/fifo\"" /dev/null
  grep -q "edgemem: reading $tmp/fifo: " "$tmp/out" || { echo "FAIL: no progress line on a terminal"; cat "$tmp/out"; fail=1; }
  echo "ok: progress on a terminal"
fi
progress "$edgemem" analyze "$tmp/fifo"
! grep -q "edgemem: reading" "$tmp/out" || { echo "FAIL: a progress line written into a file"; fail=1; }
echo "ok: no progress into a file"
exit $fail
