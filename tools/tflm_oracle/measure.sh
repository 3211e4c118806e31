#!/bin/sh
# Measures, with TFLite Micro itself, the smallest tensor arena each model in
# tests/data/corpus/tflite needs on x86-64, and writes
# tests/data/tflm_arena_measured.json. See README.md beside this file.
#   tools/tflm_oracle/measure.sh /path/to/tflite-micro [/path/to/kissfft-v130]
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
KISSFFT_SRC=${2:-${KISSFFT_DIR:-}}
[ -n "$KISSFFT_SRC" ] && [ -f "$KISSFFT_SRC/kiss_fft.c" ] || {
  echo "$0: the Signal FFT kernels need kissfft's sources (Debian ships only its headers);" \
       "run: git clone -b v130 https://github.com/mborgerding/kissfft and pass its path as the second argument" >&2
  exit 2
}

ORACLE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$ORACLE/../.." && pwd)
WORK=${TFLM_ORACLE_WORK:-${TMPDIR:-/tmp}/tflm_oracle}
mkdir -p "$WORK/gen/tensorflow/lite/schema"

# TFLM's schema_generated.h is pinned to its own flatbuffers release; Debian's
# flatc regenerates it from the same schema for Debian's headers. flatc 2.0
# rejects "(deprecated)" on enum values and union members; dropping that mark
# changes no layout.
sed -E 's/^(\s*\w+( = [0-9]+)?) \(deprecated\),/\1,/' \
  "${TFLM}tensorflow/compiler/mlir/lite/schema/schema.fbs" > "$WORK/schema.fbs"
flatc --cpp --gen-object-api -o "$WORK/gen/tensorflow/lite/schema" "$WORK/schema.fbs"

# kissfft as TFLM builds it: its tag plus TFLM's patch.
rm -rf "$WORK/kissfft" && cp -r "$KISSFFT_SRC" "$WORK/kissfft" && rm -rf "$WORK/kissfft/.git"
patch -s -d "$WORK/kissfft" -p1 < "${TFLM}third_party/kissfft/kissfft.patch"

python3 "$ORACLE/gen_all_ops.py" "${TFLM}tensorflow/lite/micro/micro_mutable_op_resolver.h" \
  > "$WORK/gen/all_ops.inc"

for static in yes no; do
  nice -n 19 make -s -f "$ORACLE/Makefile" -j"${JOBS:-2}" TFLM="$TFLM" KISSFFT="$WORK/kissfft" \
    GEN="$WORK/gen" OUT="$WORK/static_memory_$static" STATIC_MEMORY=$static
done

for model in "$REPO"/tests/data/corpus/tflite/*.tflite; do
  name=$(basename "$model")
  for static in yes no; do
    if ! line=$("$WORK/static_memory_$static/arena_probe" "$model"); then
      line="{\"status\": \"unsupported: arena_probe exited with an error\"}"
    fi
    printf '%s\t%s\t%s\n' "$name" "$static" "$line"
  done
done > "$WORK/results.tsv"

commit=$(git -C "$TFLM" rev-parse HEAD 2>/dev/null || echo "${TFLM_COMMIT:-unknown}")
compiler=$(${CXX:-g++} --version | head -n 1)
flags=$(make -s -f "$ORACLE/Makefile" TFLM="$TFLM" STATIC_MEMORY=no print-flags)
python3 "$ORACLE/write_results.py" "$WORK/results.tsv" "$commit" "$compiler" "$flags" \
  "$REPO/tests/data/tflm_arena_measured.json" "$TFLM"
