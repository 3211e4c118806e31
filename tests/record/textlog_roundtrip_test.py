#!/usr/bin/env python3
"""`edgemem analyze REC --textlog LOG`, then `edgemem analyze LOG`, finds what
`edgemem analyze REC` finds: the same leaks, peaks, pools and per-inference
numbers, for recordings of the record test programs (call-stack sites with
spaces and ';') and for the seed's own traces.

The text log holds no clock, so times (and the rates per second derived from
them) are not compared; everything counted in bytes, blocks and inferences is.

usage: textlog_roundtrip_test.py EDGEMEM SOURCE_DIR PIPELINE INFERENCE_LOOP PROGRAMS_DIR PLUGIN
"""
import json
import os
import subprocess
import sys
import tempfile

edgemem, source, pipeline, inference_loop, programs, plugin = sys.argv[1:7]

RECORDED = {
    "pipeline": [pipeline, "--frames", "64", "--every", "4"],
    "inference_loop": [inference_loop, "--inferences", "20", "--threads", "2", "--leak"],
    "dlopen_plugin": [os.path.join(programs, "record_dlopen_plugin"), plugin],
    "fork_thread_crash": [os.path.join(programs, "record_fork_thread_crash"), "exit"],
}
SEED = [os.path.join(source, "examples/traces/kws_fragment.log"), os.path.join(source, "examples/traces/kws_leak.emt")]
# Fields that hold times or rates per second: the text log has no clock.
TIMED = {"time", "first_time", "last_time", "begin", "end", "duration", "seconds", "time_s", "at", "clock_hz",
         "per_second", "rate_bytes_per_second", "first_seen", "last_seen"}


def untimed(value):
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMED and "time" not in k and "second" not in k}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def analyze(path, *extra):
    ran = subprocess.run([edgemem, "analyze", path, "--json", *extra], capture_output=True, text=True)
    if ran.returncode not in (0, 1):
        sys.exit(f"edgemem analyze {path} exited {ran.returncode}: {ran.stderr.strip()}")
    return json.loads(ran.stdout), ran.stderr


def compared(doc):
    return {
        "leaks": untimed(doc["leaks"]),
        "peak_bytes": doc["peak_bytes"],
        "peak": untimed(doc["peak"]),
        "pools": untimed(doc["pools"]),
        "inferences": doc["inferences"],
        "per_inference": untimed(doc.get("per_inference")),
        "counts": doc["counts"],
        "persistent": untimed(doc["persistent"]),
    }


failures = []
with tempfile.TemporaryDirectory() as tmp:
    traces = []
    for name, command in RECORDED.items():
        rec = os.path.join(tmp, name + ".emt")
        subprocess.run([edgemem, "record", "-o", rec, "--", *command], capture_output=True)
        traces.append(rec)
    for trace in traces + SEED:
        log = os.path.join(tmp, os.path.basename(trace) + ".textlog")
        direct, said = analyze(trace, "--textlog", log)
        again, _ = analyze(log)
        a, b = compared(direct), compared(again)
        for key in a:
            if a[key] != b[key]:
                failures.append(f"{os.path.basename(trace)}: {key} differs after the text log:\n"
                                f"  direct {json.dumps(a[key])[:600]}\n  text   {json.dumps(b[key])[:600]}")
        with open(log) as f:
            text = f.read()
        if trace.endswith(".emt") and os.path.basename(trace) in {n + ".emt" for n in RECORDED}:
            # A recording's sites are call stacks: frames with spaces, joined by ';'.
            if "%20" not in text or ";" not in text:
                failures.append(f"{trace}: expected escaped call-stack sites in the text log")
        print(f"{os.path.basename(trace)}: {direct['input']['events']} events, "
              f"{len(direct['leaks'])} leak sites, peak {direct['peak_bytes']} B: same after the text log")

for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
