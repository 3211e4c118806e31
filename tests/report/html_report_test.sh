#!/usr/bin/env bash
# The HTML report in a real browser (headless chromium): it renders without a
# script error and with no network (a proxy to a closed port, a CSP that
# forbids fetching, no URL in the file outside licence comments), shows the
# demo's 644 B per inference leak at model.c:58, and shows a site name that
# is markup as text without creating the element.
# Usage: html_report_test.sh EDGEMEM ARTIFACT_DIR
set -uo pipefail
edgemem=$1 out=$2
browser=$(command -v chromium || command -v chromium-browser) ||
  { echo "FAIL: chromium is not installed (run scripts/setup.sh)"; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# render NAME: dumps the DOM of $out/NAME.html to $tmp/NAME.dom and screenshots it.
render() {
  local page="file://$out/$1.html"
  local flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile-$1" --proxy-server=127.0.0.1:9
               --enable-logging=stderr --v=0 --virtual-time-budget=5000 --window-size=1280,2400)
  # A script that ran from a site name would block on alert(): the timeout turns that into a failure.
  timeout 60 "$browser" "${flags[@]}" --dump-dom "$page" >"$tmp/$1.dom" 2>"$tmp/$1.log"
  timeout 60 "$browser" "${flags[@]}" --screenshot="$out/$1.png" "$page" >/dev/null 2>&1
  grep -q 'data-rendered="ok"' "$tmp/$1.dom" ||
    { echo "FAIL: $1: the page script did not finish rendering"; grep -i console "$tmp/$1.log" | head -5; fail=1; }
  if grep -E 'Uncaught|CONSOLE.*([Ee]rror|Refused)' "$tmp/$1.log" | head -5 | grep .; then
    echo "FAIL: $1: console errors above"; fail=1
  fi
  # A URL anywhere but in a licence header (/*! ... */ or a // line) would be a
  # request waiting to happen. XML namespace names (d3 creates SVG elements
  # with them) are identifiers a browser never fetches.
  python3 - "$out/$1.html" <<'PY' || fail=1
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
namespaces = ("http://www.w3.org/1999/xhtml", "http://www.w3.org/1999/xlink", "http://www.w3.org/2000/svg",
              "http://www.w3.org/2000/xmlns/", "http://www.w3.org/XML/1998/namespace")
for m in re.finditer(r"https?://", text):
    if text.startswith(namespaces, m.start()):
        continue
    start = text.rfind("/*!", 0, m.start())
    in_block = start >= 0 and "*/" not in text[start:m.start()]
    line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
    if not in_block and not line.lstrip().startswith("//"):
        print(f"FAIL: {sys.argv[1]}: URL outside a licence comment: {text[m.start():m.start() + 60]!r}")
        sys.exit(1)
PY
}

"$edgemem" demo --html "$out/report-demo.html" >"$tmp/demo.out" 2>"$tmp/demo.err" ||
  { echo "FAIL: edgemem demo --html exit $?"; cat "$tmp/demo.err"; exit 1; }
grep -q "HTML report written to $out/report-demo.html" "$tmp/demo.err" ||
  { echo "FAIL: demo does not print where the report went"; cat "$tmp/demo.err"; fail=1; }
render report-demo
for want in "644 B per inference" "model.c:58"; do
  grep -qF "$want" "$tmp/report-demo.dom" || { echo "FAIL: report-demo: '$want' is not on the page"; fail=1; }
done
# The numbers in the site table are grouped like the text report's.
grep -qE '<td class="num">[0-9]{1,3}(,[0-9]{3})+ B' "$tmp/report-demo.dom" ||
  { echo "FAIL: report-demo: no byte count with thousands separators in the site table"; fail=1; }

# Site names that are markup: one that would create elements, one that would
# end the data block. Fields are space-separated, so the markup has none.
cat >"$tmp/xss.log" <<'LOG'
[MEM][1] POOL name=heap kind=heap base=0x20000000 size=4096
[MEM][2] INFER begin 1
[MEM][3] ALLOC size=16 align=4 addr=0x20000010 site=<img/src=x/onerror=alert(1)> pool=heap
[MEM][4] ALLOC size=32 align=4 addr=0x20000040 site=</script><svg/onload=alert(2)> pool=heap
[MEM][5] INFER end 1
[MEM][6] INFER begin 2
[MEM][7] ALLOC size=16 align=4 addr=0x20000100 site=<img/src=x/onerror=alert(1)> pool=heap
[MEM][8] INFER end 2
LOG
"$edgemem" analyze "$tmp/xss.log" --html "$out/report-xss.html" >"$tmp/xss.out" 2>"$tmp/xss.err"
rc=$?
[ "$rc" -le 1 ] || { echo "FAIL: analyze --html on the markup trace exit $rc"; cat "$tmp/xss.err"; exit 1; }
render report-xss
for want in '&lt;img/src=x/onerror=alert(1)&gt;' '&lt;/script&gt;&lt;svg/onload=alert(2)&gt;'; do
  grep -qF "$want" "$tmp/report-xss.dom" || { echo "FAIL: report-xss: site $want is not shown as text"; fail=1; }
done
if grep -qiE '<(img|svg)[ />]' "$tmp/report-xss.dom"; then
  echo "FAIL: report-xss: a site name became an element:"; grep -oiE '<(img|svg)[^>]*>' "$tmp/report-xss.dom" | head -3; fail=1
fi

[ "$fail" = 0 ] && echo "ok: HTML reports render in chromium (screenshots in $out)"
exit "$fail"
