#!/usr/bin/env python3
"""Oracle (issue #12 item 6): edgemem's leak totals on examples/linux/pipeline
agree with Debian's heaptrack on the same program.

heaptrack calls every block still live at exit "leaked"; edgemem splits the
same blocks into leaks, persistent blocks and a live working set (what the C
runtime keeps, such as stdout's buffer, is among the latter). So the
reconciliation is: edgemem's leaks + persistent == heaptrack's total leaked,
to heaptrack's printed precision, and for each planted leak heaptrack's
count is edgemem's count and its bytes agree to the printed precision.
heaptrack records from its own constructor on; what the program's libraries
allocate in theirs, which run first, it does not see (libstdc++'s emergency
exception pool, which valgrind reports as still reachable). edgemem records
those blocks, under a stack through the loader's _dl_init: they are left
out of the sum.
Exit 77 (skipped) when heaptrack is not installed or cannot record here.

usage: heaptrack_oracle_test.py EDGEMEM PIPELINE
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
edgemem, pipeline = sys.argv[1], sys.argv[2]
args = ["--frames", "64", "--every", "4"]

if not shutil.which("heaptrack") or not shutil.which("heaptrack_print"):
    print("skipped: heaptrack or heaptrack_print is not installed (apt-get install heaptrack)")
    sys.exit(SKIP)

K = {"": 1, "K": 1000, "M": 1000**2, "G": 1000**3}


def amount(text):
    m = re.fullmatch(r"([0-9.]+)([KMG]?)", text)
    return float(m.group(1)) * K[m.group(2)], 10 ** -len(m.group(1).split(".")[1]) * K[m.group(2)] if "." in m.group(1) else K[m.group(2)]


failures = []
with tempfile.TemporaryDirectory() as tmp:
    emt = os.path.join(tmp, "pipeline.emt")
    subprocess.run([edgemem, "record", "-o", emt, "--", pipeline, *args], check=True, capture_output=True)
    report = json.loads(subprocess.run([edgemem, "analyze", emt, "--json"], capture_output=True, text=True).stdout)

    out = os.path.join(tmp, "heaptrack")
    ran = subprocess.run(["heaptrack", "-o", out, pipeline, *args], capture_output=True, text=True)
    recorded = [f for f in os.listdir(tmp) if f.startswith("heaptrack")]
    if ran.returncode != 0 or not recorded:
        print(f"skipped: heaptrack could not record here (exit {ran.returncode}): {ran.stderr.strip()[-300:]}")
        sys.exit(SKIP)
    printed = subprocess.run(["heaptrack_print", "-f", os.path.join(tmp, recorded[0]), "-l", "1"],
                             capture_output=True, text=True, check=True).stdout

total = re.search(r"total memory leaked: ([0-9.]+[KMG]?)", printed)
if not total:
    print("heaptrack_print printed no 'total memory leaked' line:\n" + printed[-2000:])
    sys.exit(1)
value, step = amount(total.group(1))
before_heaptrack = sum(g["bytes"] for g in report["persistent"] if g["site"].startswith("_dl_start_user;_dl_init"))
live = sum(g["bytes"] for g in report["leaks"]) + sum(g["bytes"] for g in report["persistent"]) - before_heaptrack
if abs(live - value) > step / 2:
    failures.append(f"live at exit: edgemem {live} B (leaks + persistent), heaptrack {total.group(1)}")

# heaptrack's per-function lines: "196.61K leaked over 64 calls from" then the function name.
theirs = {}
for m in re.finditer(r"^([0-9.]+[KMG]?) leaked over (\d+) calls from\n(\S+)", printed, re.M):
    theirs[m.group(3)] = (m.group(1), int(m.group(2)))
for function in ("preprocess_frame", "describe_tensor", "append_history"):
    ours = [g for g in report["leaks"] if re.search(r"(^|;)" + function + r" \(", g["site"].split(";")[-1])]
    if len(ours) != 1:
        failures.append(f"{function}: edgemem reports {len(ours)} leaks there")
        continue
    if function not in theirs:
        failures.append(f"{function}: heaptrack reports no leak there")
        continue
    text, calls = theirs[function]
    value, step = amount(text)
    # heaptrack counts the calls that left a block: a realloc chain is every call of it, edgemem's one block.
    if abs(ours[0]["bytes"] - value) > step / 2:
        failures.append(f"{function}: edgemem {ours[0]['bytes']} B, heaptrack {text}")
    if function != "append_history" and calls != ours[0]["count"]:
        failures.append(f"{function}: edgemem {ours[0]['count']} blocks, heaptrack {calls} calls")

for f in failures:
    print("FAIL " + f)
print(f"edgemem and heaptrack agree on {total.group(1)} live at exit and the three planted leaks"
      f" (edgemem also saw {before_heaptrack} B made before heaptrack starts)" if not failures else "")
sys.exit(1 if failures else 0)
