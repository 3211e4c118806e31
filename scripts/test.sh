#!/usr/bin/env bash
# The whole test suite: release build + tests, the same tests under
# ASan+UBSan, and a smoke run of every fuzz target. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)

echo "== release build and tests"
cmake --preset default >/dev/null
cmake --build build/default -j "$jobs"
ctest --preset default -j "$jobs"

echo "== ASan + UBSan build and tests"
cmake --preset asan >/dev/null
cmake --build build/asan -j "$jobs"
ctest --preset asan -j "$jobs"

echo "== fuzz smoke (fixed seed and input count per target)"
fuzz/run.sh smoke
