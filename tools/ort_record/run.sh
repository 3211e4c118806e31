#!/bin/sh
# Records onnxruntime-node running a small MLP under `edgemem record`, analyses
# the recordings and writes the results into tests/data/ort/ (README there).
# Idempotent: the npm package, the marker addon and the model are built once
# under the cache directory and reused.
#
# usage: tools/ort_record/run.sh
#   EDGEMEM_CACHE   cache directory (default ~/.cache/edgemem)
#   EDGEMEM_BUILD   edgemem build directory (default build/default; built if needed)
#   ORT_RUNS        the runs to (re)record, by name (default: all of them)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${EDGEMEM_CACHE:-$HOME/.cache/edgemem}
build=${EDGEMEM_BUILD:-$repo/build/default}
out=$repo/tests/data/ort
ort_version=1.30.0
npm_dir=$cache/onnxruntime-node-$ort_version
work=$cache/ort-record
inputs=64   # the MLPs' input width; hidden layer 128 (mlp) or 1024 (wide), 10 outputs

mkdir -p "$npm_dir" "$work" "$out"

if [ ! -f "$npm_dir/node_modules/onnxruntime-node/package.json" ]; then
  # --ignore-scripts: the package's install script downloads the CUDA
  # execution provider from NuGet; the CPU library is in the package itself.
  (cd "$npm_dir" && npm install --no-audit --no-fund --ignore-scripts "onnxruntime-node@$ort_version")
fi

if [ ! -x "$build/edgemem" ] || [ ! -f "$build/lib/edgemem/libedgemem_preload.so" ]; then
  (cd "$repo" && cmake --preset default >/dev/null && cmake --build "$build" --target edgemem edgemem_preload)
fi

addon=$work/edgemem_marker.node
if [ ! -f "$addon" ] || [ "$here/edgemem_marker_addon.cc" -nt "$addon" ]; then
  g++ -std=c++17 -O2 -Wall -Wextra -Werror -shared -fPIC -fno-omit-frame-pointer \
    -DNODE_GYP_MODULE_NAME=edgemem_marker -I/usr/include/node -I"$repo/examples/linux" \
    "$here/edgemem_marker_addon.cc" -o "$addon"
fi

# name hidden: the two MLPs differ only in their hidden layer, so what a
# session keeps for its weights shows as the difference of the two.
model() {
  if [ ! -f "$work/$1.onnx" ] || [ "$here/make_model.py" -nt "$work/$1.onnx" ]; then
    python3 "$here/make_model.py" "$inputs" "$2" 10 > "$work/$1.txtpb" 2> "$work/$1.initializer_bytes"
    protoc --proto_path="$here" --encode=onnx.ModelProto onnx_model.proto < "$work/$1.txtpb" > "$work/$1.onnx"
  fi
}
model mlp 128
model wide 1024

export NODE_PATH="$npm_dir/node_modules:$work"
case $(uname -m) in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
ort_bin=$npm_dir/node_modules/onnxruntime-node/bin/napi-v6/linux/$arch

all_runs="ort_200 ort_200_noarena ort_1_wide ort_1_released ort_3_sessions"
runs_wanted=${ORT_RUNS:-$all_runs}
wanted() { case " $runs_wanted " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# name model runs arena sessions (0: never released; K: K sessions in turn, each released)
record() {
  name=$1 model=$work/$2.onnx runs=$3 arena=$4 sessions=$5
  wanted "$name" || return 0
  extra=""
  [ "$sessions" -gt 0 ] && extra="--release --sessions $sessions"
  rm -f "$work/$name.emt" "$work/$name.emt".*
  # shellcheck disable=SC2086
  "$build/edgemem" record -o "$work/$name.emt" -- \
    node "$here/run_model.js" "$model" "$runs" --inputs "$inputs" --arena "$arena" $extra > "$work/$name.stdout"
  grep -q '"recorded":true' "$work/$name.stdout" || {
    echo "run.sh: $name: the markers did not reach the recorder ($(cat "$work/$name.stdout"))" >&2; exit 1; }
  # The whole recording as a text log, full stacks symbolised (minutes: node's
  # start-up alone has >65,536 distinct stacks); then ORT's part of it.
  "$build/edgemem" analyze "$work/$name.emt" --textlog "$work/$name.all.log" > "$work/$name.raw.txt"
  python3 "$here/ort_textlog.py" "$work/$name.all.log" "$ort_bin/libonnxruntime.so.1" \
    "$ort_bin/onnxruntime_binding.node" > "$work/$name.log"
  case $name in ort_1_wide | ort_200) cp "$work/$name.raw.txt" "$out/$name.raw.txt" ;; esac
  "$build/edgemem" analyze "$work/$name.log" > "$out/$name.txt"
  "$build/edgemem" analyze --json "$work/$name.log" > "$work/$name.json"
  python3 "$here/summarize.py" "$work/$name.json" > "$out/$name.summary.json"
  python3 "$here/live_replay.py" "$work/$name.log" > "$out/$name.replay.json"
  xz -9 -T1 -c "$work/$name.log" > "$out/$name.log.xz"
}

record ort_200 mlp 200 on 0
record ort_200_noarena mlp 200 off 0
record ort_1_wide wide 1 on 0
record ort_1_released mlp 1 on 1
record ort_3_sessions mlp 1 on 3

# heaptrack on the same command, for its own count of what is live at exit.
if wanted ort_200 && command -v heaptrack >/dev/null; then
  rm -f "$work"/heaptrack.ort_200.*
  heaptrack -o "$work/heaptrack.ort_200" \
    node "$here/run_model.js" "$work/mlp.onnx" 200 --inputs "$inputs" --arena on > /dev/null
  heaptrack_print -f "$work"/heaptrack.ort_200.* > "$work/heaptrack.ort_200.txt"
  grep -E '^(total runtime|calls to allocation functions|temporary memory allocations|peak heap memory consumption|peak RSS|total memory leaked)' \
    "$work/heaptrack.ort_200.txt" > "$out/heaptrack.ort_200.txt"
fi

node --version > "$out/versions.txt"
echo "onnxruntime-node $ort_version" >> "$out/versions.txt"
for m in mlp wide; do echo "$m.onnx $(cat "$work/$m.initializer_bytes")" >> "$out/versions.txt"; done
echo "run.sh: results in $out"
