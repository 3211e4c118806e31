#!/usr/bin/env bash
# Arena per corpus model: TFLite Micro's greedy plan, edgemem's plan and the
# lower bound, their ratios, the recommended kTensorArenaSize (cortex-m; *
# marks an estimate with operators that have no cost model), and the
# planning time (one edgemem run per model).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build build/default --target edgemem >/dev/null
corpus=${1:-tests/data/corpus/tflite}
compgen -G "$corpus/*.tflite" >/dev/null || { echo "plan_table: no .tflite models in $corpus" >&2; exit 2; }
printf '%-42s %9s %9s %9s %9s %9s %12s %8s\n' model tflm edgemem bound tflm/bnd edg/bnd recommended ms
for m in "$corpus"/*.tflite; do
  start=$(date +%s%N)
  json=$(build/default/edgemem plan --json "$m")
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  python3 -c '
import json, sys
j = json.loads(sys.argv[1]); b = max(j["lower_bound_bytes"], 1)
rec = "%d%s" % (j["recommended_arena_bytes"], "" if j["arena_budget"]["complete"] else "*")
print("%-42s %9d %9d %9d %9.3f %9.3f %12s %8s" % (sys.argv[2][:42], j["tflm_greedy_bytes"], j["arena_bytes"],
      j["lower_bound_bytes"], j["tflm_greedy_bytes"] / b, j["arena_bytes"] / b, rec, sys.argv[3]))' "$json" "$(basename "$m")" "$ms"
done
