#!/usr/bin/env bash
# Builds the fuzz preset and runs every target on its seed corpus with a
# fixed seed and a fixed number of inputs (about 15-20 s each on 2 cores), so
# the smoke run in CI is repeatable: what passed here passes there. That
# takes two more things: the seeds named to libFuzzer in sorted order (read
# from a directory, their order was the file system's: ext4 hashes names
# with a per-disk seed) and address-space randomisation off where the
# kernel lets us (the targets' coverage moved with it: containers keyed by
# address). Without them a CI machine's run took another path and found
# what this one had not. Longer, randomised campaigns: fuzz/run.sh explore
# SECONDS. Any crash fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=${1:-smoke}
seconds=${2:-60}
cmake --preset fuzz >/dev/null
cmake --build build/fuzz
# target:inputs for the smoke run (rates differ by two orders of magnitude)
for spec in textlog:5000 seedbin:20000 itm:20000 tpiu:20000 emt:10000 emt2:5000 sniff:5000 tflite:200000 linker_map:30000 stack:20000 bpftrace:20000 compressed:3000 ring_dump:20000 budget:20000 elf:2000; do
  target=${spec%%:*}
  runs=${spec##*:}
  corpus=fuzz/corpus/$target
  [ -d "$corpus" ] || corpus=fuzz/corpus/textlog
  work=$(mktemp -d)
  mkdir "$work/corpus"
  log=$(mktemp)
  fixed=()
  if [ "$mode" = explore ]; then
    cp "$corpus"/* "$work/corpus"/
    args=(-max_total_time="$seconds")
    echo "fuzz_$target: ${seconds}s, random seed"
  else
    mkdir "$work/seeds" && cp "$corpus"/* "$work/seeds"/
    (cd "$work" && printf '%s\n' seeds/* | LC_ALL=C sort | paste -sd, >seeds.txt)
    args=(-seed=1 -runs="$runs" -max_total_time=120 -seed_inputs=@seeds.txt)
    setarch -R true 2>/dev/null && fixed=(setarch -R)
    echo "fuzz_$target: $runs inputs, seed 1"
  fi
  max_len=8192
  [ "$target" = elf ] && max_len=16384  # the seed ELF whole, so its symbols and DWARF are reached
  if ! (cd "$work" && "${fixed[@]}" "$root/build/fuzz/fuzz/fuzz_$target" "${args[@]}" -max_len=$max_len -print_final_stats=1 corpus >"$log" 2>&1); then
    cat "$log"
    echo "fuzz_$target FAILED; reproducer saved in $work"
    exit 1
  fi
  grep -E "stat::number_of_executed_units" "$log"
  rm -rf "$work" "$log"
done
