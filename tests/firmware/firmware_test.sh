#!/usr/bin/env bash
# Builds every firmware variant with arm-none-eabi-gcc, runs it under
# qemu-system-arm, and checks what `edgemem analyze` finds in the capture.
# Expected source lines are looked up in model.c, so the test follows edits.
set -euo pipefail
edgemem=$1
root=$2
fw=$root/examples/firmware
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
line_of() { grep -n "$1" "$fw/model.c" | head -1 | cut -d: -f1; }
leak_line=$(line_of 'EM_ARENA_PERSISTENT(arena, 161')
dw_line=$(line_of 'em_alloc(arena->head_pool, offset, bytes')
im2col_line=$(line_of 'int8_t \*im2col = EM_ARENA_TEMP')
malloc_line=$(grep -n 'uint8_t \*buf = malloc' "$fw/main.c" | cut -d: -f1)

for variant in clean leak fragment overflow lifo; do
  "$fw/capture.sh" "$variant" "$work/$variant.emt"
  "$edgemem" analyze --json --elf "$work/$variant.emt.elf" "$work/$variant.emt" >"$work/$variant.json" || true
done
"$fw/capture.sh" leak "$work/leak_itm.bin" itm
"$edgemem" analyze --json "$work/leak_itm.bin" >"$work/leak_itm.json" || true
"$fw/capture.sh" leak "$work/leak_text.log" text
"$edgemem" analyze --json "$work/leak_text.log" >"$work/leak_text.json" || true
# The leak on a device that restarts: a watchdog reset (SYSRESETREQ, QEMU
# resets the machine) after 30 inferences, 20 more in the second boot, one
# capture across both: each boot's leak is found with its own numbers.
"$fw/capture.sh" reboot "$work/reboot.emt"
"$edgemem" analyze --json --elf "$work/reboot.emt.elf" "$work/reboot.emt" >"$work/reboot.json" || true
"$fw/capture.sh" reboot "$work/reboot_text.log" text
"$edgemem" analyze --json "$work/reboot_text.log" >"$work/reboot_text.json" || true
echo '{"leak": {"max_bytes_per_inference": 100, "max_leaked_bytes": 15000}}' >"$work/budget.json"
rc=0
"$edgemem" check --budget "$work/budget.json" --trace "$work/reboot.emt" >"$work/reboot.check" 2>&1 || rc=$?
grep -q "19,320 B leaked at 1 site(s) (first model.c:$(line_of 'EM_ARENA_PERSISTENT(arena, 161')) in boot 1" "$work/reboot.check" &&
  [ "$rc" = 1 ] && echo "ok   reboot: check breaks the leak limits on boot 1's own bytes" ||
  { echo "FAIL reboot: check exit $rc:"; cat "$work/reboot.check"; exit 1; }

python3 - "$work" "$leak_line" "$dw_line" "$im2col_line" "$malloc_line" <<'PY'
import json, sys
work, leak_line, dw_line, im2col_line, malloc_line = sys.argv[1:]
failures = 0
def check(name, got, want):
    global failures
    ok = got == want
    print(("ok  " if ok else "FAIL") + f" {name}: {got!r}" + ("" if ok else f", expected {want!r}"))
    failures += not ok
def load(name):
    return json.load(open(f"{work}/{name}.json"))

clean = load("clean")
check("clean: inferences", clean["inferences"], 50)
check("clean: no leak", clean["leaks"], [])
check("clean: no overflow", clean["overflow_count"], 0)
check("clean: guards intact", (clean["guard_failures"], clean["guard_checks"]), (0, 50))
check("clean: no LIFO violation", clean["lifo"]["violations"], 0)
check("clean: no failed allocation", clean["fragmentation"]["alloc_failures"], 0)
check("clean: nothing lost", (clean["input"]["corrupt_bytes"], clean["input"]["dropped_records"]), (0, 0))

for name in ("leak", "leak_itm", "leak_text"):
    leak = load(name)
    check(f"{name}: one leaking site", len(leak["leaks"]), 1)
    l = leak["leaks"][0]
    check(f"{name}: site", l["site"], f"model.c:{leak_line}")
    check(f"{name}: bytes/count", (l["bytes"], l["count"]), (32200, 50))
    check(f"{name}: per inference", l["bytes_per_inference"], 644.0)
    check(f"{name}: type hint", l["type_hint"], "float32[161]")
    check(f"{name}: op data is persistent, not leaked", sorted(p["bytes"] for p in leak["persistent"]), [48, 48])

for name in ("reboot", "reboot_text"):
    r = load(name)
    check(f"{name}: one restart", r["restarts"]["total"], 1)
    boot = r["restarts"]["kept"][0]
    check(f"{name}: boot 1 went down after its 30th inference",
          (boot["boot"], boot["inferences"], boot["after_inference"], boot["during_inference"]), (1, 30, 30, None))
    # 30 leaked blocks and the two 48 B op-data blocks made in Prepare.
    check(f"{name}: in use when it went down", boot["bytes_in_use"], 30 * 644 + 2 * 48)
    check(f"{name}: boot 1 leaked", (boot["leak_check"]["status"], boot["leaking_groups"], boot["leaked_bytes"]),
          ("found", 1, 19320))
    bl = boot["leaks"][0]
    check(f"{name}: boot 1's leak", (bl["site"], bl["bytes"], bl["count"], bl["bytes_per_inference"]),
          (f"model.c:{leak_line}", 19320, 30, 644.0))
    check(f"{name}: 50 inferences over both boots", r["inferences"], 50)
    check(f"{name}: leak check found", r["checks"]["leaks"]["status"], "found")
    check(f"{name}: boot 2's leak", [(l["site"], l["bytes"], l["count"], l["bytes_per_inference"]) for l in r["leaks"]],
          [(f"model.c:{leak_line}", 12880, 20, 644.0)])
    check(f"{name}: worst boot", (r["restarts"]["most_leaked"]["boot"], r["restarts"]["leaking_boots"]), (1, 1))
    check(f"{name}: nothing lost", (r["input"]["corrupt_bytes"], r["input"]["dropped_records"], r["input"]["truncated_bytes"]), (0, 0, 0))
check("reboot: the emt capture's second HEADER", load("reboot")["input"]["device_restarts"], 1)

frag = load("fragment")
f = frag["fragmentation"]
check("fragment: band", f["band"], "danger")
check("fragment: failures", f["alloc_failures"], 3)
first = f["failures"][0]
check("fragment: first failure judged fragmentation", first["fragmentation"], True)
check("fragment: enough total free", first["total_free"] > first["size"] > first["largest_free"], True)
check("fragment: 2840 B failed with 7348 B free, 2820 B largest",
      (first["size"], first["total_free"], first["largest_free"]), (2840, 7348, 2820))
# The front end is inlined into main; DWARF still names the malloc line.
check("fragment: site resolved through DWARF", first["site"].split(" (")[0], "main")
check("fragment: at front_end's malloc", first["site"], f"main (main.c:{malloc_line})")

over = load("overflow")
check("overflow: count", over["overflow_count"], 1)
o = over["overflows"][0]
check("overflow: where", (o["site"], o["offset"], o["size"], o["arena_size"]), (f"model.c:{dw_line}", 224, 4096, 3392))
check("overflow: 3072 B left, 1024 B past the end", (o["available"], o["over_by"]), (3072, 1024))
check("overflow: guard corrupted from inference 8", (over["guard_failures"], over["guard_failure_events"][0]["inference"]), (43, 8))

lifo = load("lifo")
check("lifo: violations", lifo["lifo"]["violations"], 50)
check("lifo: stranded", lifo["lifo"]["max_stranded_bytes"], 512)
check("lifo: culprit", lifo["lifo"]["sites"][0]["site"], f"model.c:{im2col_line}")
check("lifo: no leak", lifo["leaks"], [])
sys.exit(1 if failures else 0)
PY
