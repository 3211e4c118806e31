#!/usr/bin/env bash
# Rebuilds examples/traces/demo.log, the trace `edgemem demo` analyses.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build build/default --target edgemem-gentrace >/dev/null
build/default/edgemem-gentrace demo >examples/traces/demo.log
