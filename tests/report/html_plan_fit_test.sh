#!/usr/bin/env bash
# The plan and fit pages in a real browser (headless chromium): each renders
# with no script error and no network, and shows the numbers the text report
# prints -- the recommended arena, both planners' arena sizes, the peak
# operator; fit's verdict and its totals. A tensor named as markup is shown as
# text, and a model TFLite Micro cannot run gets its refusal and no size.
# Usage: html_plan_fit_test.sh EDGEMEM SOURCE_DIR ARTIFACT_DIR
set -uo pipefail
edgemem=$1 src=$2 out=$3
source "$(dirname "$0")/browser_lib.sh"
corpus=$src/tests/data/corpus
kws=$corpus/tflite/mlperftiny_kws_ref_model.tflite
vww=$corpus/tflite/mlperftiny_vww_96_int8.tflite
flex=$src/tests/data/realworld/tflite/litert_multi_add_flex.tflite
map=$corpus/map/own_cm4_O2.map

# run NAME EXPECTED_EXIT ARGS...: the text report to $tmp/NAME.txt, the page to $out/NAME.html.
run() {
  local name=$1 want=$2
  shift 2
  "$edgemem" "$@" --html "$out/$name.html" >"$tmp/$name.txt" 2>"$tmp/$name.err"
  local rc=$?
  [ "$rc" = "$want" ] || { echo "FAIL: $name: edgemem $* --html exit $rc, expected $want"; cat "$tmp/$name.err"; fail=1; return 1; }
  grep -q "HTML report written to .*$name.html" "$tmp/$name.err" || { echo "FAIL: $name: no 'written to' line"; fail=1; }
}
# on_page NAME TEXT...: each TEXT (as the DOM dump escapes it) is on the page.
on_page() {
  local name=$1
  shift
  for want in "$@"; do
    grep -qF -- "$want" "$tmp/$name.dom" || { echo "FAIL: $name: '$want' is not on the page"; fail=1; }
  done
}
# The numbers the plan text report prints, each looked for on the page.
plan_numbers() {
  local name=$1 text=$tmp/$1.txt
  on_page "$name" "$(head -1 "$text")"
  on_page "$name" "$(sed -nE 's/^  tensors, edgemem \(([^)]*)\) +([0-9,]+ B).*/edgemem (\1): \2/p' "$text")"
  on_page "$name" "$(sed -nE 's/^  tensors, TFLite Micro greedy +([0-9,]+ B).*/TFLite Micro greedy: \1/p' "$text")"
  local peak
  peak=$(sed -nE 's/^peak at op ([0-9]+): ([0-9,]+ B) live in ([0-9]+) tensors$/\1 \2 \3/p' "$text")
  [ -n "$peak" ] || { echo "FAIL: $name: the text report names no peak"; fail=1; return; }
  set -- $peak
  grep -qE "peak at op $1 \([A-Z_0-9]+\): $2 $3 live in $4 tensors" "$tmp/$name.dom" ||
    { echo "FAIL: $name: the peak at op $1 ($2 $3) is not on the page"; fail=1; }
}

# A small keyword-spotting model and a larger conv model (visual wake words).
for model in kws:$kws vww:$vww; do
  name=plan-${model%%:*}
  run "$name" 0 plan "${model#*:}" && render "$name" && plan_numbers "$name"
  grep -q '<rect class="tensor' "$tmp/$name.dom" || { echo "FAIL: $name: no tensor rectangles"; fail=1; }
  grep -q '<div id="arena-bar"><svg' "$tmp/$name.dom" || { echo "FAIL: $name: no arena bar"; fail=1; }
done
# The greedy plan and edgemem's differ for the conv model: both sizes shown.
grep -q "more)" "$tmp/plan-vww.txt" ||
  { echo "FAIL: the vww model no longer shows greedy worse than edgemem; pick another model"; fail=1; }

# --declared short: exit 1, the SHORT line on the page too.
run plan-short 1 plan --declared 5000 "$kws" && render plan-short && on_page plan-short "$(sed -n 2p "$tmp/plan-short.txt")"

# A Flex model: the refusal, and no recommended size anywhere on the page.
if run plan-flex 1 plan "$flex" && render plan-flex; then
  on_page plan-flex '<div class="verdict danger"><div>TFLite Micro cannot run this model: FlexAddV2'
  # The DOM dump holds the page's template and script too, so look at what was drawn: the
  # parts table is left only in the template, and no bar is drawn.
  if [ "$(grep -o '<table id="arena-parts"' "$tmp/plan-flex.dom" | wc -l)" != 1 ] ||
     grep -q '<div id="arena-bar"><svg' "$tmp/plan-flex.dom"; then
    echo "FAIL: plan-flex: a model TFLite Micro cannot run got its arena broken down"; fail=1
  fi
fi

# A tensor named as markup. The model copy renames one activation tensor by
# an equal-length byte patch of its flatbuffer string (28 bytes after its
# u32 length), so no offset in the file moves.
python3 - "$kws" "$tmp/xss.tflite" <<'PY' || { echo "FAIL: could not patch the model"; exit 1; }
import struct, sys
data = open(sys.argv[1], "rb").read()
old, new = b"functional_1/flatten/Reshape", b"<img src=x onerror=alert(1)>"
assert len(old) == len(new) and data.count(struct.pack("<I", len(old)) + old + b"\0") == 1
open(sys.argv[2], "wb").write(data.replace(struct.pack("<I", len(old)) + old, struct.pack("<I", len(new)) + new))
PY
if run plan-xss 0 plan "$tmp/xss.tflite" && render plan-xss; then
  grep -qF '<img src=x onerror=alert(1)>' "$tmp/plan-xss.txt" || { echo "FAIL: plan-xss: the patched name is not in the model"; fail=1; }
  on_page plan-xss '<td class="name">&lt;img src=x onerror=alert(1)&gt;</td>'
  if grep -qiE '<img[ />]' "$tmp/plan-xss.dom"; then
    echo "FAIL: plan-xss: a tensor name became an element:"; grep -oiE '<img[^>]*>' "$tmp/plan-xss.dom" | head -3; fail=1
  fi
fi

# fit: a model that fits beside the firmware, one that does not, and one TFLite Micro cannot run.
fit_numbers() {
  local name=$1 text=$tmp/$1.txt
  on_page "$name" "$(head -1 "$text")"
  sed -nE 's/^  total +([0-9,]+ B) of ([0-9,]+ B) \(([0-9.]+ %)\)  (fits|SHORT by [0-9,]+ B)$/\1 of \2 (\3)\t\4/p' "$text" |
    while IFS=$'\t' read -r total verdict; do
      grep -qF "$total" "$tmp/$name.dom" && grep -qF "$verdict" "$tmp/$name.dom" ||
        { echo "FAIL: $name: total '$total' $verdict is not on the page"; exit 1; }
    done || fail=1
  [ "$(grep -c '^  total ' "$text")" = 2 ] || { echo "FAIL: $name: the text report has no flash and RAM totals"; fail=1; }
}
run fit-fits 0 fit "$corpus/tflite/tflm_keyword_scrambled.tflite" --map "$map" --mcu nRF52840 && render fit-fits && fit_numbers fit-fits
on_page fit-fits "FITS on nRF52840"
run fit-short 1 fit "$corpus/tflite/tflm_person_detect.tflite" --map "$map" --mcu STM32F103C8 &&
  render fit-short && fit_numbers fit-short
on_page fit-short "DOES NOT FIT on STM32F103C8"
grep -qE '>over by [0-9,]+ B<' "$tmp/fit-short.dom" || { echo "FAIL: fit-short: no overrun drawn"; fail=1; }
run fit-flex 1 fit "$flex" --map "$map" --mcu nRF52840 && render fit-flex &&
  on_page fit-flex "DOES NOT RUN: TFLite Micro cannot run" \
    "No RAM need is judged, since no arena size can be recommended: TFLite Micro cannot run this model: FlexAddV2 ("

# A path that cannot be written: exit 2 with the one-line error.
for cmd in "plan $kws" "fit $kws --map $map --mcu nRF52840"; do
  $edgemem $cmd --html "$tmp/no/such/dir/page.html" >/dev/null 2>"$tmp/bad.err"
  rc=$?
  [ "$rc" = 2 ] || { echo "FAIL: ${cmd%% *} --html into a missing directory: exit $rc, expected 2"; fail=1; }
  [ "$(wc -l <"$tmp/bad.err")" = 1 ] && grep -q "page.html: cannot write: .*(pass --html PATH" "$tmp/bad.err" ||
    { echo "FAIL: ${cmd%% *} --html bad path: not the one-line error:"; cat "$tmp/bad.err"; fail=1; }
done

[ "$fail" = 0 ] && echo "ok: plan and fit pages render in chromium (screenshots in $out)"
exit "$fail"
