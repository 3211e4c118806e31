#!/usr/bin/env python3
"""The numbers of an `edgemem analyze --json` document that say what ONNX
Runtime keeps, without its per-site lists (tens of MB for a node process):
the committed form of the analysis in tests/data/ort/.

usage: summarize.py ANALYZE.json > summary.json
"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: summarize.py ANALYZE.json > summary.json")
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    persistent = {}
    for group in doc["persistent"]:
        persistent.setdefault(group["reason"], [0, 0])
        persistent[group["reason"]][0] += group["bytes"]
        persistent[group["reason"]][1] += group["count"]
    watermark = doc["watermark"][0] if doc["watermark"] else {}
    summary = {
        "schema": doc["schema"],
        "events": doc["input"]["events"],
        "inferences": doc["inferences"],
        "counts": doc["counts"],
        "peak_bytes": doc["peak_bytes"],
        "peak_inference": doc["peak"]["inference"],
        "pools": [{k: p[k] for k in ("name", "final_bytes", "live_blocks", "peak_bytes")} for p in doc["pools"]],
        "leaks": doc["leaks"],
        "leak_rate_bytes_per_inference": doc["leak_rate_bytes_per_inference"],
        "persistent_bytes_and_blocks_by_reason": persistent,
        "largest_persistent": sorted(doc["persistent"], key=lambda g: -g["bytes"])[:10],
        "watermark_shape": watermark.get("shape"),
        "watermark_slope_bytes_per_inference": watermark.get("slope_bytes_per_inference"),
    }
    json.dump(summary, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
