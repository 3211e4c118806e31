#!/usr/bin/env bash
# `edgemem map` on large generated GNU ld maps (tens of MB) against the
# cheapest possible look at the same file: grep counting matching lines,
# run twice (once for addresses, once for objects). Prints time, peak RSS
# and the ratio. Usage: bench/map_bench.sh [OBJECTS...]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build build/default --target edgemem edgemem-gentrace >/dev/null
bin=build/default
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
measure() {  # prints "seconds max_rss_kib"
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null
  cat "$work/time"
}
printf '%-10s %9s  %-22s %-22s %-22s %s\n' objects "MB" "edgemem map (s, KiB)" "map --json (s, KiB)" "grep x2 (s)" "map / grep"
for objects in "${@:-20000 50000}"; do
  "$bin/edgemem-gentrace" bench-map "$objects" >"$work/big.map"
  cat "$work/big.map" >/dev/null  # warm the page cache for every contender alike
  mb=$(awk -v b="$(stat -c %s "$work/big.map")" 'BEGIN { printf "%.1f", b / 1e6 }')
  read -r t_map m_map < <(measure "$bin/edgemem" map "$work/big.map")
  read -r t_json m_json < <(measure "$bin/edgemem" map --json "$work/big.map")
  start=$(date +%s.%N)
  grep -c '0x' "$work/big.map" >/dev/null
  grep -c '\.o' "$work/big.map" >/dev/null
  t_grep=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
  ratio=$(awk -v a="$t_map" -v b="$t_grep" 'BEGIN { printf "%.1fx slower", (b > 0 ? a / b : 0) }')
  printf '%-10s %9s  %-22s %-22s %-22s %s\n' "$objects" "$mb" "$t_map, $m_map" "$t_json, $m_json" "$t_grep" "$ratio"
done
