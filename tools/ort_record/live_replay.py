#!/usr/bin/env python3
"""Replays a text trace written by ort_textlog.py and prints, as JSON, the
peak and the bytes live at the moments that say what ONNX Runtime keeps: when the first
inference begins (the session as created), when it ends (what the first run
added: the arena), at each later inference end (growth per run) and at exit.
A count independent of `edgemem analyze`, which tests/record/ort_trace_test.sh
checks against it.

usage: live_replay.py ort.log > replay.json
"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: live_replay.py ort.log > replay.json")
    live = {}  # address -> (size, phase)
    phase = "session"
    result = {"inference_ends": [], "peak_bytes": 0}
    current = 0

    def snapshot():
        return {"bytes": sum(size for size, _ in live.values()), "blocks": len(live)}

    with open(sys.argv[1]) as trace:
        for number, line in enumerate(trace, 1):
            words = line.split()
            if len(words) < 3:
                sys.exit("live_replay.py: %s:%d: expected a [MEM] record from ort_textlog.py" % (sys.argv[1], number))
            fields = dict(w.split("=", 1) for w in words[2:] if "=" in w)
            if words[1] == "ALLOC":
                live[fields["addr"]] = (int(fields["size"]), phase)
                current += int(fields["size"])
                result["peak_bytes"] = max(result["peak_bytes"], current)
            elif words[1] == "FREE":
                current -= live.pop(fields["addr"])[0]
            elif words[1:3] == ["INFER", "begin"] and words[3] == "0":
                result["session"] = snapshot()
                phase = "first_run"
            elif words[1:3] == ["INFER", "end"]:
                result["inference_ends"].append(snapshot()["bytes"])
                if words[3] == "0":
                    result["first_run_kept"] = sum(s for s, p in live.values() if p == "first_run")
                phase = "later"
    result["exit"] = snapshot()
    result["exit_made_by_session"] = sum(s for s, p in live.values() if p == "session")
    result["exit_blocks_of_4k_or_more"] = sorted(
        [size, p] for size, p in live.values() if size >= 4096)
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
