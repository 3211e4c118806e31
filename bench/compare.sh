#!/usr/bin/env bash
# End-to-end throughput and peak memory of `edgemem analyze` (decode + every
# analysis) against (a) seed 000's Python parser and (b) a naive C++
# unordered_map parser, on a 10-million-event seed binary trace and a
# 10-million-line text log, plus a 1M-event run to show memory does not grow
# with trace length. Usage: bench/compare.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-10000000}
cmake --preset default >/dev/null
cmake --build build/default --target edgemem edgemem-gentrace naive_seed_parser >/dev/null
bin=build/default
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin/edgemem-gentrace" bench-bin "$events" >"$work/big.bin"
"$bin/edgemem-gentrace" bench-bin $((events / 10)) >"$work/small.bin"
"$bin/edgemem-gentrace" bench-log "$events" >"$work/big.log"
"$bin/edgemem-gentrace" bench-log $((events / 10)) >"$work/small.log"

measure() {  # prints "seconds max_rss_kib"
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null
  cat "$work/time"
}
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / (s > 0 ? s : 0.001) / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", (b > 0 ? a / b : 0) }'; }

read -r t_bin m_bin < <(measure "$bin/edgemem" analyze --format seedbin --json "$work/big.bin")
read -r t_bin_s m_bin_s < <(measure "$bin/edgemem" analyze --format seedbin --json "$work/small.bin")
read -r t_log m_log < <(measure "$bin/edgemem" analyze --format log --json "$work/big.log")
read -r t_log_s m_log_s < <(measure "$bin/edgemem" analyze --format log --json "$work/small.log")
read -r t_cpp m_cpp < <(measure "$bin/bench/naive_seed_parser" "$work/big.bin")
read -r t_py m_py < <(measure python3 bench/naive_seed_parser.py "$work/big.bin")

r_bin=$(rate "$events" "$t_bin"); r_log=$(rate "$events" "$t_log")
r_cpp=$(rate "$events" "$t_cpp"); r_py=$(rate "$events" "$t_py")
printf '%-44s %10s %12s %14s\n' "run ($events events / lines)" "seconds" "M events/s" "max RSS (KiB)"
printf '%-44s %10s %12s %14s\n' "edgemem analyze, seed binary" "$t_bin" "$r_bin" "$m_bin"
printf '%-44s %10s %12s %14s\n' "edgemem analyze, text log" "$t_log" "$r_log" "$m_log"
printf '%-44s %10s %12s %14s\n' "(b) naive C++ unordered_map, seed binary" "$t_cpp" "$r_cpp" "$m_cpp"
printf '%-44s %10s %12s %14s\n' "(a) seed 000 Python parser, seed binary" "$t_py" "$r_py" "$m_py"
echo
echo "edgemem vs (a) Python: $(ratio "$t_py" "$t_bin")   edgemem vs (b) naive C++: $(ratio "$t_cpp" "$t_bin")"
echo "memory, seed binary: $m_bin_s KiB at $((events / 10)) events, $m_bin KiB at $events events"
echo "memory, text log:    $m_log_s KiB at $((events / 10)) lines, $m_log KiB at $events lines"
