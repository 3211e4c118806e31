#!/usr/bin/env bash
# The QEMU firmware built in summary mode (-DEDGEMEM_SUMMARY=1: per-pool
# SUMMARY records at each inference end, no allocation events): `edgemem
# analyze` finds the leak variant's 644 B per inference and its forecast
# from the pools' usage and says the site-level checks were not made;
# `edgemem watch` raises the leak alert on it; and it costs a fraction of
# the full trace of the same run.
set -u
edgemem=$1
root=$2
fw=$root/examples/firmware
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

export INFERENCES=200 ARENA_SIZE=262144
"$fw/capture.sh" leak "$work/summary.emt" summary || { echo "FAIL: summary firmware did not run"; exit 1; }
"$fw/capture.sh" leak "$work/full.emt" ring || { echo "FAIL: full firmware did not run"; exit 1; }

"$edgemem" analyze --json "$work/summary.emt" >"$work/summary.json" 2>"$work/analyze.err"
rc=$?
[ "$rc" = 0 ] && ok "analyze reads the summary capture" || bad "analyze exit $rc: $(cat "$work/analyze.err")"
"$edgemem" analyze "$work/summary.emt" >"$work/summary.txt" 2>&1
grep -q "^\[NOT CHECKED\] leak: summary records carry no sites or blocks" "$work/summary.txt" &&
  ok "text says sites were not checked" || bad "no [NOT CHECKED] for sites: $(head -20 "$work/summary.txt")"
"$edgemem" analyze --json "$work/full.emt" >"$work/full.json" 2>/dev/null

python3 - "$work" <<'PY' || fail=1
import json, os, sys
work = sys.argv[1]
s = json.load(open(f"{work}/summary.json"))
full = json.load(open(f"{work}/full.json"))
failures = 0
def check(name, got, want):
    global failures
    good = got == want
    print(("ok: " if good else "FAIL: ") + f"{name}: {got!r}" + ("" if good else f", expected {want!r}"))
    failures += not good
check("inferences", s["inferences"], 200)
check("summary records: 3 pools x 200 inferences", s["counts"]["summaries"], 600)
check("no allocation events", s["counts"]["allocs"], 0)
check("leak slope from the pools' usage", s["leak_rate_bytes_per_inference"], 644.0)
check("the same slope as the full trace", s["leak_rate_bytes_per_inference"], full["leak_rate_bytes_per_inference"])
fc, ffc = s["exhaustion_forecast"], full["exhaustion_forecast"]
check("forecast pool", fc["pool"], "arena.persistent")
check("forecast as the full trace's", (fc["inferences"], fc["remaining_bytes"]), (ffc["inferences"], ffc["remaining_bytes"]))
check("leaks by site not checked", (s["checks"]["leaks"]["status"], s["leaks"]), ("not_checked", []))
check("reason", "summary records carry no sites or blocks" in s["checks"]["leaks"]["reason"], True)
check("LIFO not checked", s["checks"]["lifo"]["status"], "not_checked")
pools = {p["name"]: p for p in s["pools"]}
fpools = {p["name"]: p for p in full["pools"]}
for name in ("arena", "arena.persistent"):
    check(f"{name} peak as the full trace's", pools[name]["peak_bytes"], fpools[name]["peak_bytes"])
check("arena fragmentation measured from its offsets", [p["pool"] for p in s["fragmentation"]["pools"]], ["arena", "arena.persistent"])
size, full_size = os.path.getsize(f"{work}/summary.emt"), os.path.getsize(f"{work}/full.emt")
print(f"info: summary capture {size} B, full trace {full_size} B ({size / full_size:.0%}), {size / 200:.1f} B per inference")
check("summary capture smaller than the full trace", size < full_size / 2, True)
sys.exit(1 if failures else 0)
PY

"$edgemem" watch - --json --on-alert "echo \"\$EDGEMEM_ALERT \$EDGEMEM_POOL \$EDGEMEM_INFERENCE\" >>$work/alerts" \
  <"$work/summary.emt" >"$work/watch.json" 2>"$work/watch.err"
rc=$?
alert=$(grep "^leak arena.persistent " "$work/alerts" 2>/dev/null | head -1)
[ -n "$alert" ] && ok "watch raises the leak alert on arena.persistent at inference $(echo "$alert" | cut -d' ' -f3)" ||
  bad "no leak alert; hook saw: $(cat "$work/alerts" 2>/dev/null); $(grep ALERT "$work/watch.err")"
at=$(echo "$alert" | cut -d' ' -f3)
[ -n "$at" ] && [ "$at" -le 100 ] && ok "confirmed within 100 inferences" || bad "alert at inference '$at'"
[ "$rc" = 1 ] && ok "watch exits 1 after the alert" || bad "watch exit $rc"
"$edgemem" watch - --metrics-file "$work/m.prom" <"$work/summary.emt" >/dev/null 2>&1
grep -q '^edgemem_pool_used_bytes{.*pool="arena.persistent".*} 128896$' "$work/m.prom" &&
  ok "metrics carry the summary's used bytes (96 B of op data + 200 x 644 B)" || bad "metrics: $(grep used_bytes "$work/m.prom")"
# Summaries send no blocks: their number is unknown, not 0 (docs/metrics.md).
! grep -q '^edgemem_pool_live_blocks{.*pool="arena.persistent"' "$work/m.prom" &&
  ok "no live-blocks sample for a summarised pool" || bad "metrics: $(grep live_blocks "$work/m.prom")"
exit $fail
