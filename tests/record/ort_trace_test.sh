#!/bin/sh
# What ONNX Runtime keeps, checked on traces derived from real recordings of
# onnxruntime-node 1.30.0 (tools/ort_record/run.sh; tests/data/ort/README.md).
# The traces name their stacks as text, so this needs neither node nor the
# 288 MB npm package: only edgemem, python3, xz and gzip.
#
# usage: ort_trace_test.sh EDGEMEM REPO
set -eu
edgemem=$1
repo=$2
data=$repo/tests/data/ort
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v xz >/dev/null || { echo "ort_trace_test: xz not installed (apt-get install xz-utils)"; exit 77; }

for name in ort_200 ort_200_noarena ort_1_wide ort_1_released ort_3_sessions; do
  xz -dc "$data/$name.log.xz" > "$work/$name.log"
  "$edgemem" analyze --json "$work/$name.log" > "$work/$name.json" || {
    echo "ort_trace_test: edgemem analyze $name.log failed"; exit 1; }
  python3 "$repo/tools/ort_record/live_replay.py" "$work/$name.log" > "$work/$name.replay.json"
done

# The same recordings read straight from the files the xz tool wrote, and
# through Debian's gzip: the answer is the plain log's, to the byte.
"$edgemem" analyze --json "$data/ort_200.log.xz" > "$work/ort_200.xz.json"
gzip -c "$work/ort_1_wide.log" > "$work/ort_1_wide.log.gz"
"$edgemem" analyze --json "$work/ort_1_wide.log.gz" > "$work/ort_1_wide.gz.json"

python3 - "$work" <<'PY'
import json
import sys

work = sys.argv[1]
failures = []


def load(name):
    with open("%s/%s.json" % (work, name)) as f:
        doc = json.load(f)
    with open("%s/%s.replay.json" % (work, name)) as f:
        return doc, json.load(f)


def check(ok, what):
    if not ok:
        failures.append(what)


def made_before_first_inference(doc, entry=""):
    return sum(g["bytes"] for g in doc["persistent"]
               if g["reason"] == "before_first_inference" and entry in g["site"])


runs = {name: load(name) for name in ("ort_200", "ort_200_noarena", "ort_1_wide", "ort_1_released", "ort_3_sessions")}

# edgemem's totals are those of a plain replay of the same trace.
for name, (doc, replay) in runs.items():
    pool = doc["pools"][0]
    check(pool["final_bytes"] == replay["exit"]["bytes"],
          "%s: live at end %d B, replay %d B" % (name, pool["final_bytes"], replay["exit"]["bytes"]))
    check(doc["peak_bytes"] == replay["peak_bytes"],
          "%s: peak %d B, replay %d B" % (name, doc["peak_bytes"], replay["peak_bytes"]))
    if name not in ("ort_1_released", "ort_3_sessions"):
        check(made_before_first_inference(doc) == replay["exit_made_by_session"],
              "%s: persistent %d B, replay %d B" % (name, made_before_first_inference(doc), replay["exit_made_by_session"]))

# Per session, weights: the two models differ only in the hidden width h
# (128 and 1024; 64 inputs, 10 outputs). What InferenceSession creation
# (the binding's LoadModel) keeps differs by the weights: w1 (64 x h floats)
# and b1 (h floats) as they are, and w2 (h x 10) as an h x 16 block (never a
# 4h x 10 byte block: the size of MLAS's packed B, 10 columns rounded up to
# 16). Three string blocks differ by a byte each (+1 net; the path
# /.../wide.onnx is a character longer than /.../mlp.onnx); other start-up
# blocks, outside LoadModel, vary by a few hundred bytes between runs.
dh = 1024 - 128
expected = 4 * (64 * dh + dh * 16 + dh)
load_model = "InferenceSessionWrap::LoadModel"
got = (made_before_first_inference(runs["ort_1_wide"][0], load_model) -
       made_before_first_inference(runs["ort_200"][0], load_model))
check(abs(got - expected) <= 8, "wide - narrow session keeps %d B, the weights' difference is %d B" % (got, expected))

# Per run, the arena: ORT's CPU arena takes its first 1 MiB chunk in the first
# run and keeps it; with enable_cpu_mem_arena false no such block exists.
arena, noarena = runs["ort_200"], runs["ort_200_noarena"]
groups = [g for g in arena[0]["persistent"] if g["bytes"] == 1 << 20 and g["count"] == 1]
check(len(groups) == 1 and groups[0]["reason"] == "not_growing",
      "arena on: expected one 1 MiB block kept from the first run, found %s" % groups)
check(not any(g["bytes"] >= 1 << 20 for g in noarena[0]["persistent"]),
      "arena off: a persistent group of 1 MiB or more")
check(arena[1]["first_run_kept"] - noarena[1]["first_run_kept"] >= 1 << 20,
      "the first run keeps %d B with the arena, %d B without: less than the 1 MiB chunk apart"
      % (arena[1]["first_run_kept"], noarena[1]["first_run_kept"]))

# Per run after the first: nothing ORT's native code keeps grows; the live
# bytes creep (output tensors' wrappers awaiting V8's garbage collector) with
# no group edgemem calls a leak.
for name in ("ort_200", "ort_200_noarena"):
    doc = runs[name][0]
    check(doc["inferences"] == 200, "%s: %d inferences, expected 200" % (name, doc["inferences"]))
    check(doc["leaks"] == [], "%s: leaks reported: %s" % (name, [g["site"][-80:] for g in doc["leaks"]]))

# session.release() gives back everything the session and its runs held;
# the few blocks left are made once a process: three sessions, each created,
# run and released in turn, leave the same bytes as one.
released = runs["ort_1_released"][0]["pools"][0]["final_bytes"]
three = runs["ort_3_sessions"][0]["pools"][0]["final_bytes"]
check(released < 2048, "after release %d B live at exit, expected under 2 KiB" % released)
check(three == released, "three released sessions leave %d B, one leaves %d B" % (three, released))
check(runs["ort_3_sessions"][0]["leaks"] == [], "three sessions: leaks reported")

for name, packed in (("ort_200", "xz"), ("ort_1_wide", "gz")):
    with open("%s/%s.%s.json" % (work, name, packed)) as f:
        doc = json.load(f)
    compression = doc["input"].pop("compression")
    check(compression is not None and compression["format"] == {"xz": "xz", "gz": "gzip"}[packed]
          and compression["problem"] is None, "%s.log.%s: read as %s" % (name, packed, compression))
    plain = runs[name][0]
    plain["input"].pop("compression")
    doc["input"]["path"] = plain["input"]["path"]
    check(doc == plain, "%s.log.%s: the report differs from the plain log's" % (name, packed))

for f in failures:
    print("ort_trace_test: FAIL: " + f)
sys.exit(1 if failures else 0)
PY
echo "ort_trace_test: ok"
