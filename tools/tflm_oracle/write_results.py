"""Merges arena_probe's per-model lines into tests/data/tflm_arena_measured.json.

"edgemem_known_gap" notes already in the file are kept: they are written by
hand and checked by tests/plan/tflm_oracle_test.cc, not measured.
"""
import json
import os
import sys

results_tsv, commit, compiler, flags, out_path, checkout = sys.argv[1:7]

previous = {}
if os.path.exists(out_path):
    with open(out_path, encoding="utf-8") as f:
        previous = json.load(f).get("models", {})

models = {}
with open(results_tsv, encoding="utf-8") as f:
    for line_number, line in enumerate(f, 1):
        name, static_memory, probe_json = line.rstrip("\n").split("\t")
        try:
            # TFLM's messages name source files by the checkout's path.
            probe = json.loads(probe_json.replace(checkout, ""))
        except json.JSONDecodeError as error:
            sys.exit(f"{results_tsv}:{line_number}: arena_probe output is not JSON ({error})")
        entry = models.setdefault(name, {})
        if static_memory == "yes":
            entry["min_arena_bytes_static_memory"] = probe.get("min_arena_bytes")
            entry["status_static_memory"] = probe["status"].rstrip()
        else:
            entry["min_arena_bytes"] = probe.get("min_arena_bytes")
            entry["arena_used_bytes"] = probe.get("arena_used_bytes")
            entry["status"] = probe["status"].rstrip()

for name, entry in models.items():
    if entry.get("status_static_memory") == entry.get("status"):
        del entry["status_static_memory"]
    gap = previous.get(name, {}).get("edgemem_known_gap")
    if gap is not None:
        entry["edgemem_known_gap"] = gap

document = {
    "tflm_commit": commit,
    "compiler": compiler,
    "flags": flags + " (min_arena_bytes_static_memory: plus -DTF_LITE_STATIC_MEMORY)",
    "target": "x86-64, reference kernels",
    "models": dict(sorted(models.items())),
}
with open(out_path, "w", encoding="utf-8") as f:
    json.dump(document, f, indent=2)
    f.write("\n")
