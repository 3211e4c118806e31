#!/usr/bin/env bash
# One command from a fresh checkout to `edgemem demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset default >/dev/null
cmake --build build/default --target edgemem >/dev/null
exec build/default/edgemem demo "$@"
