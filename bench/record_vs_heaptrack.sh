#!/usr/bin/env bash
# `edgemem record` beside heaptrack and valgrind's memcheck on the example
# inference loop (examples/linux/inference_loop.cc: 32 tensors of 64 B to
# 256 KiB an inference, ~38 allocations with the vector's), 1 and 2
# threads, in one run:
#   slowdown    wall clock over the plain run, best of REPEATS each. memcheck
#               runs INFERENCES/MEMCHECK_DIV inferences (it is 50-100x slower)
#               and its time is scaled back up by MEMCHECK_DIV, start-up included.
#   B/alloc     bytes on disk per allocation (+ its free): edgemem's packed
#               recording, heaptrack's .zst.
#   analysis    `edgemem analyze --json` on the recording: millions of
#               allocations per second of wall clock / of CPU time (best of
#               REPEATS); heaptrack_print on heaptrack's file beside it.
#   bench/record_vs_heaptrack.sh BUILD_DIR [INFERENCES] [REPEATS] [MEMCHECK_DIV]
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [INFERENCES] [REPEATS] [MEMCHECK_DIV]}
inferences=${2:-20000}
repeats=${3:-3}
memcheck_div=${4:-20}
edgemem=$build/edgemem
app=$build/examples/linux/inference_loop
for tool in "$edgemem" "$app"; do
  [ -x "$tool" ] || { echo "$0: $tool is not built (cmake --build $build --target edgemem edgemem_preload inference_loop)" >&2; exit 2; }
done
for tool in heaptrack heaptrack_print valgrind /usr/bin/time bc; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is not installed (Debian packages heaptrack, valgrind, time, bc)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# "wall user+sys" seconds of the run with the best wall clock of REPEATS
# runs of "$@" (children included).
best() {
  local best_wall= best_cpu=
  for _ in $(seq "$repeats"); do
    /usr/bin/time -f '%e %U %S' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" ||
      { echo "$0: failed: $*" >&2; cat "$work/stderr" >&2; exit 1; }
    read -r wall user sys <"$work/time"
    if [ -z "$best_wall" ] || [ "$(echo "$wall < $best_wall" | bc -l)" = 1 ]; then
      best_wall=$wall
      best_cpu=$(echo "$user + $sys" | bc -l)
    fi
  done
  echo "$best_wall $best_cpu"
}
ratio() { echo "scale=2; $1 / $2" | bc -l; }

echo "inference_loop, $inferences inferences (memcheck: $((inferences / memcheck_div)), time x$memcheck_div), best of $repeats; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "slowdowns as wall-clock ratio / CPU-time (user+sys, children included) ratio: on a loaded machine the CPU ratio is the steadier"
printf '%-7s %10s | %11s %11s %11s | %9s %9s | %10s %13s %11s\n' threads plain_s/cpu \
  edgemem_x heaptrack_x memcheck_x edgemem_B heaptrk_B allocations analyze_M/s htprint_M/s
for threads in 1 2; do
  args=(--inferences "$inferences" --threads "$threads" --no-markers)
  read -r plain plain_cpu < <(best "$app" "${args[@]}")
  read -r rec rec_cpu < <(best "$edgemem" record -o "$work/run.emt" -- "$app" "${args[@]}")
  rm -f "$work"/ht.*
  read -r ht ht_cpu < <(best heaptrack -o "$work/ht" "$app" "${args[@]}")
  ht_file=$(find "$work" -maxdepth 1 -name "ht.*" | head -1)
  few=(--inferences "$((inferences / memcheck_div))" --threads "$threads" --no-markers)
  read -r mc mc_cpu < <(best valgrind --tool=memcheck --leak-check=full "$app" "${few[@]}")

  allocs=$("$edgemem" analyze --json "$work/run.emt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"]["allocs"])')
  read -r an_wall an_cpu < <(best "$edgemem" analyze --json "$work/run.emt")
  read -r hp_wall hp_cpu < <(best heaptrack_print "$ht_file")
  mega() { echo "scale=1; $allocs / $1 / 1000000" | bc -l; }
  printf '%-7s %10s | %11s %11s %11s | %9.2f %9.2f | %10d %13s %11s\n' "$threads" "$plain/$plain_cpu" \
    "$(ratio "$rec" "$plain")/$(ratio "$rec_cpu" "$plain_cpu")" "$(ratio "$ht" "$plain")/$(ratio "$ht_cpu" "$plain_cpu")" \
    "$(ratio "$mc * $memcheck_div" "$plain")/$(ratio "$mc_cpu * $memcheck_div" "$plain_cpu")" \
    "$(ratio "$(stat -c %s "$work/run.emt")" "$allocs")" "$(ratio "$(stat -c %s "$ht_file")" "$allocs")" "$allocs" \
    "$(mega "$an_wall")/$(mega "$an_cpu")" "$(mega "$hp_wall")/$(mega "$hp_cpu")"
done
