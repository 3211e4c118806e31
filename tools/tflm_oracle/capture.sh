#!/bin/sh
# Records, with TFLite Micro itself instrumented through edgemem's device
# library (target/), an emt capture of AllocateTensors() and one Invoke() for
# each corpus model TFLM runs, into tests/data/tflm_captures/MODEL.emt.
# `edgemem analyze CAPTURE --model MODEL --target x86-64` compares them with
# edgemem's plan. See README.md beside this file.
#   tools/tflm_oracle/capture.sh /path/to/tflite-micro [/path/to/kissfft-v130]
# Reuses measure.sh's work directory ($TFLM_ORACLE_WORK) when it is there:
# only capture_probe is compiled then.
set -eu

usage() {
  echo "usage: $0 /path/to/tflite-micro [/path/to/kissfft at tag v130]" >&2
  exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
TFLM=$(cd "$1" && pwd)/
[ -f "${TFLM}tensorflow/lite/micro/micro_interpreter.h" ] || {
  echo "$0: $1: not a tflite-micro checkout (no tensorflow/lite/micro/micro_interpreter.h)" >&2
  exit 2
}
ORACLE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$ORACLE/../.." && pwd)
WORK=${TFLM_ORACLE_WORK:-${TMPDIR:-/tmp}/tflm_oracle}
if [ ! -f "$WORK/gen/all_ops.inc" ] || [ ! -d "$WORK/kissfft" ]; then
  echo "$0: $WORK holds no generated schema, op list and kissfft: run tools/tflm_oracle/measure.sh first" \
       "(it prepares them and measures the arena sizes this script captures at)" >&2
  exit 2
fi

# The build without TF_LITE_STATIC_MEMORY: the layout edgemem's x86-64 sizes follow.
nice -n 19 make -s -f "$ORACLE/Makefile" -j"${JOBS:-2}" TFLM="$TFLM" KISSFFT="$WORK/kissfft" \
  GEN="$WORK/gen" OUT="$WORK/static_memory_no" STATIC_MEMORY=no "$WORK/static_memory_no/capture_probe"

OUT="$REPO/tests/data/tflm_captures"
mkdir -p "$OUT"
# Each model at the smallest arena TFLM ran it on (tflm_arena_measured.json),
# so the capture also shows how full that arena gets.
python3 - "$REPO/tests/data/tflm_arena_measured.json" > "$WORK/capture_sizes.tsv" <<'PY'
import json, sys
for name, m in sorted(json.load(open(sys.argv[1]))["models"].items()):
    if m["status"] == "ok":
        print(f"{name}\t{m['min_arena_bytes']}")
PY
while IFS="$(printf '\t')" read -r name bytes; do
  "$WORK/static_memory_no/capture_probe" "$REPO/tests/data/corpus/tflite/$name" "$bytes" \
    "$OUT/${name%.tflite}.emt"
done < "$WORK/capture_sizes.tsv"
commit=$(git -C "$TFLM" rev-parse HEAD 2>/dev/null || echo "${TFLM_COMMIT:-unknown}")
echo "captured $(wc -l < "$WORK/capture_sizes.tsv") models with tflite-micro $commit into $OUT"
