#!/usr/bin/env python3
"""Every command's --json, run on real inputs from the repository, validates
against its JSON Schema in docs/schemas/ (draft 2020-12).

Usage: json_schema_test.py EDGEMEM SOURCE_DIR DATA_DIR
DATA_DIR holds the corpus (tflite/, map/, map_armlink/, map_iar/, su/,
stack_keil/, itm/). A schema missing for plan, map, stack, fit, check or diff
is a failure, analyze's included.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

edgemem, src, data = sys.argv[1], sys.argv[2], sys.argv[3]
if not os.path.isdir(data):
    sys.exit(f"FAIL: test data missing: {data} (see tests/data/SOURCES.md)")
schemas_dir = os.path.join(src, "docs", "schemas")
traces = os.path.join(src, "examples", "traces")
failures = []
checked = {}


def corpus(sub, ext):
    d = os.path.join(data, sub)
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(ext))
    if not files:
        sys.exit(f"FAIL: no *{ext} files in {d}")
    return files


def schema(command):
    path = os.path.join(schemas_dir, command + ".schema.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


validators = {}
for command in ["plan", "map", "stack", "fit", "check", "diff", "analyze"]:
    validators[command] = schema(command)
    if validators[command] is None:
        failures.append(f"docs/schemas/{command}.schema.json is missing")


def run(command, *args, codes=(0, 1)):
    """Runs `edgemem COMMAND --json ARGS` and validates what it prints."""
    argv = [edgemem, command, "--json", *args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    what = " ".join(argv[1:])
    if p.returncode not in codes:
        failures.append(f"{what}: exit {p.returncode}: {p.stderr.strip()}")
        return
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        failures.append(f"{what}: not JSON ({e})")
        return
    v = validators[command]
    if v is None:
        return
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:3]:
        failures.append(f"{what}: {'/'.join(map(str, e.absolute_path))}: {e.message[:200]}")
    checked[command] = checked.get(command, 0) + 1


models = corpus("tflite", ".tflite")
maps = corpus("map", ".map") + corpus("map_armlink", ".map") + corpus("map_iar", ".map")
own_o2, own_o0 = os.path.join(data, "map", "own_cm4_O2"), os.path.join(data, "map", "own_cm4_O0")
kws = os.path.join(data, "tflite", "tflm_keyword_scrambled.tflite")
log, emt = os.path.join(traces, "kws_fragment.log"), os.path.join(traces, "kws_leak.emt")

for m in models:
    run("plan", m)
if os.path.exists(kws):
    run("plan", "--declared", "5000", "--reorder", kws)
    run("plan", "--declared", "64K", "--target", "x86-64", kws)

for m in maps:
    run("map", m)
if os.path.exists(own_o2 + ".elf"):
    run("map", own_o2 + ".map", "--elf", own_o2 + ".elf")
    run("map", own_o2 + ".map", "--elf", own_o0 + ".elf")  # two links: exit 1
    run("map", own_o2 + ".elf")
    run("diff", own_o2 + ".elf", own_o0 + ".elf")

with tempfile.TemporaryDirectory() as tmp:
    su = os.path.join(data, "su")
    for opt in ["O0", "O2"]:
        d = os.path.join(tmp, opt)
        os.makedirs(d)
        for f in os.listdir(su) if os.path.isdir(su) else []:
            if f.startswith(f"own_{opt}_"):
                shutil.copy(os.path.join(su, f), d)
        if os.listdir(d):
            run("stack", d)
    for d in sorted(os.listdir(su)) if os.path.isdir(su) else []:
        if os.path.isdir(os.path.join(su, d)):
            run("stack", os.path.join(su, d))
    for h in corpus("stack_keil", ".htm"):
        run("stack", h)

    if os.path.exists(kws):
        run("fit", kws, "--mcu", "nrf52840")
        run("fit", kws, "--ram", "64K", "--flash", "256K")
        # A model TFLite Micro cannot run: no RAM need and no fit are claimed.
        run("fit", os.path.join(src, "tests", "data", "realworld", "tflite", "litert_multi_add_flex.tflite"),
            "--mcu", "nrf52840")
        for m in maps:
            run("fit", kws, "--map", m)
        run("fit", os.path.join(data, "tflite", "tflm_person_detect.tflite"), "--map", own_o2 + ".map",
            "--mcu", "stm32f103c8")

    budget = os.path.join(tmp, "budget.json")
    with open(budget, "w") as f:
        json.dump({"schema": "edgemem.budget/1",
                   "regions": {"RAM": {"max_percent": 30, "min_free_bytes": "4K"}, "FLASH": {"max_bytes": "256K"}},
                   "symbols": {"tensor_arena": {"max_bytes": 16384}},
                   "stack": {"main_stack_bytes": "map", "nesting": "one_level"},
                   "arena": {"min_margin_percent": 5}}, f)
    if os.path.exists(own_o2 + ".map"):
        run("check", "--budget", budget, "--map", own_o2 + ".map", "--stack", os.path.join(tmp, "O0"), "--model", kws)
        # A model TFLite Micro cannot run: a broken arena budget with no measured margin.
        flex = os.path.join(src, "tests", "data", "realworld", "tflite", "litert_multi_add_flex.tflite")
        run("check", "--budget", budget, "--map", own_o2 + ".map", "--stack", os.path.join(tmp, "O0"), "--model", flex)
        # A declared arena short of the model's: its margin in percent is below 0 (review: it failed the schema).
        run("check", "--budget", budget, "--map", own_o2 + ".map", "--stack", os.path.join(tmp, "O0"), "--model",
            os.path.join(data, "tflite", "mlperftiny_kws_ref_model.tflite"))
    trace_budget = os.path.join(tmp, "trace_budget.json")
    with open(trace_budget, "w") as f:
        json.dump({"leak": {"max_bytes_per_inference": 0, "max_leaked_bytes": "1K"},
                   "fragmentation": {"max_band": "warning", "max_alloc_failures": 0}}, f)
    for t in [log, emt]:
        run("check", "--budget", trace_budget, "--trace", t)
    # Two threads: a leak of each, a hand-off and a temporary allocation
    # (threads, cross_thread_frees, temporary_allocations, leaks[].threads).
    threaded = os.path.join(tmp, "threads.log")
    with open(threaded, "w") as f:
        for i in range(16):
            a = 0x10000 + 0x100 * i
            f.write(f"[MEM][{4 * i + 1}] ALLOC size=48 addr={a} site=worker.c:{1 + i % 2} thread=2\n")
            f.write(f"[MEM][{4 * i + 2}] ALLOC size=32 addr={a + 0x40} site=main.c:9 thread=1\n")
            f.write(f"[MEM][{4 * i + 3}] FREE addr={a + 0x40} thread=1\n")
            f.write(f"[MEM][{4 * i + 4}] FREE addr={a} thread=1\n" if i % 2 else
                    f"[MEM][{4 * i + 4}] ALLOC size=16 addr={a + 0x80} site=main.c:20 thread=1\n")
    run("analyze", threaded)
    # A device that leaked until it restarted, then ran clean: the boot
    # before judged as it went down (restarts.kept[].leaks, check's leaking_boots).
    reboot = os.path.join(tmp, "reboot.log")
    with open(reboot, "w") as f:
        t = 0
        for boot, leak in ((1, True), (2, False)):
            f.write(f"[MEM][{t}] BOOT\n[MEM][{t}] POOL name=heap kind=heap base=0x20000000 size=65536\n")
            for i in range(1, 41):
                t += 4
                f.write(f"[MEM][{t}] INFER begin {i}\n[MEM][{t + 1}] ALLOC size=512 addr=0x20008000 site=work.c:3\n")
                if leak:
                    f.write(f"[MEM][{t + 2}] ALLOC size=644 addr={0x20000000 + 644 * i:#x} site=model.c:58\n")
                f.write(f"[MEM][{t + 3}] FREE addr=0x20008000\n[MEM][{t + 3}] INFER end {i}\n")
    run("analyze", reboot)
    run("check", "--budget", trace_budget, "--trace", reboot)
    # A heap far apart (layout regions with grids of their own), read
    # gzip-compressed (input.compression), and cut short (its problem).
    import gzip
    far = os.path.join(tmp, "far.log.gz")
    with gzip.open(far, "wt") as f:
        for i in range(30000):
            a = (0x555555550000 if i % 2 else 0x7fffa0000000) + (i % 64) * 1024
            f.write(f"[MEM][{2 * i + 1}] ALLOC size=1024 addr={a:#x} site=far.c:{i % 2}\n")
            f.write(f"[MEM][{2 * i + 2}] FREE addr={a:#x}\n")
    run("analyze", far)
    with open(far, "rb") as f:
        packed = f.read()
    cut = os.path.join(tmp, "cut.log.gz")
    with open(cut, "wb") as f:
        f.write(packed[:len(packed) // 2])
    run("analyze", cut)

if len(maps) >= 2:
    run("diff", maps[0], maps[1])
    run("diff", own_o2 + ".map", own_o0 + ".map")
run("diff", log, emt)
run("diff", emt, log)

# The ETM stream of the sigrok capture is no ITM: analyze refuses it (exit 2).
for t in [log, emt] + [f for f in corpus("itm", ".bin") if "_etm_" not in f]:
    run("analyze", t)

# A TFLite Micro capture beside edgemem's plan of its model (plan_vs_capture).
captures = os.path.join(src, "tests", "data", "tflm_captures")
for name in ["tflm_hello_world_int8", "tflm_keyword_scrambled"]:
    for target in ["x86-64", "cortex-m"]:
        run("analyze", os.path.join(captures, name + ".emt"), "--model", os.path.join(data, "tflite", name + ".tflite"),
            "--target", target)

for command in ["plan", "map", "stack", "fit", "check", "diff"]:
    if validators[command] is not None and not checked.get(command):
        failures.append(f"{command}: no input was validated (is the corpus at {data}?)")
for command, n in sorted(checked.items()):
    print(f"ok: {command}: {n} documents valid")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
