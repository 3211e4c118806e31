#!/usr/bin/env bash
# Overhead of `edgemem record` beside heaptrack on the example inference
# loop (examples/linux/inference_loop.cc), 1 and 2 threads: wall-clock
# slowdown over the plain run (best of REPEATS), bytes on disk per
# allocation, and how fast `edgemem analyze` reads the recording.
#   bench/record_vs_heaptrack.sh BUILD_DIR [INFERENCES] [REPEATS]
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [INFERENCES] [REPEATS]}
inferences=${2:-20000}
repeats=${3:-3}
edgemem=$build/edgemem
app=$build/examples/linux/inference_loop
for tool in "$edgemem" "$app"; do
  [ -x "$tool" ] || { echo "$0: $tool is not built (cmake --build $build --target edgemem edgemem_preload inference_loop)" >&2; exit 2; }
done
command -v heaptrack >/dev/null || { echo "$0: heaptrack is not installed (Debian package heaptrack)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Best wall-clock seconds of REPEATS runs of "$@".
best() {
  local best_s=
  for _ in $(seq "$repeats"); do
    local t0 t1 s
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    s=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best_s" ] || [ "$(echo "$s < $best_s" | bc -l)" = 1 ]; then best_s=$s; fi
  done
  echo "$best_s"
}

printf '%-8s %10s %10s %10s %12s %12s %14s %14s\n' threads plain_s edgemem_x heaptrack_x edgemem_B/a heaptrack_B/a allocations analyze_M/s
for threads in 1 2; do
  args=(--inferences "$inferences" --threads "$threads" --no-markers)
  plain=$(best "$app" "${args[@]}")
  rec=$(best "$edgemem" record -o "$work/run.emt" -- "$app" "${args[@]}")
  ht=$(best heaptrack -o "$work/ht" "$app" "${args[@]}")
  ht_file=$(find "$work" -maxdepth 1 -name "ht.*" | head -1)
  t0=$(date +%s.%N)
  allocs=$("$edgemem" analyze --json "$work/run.emt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"]["allocs"])')
  t1=$(date +%s.%N)
  rec_bytes=$(stat -c %s "$work/run.emt")
  ht_bytes=$(stat -c %s "$ht_file")
  printf '%-8s %10.3f %10.2f %10.2f %12.1f %12.1f %14d %14.2f\n' "$threads" "$plain" \
    "$(echo "$rec / $plain" | bc -l)" "$(echo "$ht / $plain" | bc -l)" \
    "$(echo "$rec_bytes / $allocs" | bc -l)" "$(echo "$ht_bytes / $allocs" | bc -l)" "$allocs" \
    "$(echo "$allocs / ($t1 - $t0) / 1000000" | bc -l)"
  rm -f "$work"/ht*
done
