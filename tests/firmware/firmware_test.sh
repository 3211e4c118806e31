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
