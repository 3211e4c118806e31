#!/usr/bin/env bash
# An installed edgemem stands alone: `cmake --install` into an empty prefix,
# then `edgemem demo` run from elsewhere must find the demo capture beside the
# binary (PREFIX/share/edgemem), also after the prefix is moved, and give
# the leak the capture holds: 644 B per inference at model.c:58.
set -u
cmake=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { echo "FAIL: cmake --install"; cat "$tmp/install.log"; exit 1; }
for f in bin/edgemem share/edgemem/traces/kws_leak.emt share/edgemem/traces/kws_leak.elf \
         share/edgemem/mcus.json share/doc/edgemem/README.md share/doc/edgemem/docs/analyze.md; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: not installed: $f"; fail=1; }
done
demo() {  # demo PREFIX: runs the installed demo from an unrelated directory and checks what it read, found and wrote
  local prefix=$1
  rm -rf "$tmp/cwd" && mkdir "$tmp/cwd"
  (cd "$tmp/cwd" && "$prefix/bin/edgemem" demo) >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" = 0 ] || { echo "FAIL: $prefix/bin/edgemem demo exit $rc"; cat "$tmp/err"; fail=1; return; }
  head -1 "$tmp/out" | grep -qF "$prefix/share/edgemem/traces/kws_leak.emt" ||
    { echo "FAIL: demo did not read the installed trace: $(head -1 "$tmp/out")"; fail=1; }
  grep -q "644 B per inference at model.c:58" "$tmp/out" ||
    { echo "FAIL: demo does not report the 644 B per inference leak at model.c:58"; cat "$tmp/out"; fail=1; }
  grep -q "model.c:58" "$tmp/cwd/edgemem-demo.html" 2>/dev/null ||
    { echo "FAIL: demo did not write its HTML report to ./edgemem-demo.html"; fail=1; }
  echo "ok: demo from $prefix"
}
demo "$tmp/prefix"
mv "$tmp/prefix" "$tmp/moved"
demo "$tmp/moved"
exit $fail
