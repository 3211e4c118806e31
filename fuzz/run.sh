#!/usr/bin/env bash
# Builds the fuzz preset and runs every target for SECONDS (default 20) on
# its seed corpus; any crash fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${1:-20}
cmake --preset fuzz >/dev/null
cmake --build build/fuzz
for target in textlog seedbin itm tpiu emt sniff tflite gnu_map stack; do
  corpus=fuzz/corpus/$target
  [ -d "$corpus" ] || corpus=fuzz/corpus/textlog
  work=$(mktemp -d)
  cp "$corpus"/* "$work"/
  echo "fuzz_$target: ${seconds}s"
  log=$(mktemp)
  if ! (cd "$work" && "$root/build/fuzz/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=8192 \
        -print_final_stats=1 . >"$log" 2>&1); then
    cat "$log"
    echo "fuzz_$target FAILED; reproducer saved in $work"
    exit 1
  fi
  grep -E "stat::number_of_executed_units" "$log"
  rm -rf "$work" "$log"
done
