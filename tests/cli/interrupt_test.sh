#!/usr/bin/env bash
# Ctrl-C on a live capture: `analyze` reading a FIFO whose writer is still
# open gets SIGINT (then SIGTERM), prints the report of what it decoded so
# far with "interrupted after N bytes", and exits 128 + the signal.
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
python3 -c "import json, sys; sys.exit(json.load(open('$tmp/out'))['schema'] != 'edgemem.analyze/1')" ||
  { echo "FAIL: SIGTERM: the JSON report is not printed whole"; fail=1; }
exit $fail
