#!/usr/bin/env python3
"""`edgemem analyze --speedscope` validates against speedscope's published
file-format schema (vendored in tests/data/speedscope, see SOURCES.md), for
the demo capture and for a log whose sites are call stacks.

Usage: speedscope_schema_test.py EDGEMEM SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

edgemem, src = sys.argv[1], sys.argv[2]
with open(os.path.join(src, "tests", "data", "speedscope", "file-format-schema.json")) as f:
    schema = json.load(f)
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
failures = []

STACKS = """[MEM][10] POOL name=heap kind=heap base=0x20000000 size=65536
[MEM][20] INFER begin 1
[MEM][30] ALLOC size=644 addr=0x20000100 site=main;kws_invoke;lstm_eval
[MEM][40] ALLOC size=64 addr=0x20000400 site=main;init
[MEM][50] INFER end 1
"""


def check(name, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "s.json")
        p = subprocess.run([edgemem, "analyze", *args, "--speedscope", out], capture_output=True, text=True, timeout=300)
        if p.returncode not in (0, 1):
            failures.append(f"{name}: exit {p.returncode}: {p.stderr.strip()}")
            return
        with open(out) as f:
            doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        failures.append(f"{name}: {'/'.join(map(str, e.path))}: {e.message}")
    if not doc["profiles"]:
        failures.append(f"{name}: no profile")
    for p in doc["profiles"]:
        if p["unit"] != "bytes" or len(p["samples"]) != len(p["weights"]):
            failures.append(f"{name}: profile {p['name']} is not weighed in bytes sample by sample")
    print(f"ok: {name}: {len(doc['profiles'])} profiles, {len(doc['shared']['frames'])} frames" if not errors else f"FAIL: {name}")


traces = os.path.join(src, "examples", "traces")
check("demo", [os.path.join(traces, "kws_leak.emt"), "--elf", os.path.join(traces, "kws_leak.elf")])
check("fragment log", [os.path.join(traces, "kws_fragment.log")])
with tempfile.TemporaryDirectory() as tmp:
    log = os.path.join(tmp, "stacks.log")
    with open(log, "w") as f:
        f.write(STACKS)
    check("stack sites", [log])

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
