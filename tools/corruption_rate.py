#!/usr/bin/env python3
"""What one damaged byte does to `edgemem analyze`: for each capture, N
random positions get one random bit pattern XORed in, and the report is
compared with the undamaged one's.

    tools/corruption_rate.py EDGEMEM N CAPTURE...

Counted per capture: reports with an overflow finding and no damage seen
(no corrupt bytes, no impossible event), reports whose leaks differ with no
damage seen, reports that flag damage, and inputs refused (exit 2). The
numbers in docs/formats/emt.md come from:

    CHECK=0 examples/firmware/capture.sh leak /tmp/plain.emt
    tools/corruption_rate.py build/default/edgemem 400 /tmp/plain.emt examples/traces/kws_leak.emt
"""
import json
import random
import subprocess
import sys


def report(edgemem, data):
    p = subprocess.run([edgemem, "analyze", "--json", "-"], input=bytes(data), capture_output=True)
    return None if p.returncode == 2 else json.loads(p.stdout)


def leaks(j):
    return [(leak["site"], leak["bytes"]) for leak in j["leaks"]]


def main():
    edgemem, n, captures = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    for name in captures:
        base = bytearray(open(name, "rb").read())
        truth = report(edgemem, base)
        rnd = random.Random(11)
        overflow = leak_changed = flagged = refused = 0
        for at in rnd.sample(range(len(base)), min(n, len(base))):
            damaged = bytearray(base)
            damaged[at] ^= rnd.randrange(1, 256)
            j = report(edgemem, damaged)
            if j is None:
                refused += 1
                continue
            seen = j["input"]["corrupt_bytes"] or j["input"]["impossible_events"] or j["input"]["truncated_bytes"]
            flagged += bool(seen)
            if not seen and j["checks"]["overflow"]["status"] == "found":
                overflow += 1
            if not seen and leaks(j) != leaks(truth):
                leak_changed += 1
        print(f"{name}: {min(n, len(base))} damaged copies: {overflow} report an overflow with no damage seen, "
              f"{leak_changed} other leaks with no damage seen, {flagged} flag damage, {refused} refused")


if __name__ == "__main__":
    main()
