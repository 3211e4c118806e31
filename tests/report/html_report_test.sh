#!/usr/bin/env bash
# The HTML report in a real browser (headless chromium): it renders without a
# script error and with no network (a proxy to a closed port, a CSP that
# forbids fetching, no URL in the file outside licence comments), shows the
# demo's 644 B per inference leak at model.c:58, and shows a site name that
# is markup as text without creating the element.
# Usage: html_report_test.sh EDGEMEM ARTIFACT_DIR
set -uo pipefail
edgemem=$1 out=$2
source "$(dirname "$0")/browser_lib.sh"

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
