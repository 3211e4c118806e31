#!/usr/bin/env bash
# The firmware streams its capture out of UART0, which QEMU serves as a TCP
# socket; `edgemem watch tcp://...` follows it live. The leak variant (644 B
# per inference from the first, 100 inferences a second for 3 s) must raise
# the leak alert while QEMU is still running, as the --on-alert hook sees it;
# the clean variant must run 300 inferences with no alert and exit 0. Both
# firmware runs end by themselves, so nothing is left running.
set -u
edgemem=$1
root=$2
work=$(mktemp -d)
capture_pid=
cleanup() {
  [ -n "$capture_pid" ] && wait "$capture_pid" 2>/dev/null  # QEMU ends with its 300 inferences
  rm -rf "$work"
}
trap cleanup EXIT
fail=0
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
stream() {  # stream VARIANT INFERENCES PORT: the firmware under QEMU as a TCP server, in the background
  INFERENCES=$2 ARENA_SIZE=2097152 QEMU_TIMEOUT=120 "$root/examples/firmware/capture.sh" "$1" "$work/$1" "uart:$3" \
    >"$work/$1.capture.log" 2>&1 &
  capture_pid=$!
}

# Leak: the hook records the alert and whether QEMU (under capture.sh) still runs.
port=$(free_port)
stream leak 300 "$port"
hook="echo \"\$EDGEMEM_ALERT \$EDGEMEM_POOL \$EDGEMEM_INFERENCE\" >>$work/alerts; cat >>$work/alert_lines;
  [ \$EDGEMEM_ALERT = leak ] && kill -0 $capture_pid && echo running >>$work/qemu_state"
"$edgemem" watch "tcp://127.0.0.1:$port" --json --interval 200ms --on-alert "$hook" >"$work/leak.json" 2>"$work/leak.err" &
watch_pid=$!
for _ in $(seq 1 1200); do  # the firmware build and QEMU start take a while on a busy machine
  [ -s "$work/qemu_state" ] && break
  sleep 0.1
done
kill -INT "$watch_pid"
wait "$watch_pid"
rc=$?
wait "$capture_pid"
capture_pid=

# The arena keeps persistent buffers (the leak's) at its tail, in pool 'arena.persistent'.
leak_alert=$(grep "^leak arena.persistent " "$work/alerts" 2>/dev/null | head -1)
if [ -n "$leak_alert" ]; then
  echo "ok: leak alert on pool arena.persistent at inference $(echo "$leak_alert" | cut -d' ' -f3)"
else
  echo "FAIL: no leak alert on the arena; hook saw: $(cat "$work/alerts" 2>/dev/null)"; tail -20 "$work/leak.err"; cat "$work/leak.capture.log"; fail=1
fi
at=$(echo "$leak_alert" | cut -d' ' -f3)
if [ -n "$at" ] && [ "$at" -le 100 ]; then echo "ok: confirmed within 100 inferences ($at)"; else echo "FAIL: alert at inference '$at', expected <= 100"; fail=1; fi
if [ "$(cat "$work/qemu_state" 2>/dev/null)" = running ]; then
  echo "ok: QEMU was still running when the alert was raised"
else
  echo "FAIL: QEMU had stopped before the alert (hook: '$(cat "$work/qemu_state" 2>/dev/null)')"; fail=1
fi
grep -q "^ALERT leak arena.persistent: pool arena.persistent leaks: its lowest usage in each 8 inferences rose 644 B per inference" "$work/alert_lines" ||
  { echo "FAIL: the hook's stdin did not carry the alert line: $(cat "$work/alert_lines" 2>/dev/null)"; fail=1; }
[ "$rc" = 1 ] && echo "ok: exit 1 after an alert" || { echo "FAIL: exit $rc after an alert, expected 1"; fail=1; }
python3 - "$work/leak.json" "$root/examples/firmware/model.c" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
line = next(i for i, l in enumerate(open(sys.argv[2]), 1) if "EM_ARENA_PERSISTENT(arena, 161" in l)
leaks = doc["leaks"]
ok = len(leaks) == 1 and leaks[0]["site"] == f"model.c:{line}" and leaks[0]["bytes_per_inference"] == 644.0
print(("ok: " if ok else "FAIL: ") + f"summary after SIGINT names the leak: {[(l['site'], l['bytes_per_inference']) for l in leaks]}")
sys.exit(0 if ok else 1)
PY

# Clean: 300 inferences, then --until ends the watch.
port=$(free_port)
stream clean 300 "$port"
"$edgemem" watch "tcp://127.0.0.1:$port" --json --until 300 --on-alert "echo \$EDGEMEM_ALERT >>$work/clean_alerts" \
  >"$work/clean.json" 2>"$work/clean.err"
rc=$?
wait "$capture_pid"
capture_rc=$?
capture_pid=
[ "$rc" = 0 ] && echo "ok: clean run exits 0" || { echo "FAIL: clean run exit $rc"; tail -20 "$work/clean.err"; fail=1; }
[ ! -s "$work/clean_alerts" ] && echo "ok: no alert on the clean firmware" ||
  { echo "FAIL: alerts on the clean firmware: $(cat "$work/clean_alerts")"; grep ALERT "$work/clean.err"; fail=1; }
[ "$capture_rc" = 0 ] || { echo "FAIL: the clean firmware exited $capture_rc"; cat "$work/clean.capture.log"; fail=1; }
python3 -c "import json, sys; d = json.load(open('$work/clean.json')); print(('ok: ' if d['inferences'] == 300 and not d['leaks'] else 'FAIL: ') + f\"{d['inferences']} inferences, leaks {d['leaks']}\"); sys.exit(d['inferences'] != 300 or bool(d['leaks']))" || fail=1
exit $fail
