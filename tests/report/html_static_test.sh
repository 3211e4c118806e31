#!/usr/bin/env bash
# The map, stack and diff pages in a real browser (headless chromium): each
# renders without a script error or a URL to fetch, shows the numbers the
# text report prints (region use, the main stack's worst case, a diff's
# changes), and shows names that are markup as text without creating an
# element. Maps are real ones from tests/data: GNU ld (an X-CUBE-AI build and
# a 1.1 MB Zephyr map with thousands of symbols), armlink and IAR; stacks from
# the corpus' .su/.ci files; diffs of two maps and of two example traces.
# Usage: html_static_test.sh EDGEMEM SOURCE_DIR ARTIFACT_DIR
set -uo pipefail
edgemem=$1 src=$2 out=$3
source "$(dirname "$0")/browser_lib.sh"
corpus=$src/tests/data/corpus
realworld=$src/tests/data/realworld

# page NAME COMMAND...: runs an edgemem command with --html $out/NAME.html,
# keeps its text in $tmp/NAME.txt and renders the page.
page() {
  local name=$1
  shift
  "$edgemem" "$@" --html "$out/$name.html" >"$tmp/$name.txt" 2>"$tmp/$name.err"
  local rc=$?
  if [ "$rc" -gt 1 ] || [ ! -s "$out/$name.html" ]; then
    echo "FAIL: $name: edgemem $* --html exit $rc"; cat "$tmp/$name.err"; fail=1; return 1
  fi
  render "$name"
  # The page's text as a reader sees it (entities decoded), for the checks below.
  python3 -c 'import html, re, sys; print(html.unescape(re.sub(r"<[^>]*>", "\n", open(sys.argv[1]).read())))' \
    "$tmp/$name.dom" >"$tmp/$name.shown"
}

# shows NAME TEXT...: each TEXT is on NAME's page.
shows() {
  local name=$1
  shift
  for want in "$@"; do
    grep -qF -- "$want" "$tmp/$name.shown" || { echo "FAIL: $name: '$want' is not on the page"; fail=1; }
  done
}

# Region use exactly as the text report prints it ("3,292 B of 262,144 B").
regions_shown() {
  local name=$1 regions
  regions=$(awk '/^region /{on=1; next} on && NF==0 {exit} on' "$tmp/$name.txt" |
            sed -nE 's/^[^ ]+ +([0-9,]+ B) of +([0-9,]+ B).*/\1 of \2/p')
  [ -n "$regions" ] || { echo "FAIL: $name: no region lines in the text report"; fail=1; return; }
  while IFS= read -r line; do shows "$name" "$line"; done <<<"$regions"
}

# markup_is_text NAME MARKUP: MARKUP shows as text and no <img> or <svg onload> was created.
markup_is_text() {
  shows "$1" "$2"
  # Outside the data block (JSON, which holds the name as data) and escaped text.
  python3 - "$tmp/$1.dom" <<'PY' || fail=1
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
dom = re.sub(r'<script type="application/json" id="edgemem-data">.*?</script>', "", dom, flags=re.S)
dom = re.sub(r'="[^"]*"', '=""', dom)  # a title attribute holds a name verbatim, as data
made = re.findall(r"<img\b[^>]*>|<[^>]*\b(?:onerror|onload)=[^>]*>", dom, flags=re.I)
if made:
    print(f"FAIL: {sys.argv[1]}: a name became markup: {made[:3]}")
    sys.exit(1)
PY
}

count_rects() { grep -o '<rect' "$tmp/$1.dom" | wc -l; }

# Maps: GNU ld with a model, a large Zephyr map, armlink with weights, IAR.
page map-gnu-ai map "$corpus/map/kennykang_nucleo_l432kc_ai_sine_release.map" && {
  regions_shown map-gnu-ai
  shows map-gnu-ai "no region overflowed" "Tensor arena" "Largest symbols"
}
page map-zephyr map "$realworld/gnu_map/dorsel89_phyphoxsatellite_nrf52840_zephyr.map" && {
  regions_shown map-zephyr
  rects=$(count_rects map-zephyr)
  [ "$rects" -gt 20 ] && [ "$rects" -lt 3000 ] ||
    { echo "FAIL: map-zephyr: $rects treemap rectangles (want a real treemap under 3,000)"; fail=1; }
  shows map-zephyr "smaller)"
}
page map-armlink map "$corpus/map_armlink/stm32deployai_cmsisnn_mnist_f407_ac5_5.06u6.map" && {
  regions_shown map-armlink
  shows map-armlink "Model weights" "ip1_wt" "Stack_Mem" "Heap_Mem"
}
page map-iar map "$corpus/map_iar/iarvscdebug_gettingstarted_stm32f429_ewarm9.20.map" && regions_shown map-iar
# The largest symbols, as the text lists them: size, role and name on the page.
while IFS='|' read -r size role name; do
  shows map-armlink "$size" "$role" "$name"
done < <(python3 - "$tmp/map-armlink.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("largest symbols\n", 1)[1].splitlines()
for line in lines:
    m = re.match(r"^\s*([\d,]+ B)  (tensor arena|model weights|stack|heap|code|data)\s+(.*)  \(.*\)$", line)
    print("|".join(m.groups()) if m else "|unparsed|" + line)
PY
)

# An overflowed region is red and says by how much: shrink RAM in a copy.
sed -E 's/^(RAM +0x0*20000000 +)0x0*00010000/\10x00001000/' "$corpus/map/own_cm4_O2.map" >"$tmp/overflow.map"
grep -q 0x00001000 "$tmp/overflow.map" || { echo "FAIL: could not shrink RAM in the overflow copy"; fail=1; }
page map-overflow map "$tmp/overflow.map" && {
  regions_shown map-overflow
  by=$(sed -nE 's/^OVERFLOWED: RAM by ([0-9,]+ B)$/\1/p' "$tmp/map-overflow.txt")
  [ -n "$by" ] || { echo "FAIL: map-overflow: the text report names no overflow of RAM"; fail=1; }
  shows map-overflow "RAM by $by" "OVERFLOWED by $by"
}

# Stack: the firmware's own .su/.ci (a dynamic frame, recursion, an indirect
# call) and a real project's .su without a call graph.
mkdir -p "$tmp/su-O2" "$tmp/su-O0"
cp "$corpus"/su/own_O2_* "$tmp/su-O2/"
cp "$corpus"/su/own_O0_* "$tmp/su-O0/"
for opt in O2 O0; do
  page "stack-$opt" stack "$tmp/su-$opt" && {
    worst=$(sed -nE 's/^main stack worst case: ([0-9,]+ B).*/\1/p' "$tmp/stack-$opt.txt")
    [ -n "$worst" ] || { echo "FAIL: stack-$opt: no worst case in the text report"; fail=1; }
    shows "stack-$opt" "main stack worst case" "$worst" "Reset_Handler" "+ unbounded"
  }
done
shows stack-O2 "dynamic frame: normalize_dynamic" "136 B"
shows stack-O0 "recursion: checksum_recursive" "indirect call in run_post"
page stack-su-only stack "$corpus/su/kennykang_nucleo_l432kc_release" && shows stack-su-only "no call graph" "344 B"

# Diff of two builds of the same firmware.
page diff-maps diff "$corpus/map/own_cm4_O2.map" "$corpus/map/own_cm4_O0.map" && {
  headline=$(head -1 "$tmp/diff-maps.txt" | sed 's/^changed: //')
  shows diff-maps "$headline"
  # Each region row's numbers as the text prints them.
  awk '/^regions /{on=1; next} on && NF==0 {exit} on' "$tmp/diff-maps.txt" |
    awk '{print $1" "$2; print $4" "$5; print $6" "$7}' | sort -u >"$tmp/diff-regions"
  [ -s "$tmp/diff-regions" ] || { echo "FAIL: diff-maps: no region rows in the text"; fail=1; }
  while IFS= read -r n; do shows diff-maps "$n"; done <"$tmp/diff-regions"
}

# Diff of two runs: the analyze numbers side by side.
page diff-traces diff "$src/examples/traces/kws_fragment.log" "$src/examples/traces/kws_leak.emt" && {
  shows diff-traces "$(head -1 "$tmp/diff-traces.txt" | sed 's/^changed: //')" "model.c:58" "+32,200 B"
}

# Names that are markup. armlink keeps spaces in a symbol name, so the exact
# `<img src=x onerror=alert(1)>` can stand for a symbol there; GNU ld splits
# names on blanks, so its copy uses `/` instead.
xss='<img src=x onerror=alert(1)>'
sed "s/scratch_buffer/$xss/g" "$corpus/map_armlink/stm32deployai_cmsisnn_mnist_f407_ac5_5.06u6.map" >"$tmp/xss-armlink.map"
page map-xss-armlink map "$tmp/xss-armlink.map" && markup_is_text map-xss-armlink "$xss"
sed 's#tensor_arena#<img/src=x/onerror=alert(2)>#g; s#main\.o#</script><svg/onload=alert(3)>.o#g' \
  "$corpus/map/own_cm4_O2.map" >"$tmp/xss-gnu.map"
page map-xss-gnu map "$tmp/xss-gnu.map" && markup_is_text map-xss-gnu '<img/src=x/onerror=alert(2)>'
page diff-xss diff "$corpus/map_armlink/stm32deployai_cmsisnn_mnist_f407_ac5_5.06u6.map" "$tmp/xss-armlink.map" &&
  markup_is_text diff-xss "$xss"
sed 's/\bmain\b/<img src=x onerror=alert(4)>/' "$tmp/su-O2/own_O2_own_app.su" >"$tmp/su-O2/x" && mv "$tmp/su-O2/x" "$tmp/su-O2/own_O2_own_app.su"
page stack-xss stack "$tmp/su-O2/own_O2_own_app.su" && markup_is_text stack-xss '<img src=x onerror=alert(4)>'

[ "$fail" = 0 ] && echo "ok: map, stack and diff pages render in chromium (screenshots in $out)"
exit "$fail"
