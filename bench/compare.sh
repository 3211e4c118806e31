#!/usr/bin/env bash
# End-to-end throughput and peak memory of `edgemem analyze` (decode + every
# analysis) on a seed binary trace and a text log of EVENTS events / lines,
# beside (a) seed 000's Python parser and (b) a naive C++ unordered_map
# parser on the same binary trace, plus runs at a tenth of the length to show
# memory does not grow with trace length. Every run is repeated REPEATS
# times (default 3) and the one with the least CPU time (user + system) is
# kept: on a shared machine CPU time is what the program itself spent.
#   bench/compare.sh [EVENTS]        (REPEATS=N in the environment)
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-10000000}
repeats=${REPEATS:-3}
bin=build/default
[ -f "$bin/CMakeCache.txt" ] || cmake --preset default >/dev/null
cmake --build "$bin" --target edgemem edgemem-gentrace naive_seed_parser >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin/edgemem-gentrace" bench-bin "$events" >"$work/big.bin"
"$bin/edgemem-gentrace" bench-bin $((events / 10)) >"$work/small.bin"
"$bin/edgemem-gentrace" bench-log "$events" >"$work/big.log"
"$bin/edgemem-gentrace" bench-log $((events / 10)) >"$work/small.log"

# Prints "cpu_seconds wall_seconds max_rss_kib" of the run with the least CPU time.
measure() {
  local best="" u s e m cpu
  for _ in $(seq "$repeats"); do
    /usr/bin/time -f "%U %S %e %M" -o "$work/time" "$@" >/dev/null
    read -r u s e m <"$work/time"
    cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
    if [ -z "$best" ] || awk -v a="$cpu" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then best="$cpu $e $m"; fi
  done
  echo "$best"
}
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / (s > 0 ? s : 0.01) / 1e6 }'; }
# How many times faster the first run is than the second (by CPU time).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", (a > 0 ? b / a : 0) }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

read -r c_bin w_bin m_bin < <(measure "$bin/edgemem" analyze --format seedbin --json "$work/big.bin")
read -r c_log w_log m_log < <(measure "$bin/edgemem" analyze --format log --json "$work/big.log")
read -r c_cpp w_cpp m_cpp < <(measure "$bin/bench/naive_seed_parser" "$work/big.bin")
read -r c_py w_py m_py < <(measure python3 bench/naive_seed_parser.py "$work/big.bin")
read -r _ _ m_bin_s < <(measure "$bin/edgemem" analyze --format seedbin --json "$work/small.bin")
read -r _ _ m_log_s < <(measure "$bin/edgemem" analyze --format log --json "$work/small.log")

row() {  # name cpu wall rss
  printf '%-42s %7s %7s %11s %9s %10s %12s\n' "$1" "$2" "$3" "$(rate "$events" "$2")" "$(mib "$4")" \
    "$(ratio "$2" "$c_py")" "$(ratio "$2" "$c_cpp")"
}
echo "$events events / lines, best of $repeats runs by CPU time (user + system)"
printf '%-42s %7s %7s %11s %9s %10s %12s\n' run "CPU s" "wall s" "M events/s" "RSS MiB" "vs (a) Py" "vs (b) C++"
row "edgemem analyze, seed binary" "$c_bin" "$w_bin" "$m_bin"
row "edgemem analyze, text log" "$c_log" "$w_log" "$m_log"
row "(b) naive C++ unordered_map, seed binary" "$c_cpp" "$w_cpp" "$m_cpp"
row "(a) seed 000 Python parser, seed binary" "$c_py" "$w_py" "$m_py"
echo
echo "edgemem / (a) Python:   seed binary $(ratio "$c_bin" "$c_py"), text log $(ratio "$c_log" "$c_py") (the baselines read the binary trace)"
echo "edgemem / (b) naive C++: seed binary $(ratio "$c_bin" "$c_cpp"), text log $(ratio "$c_log" "$c_cpp")"
echo "(M events/s from CPU time; edgemem runs every analysis, the baselines keep a map and a peak)"
echo "memory, seed binary: $(mib "$m_bin_s") MiB at $((events / 10)) events, $(mib "$m_bin") MiB at $events events"
echo "memory, text log:    $(mib "$m_log_s") MiB at $((events / 10)) lines, $(mib "$m_log") MiB at $events lines"
