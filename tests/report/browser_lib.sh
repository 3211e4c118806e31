# Shared by the HTML page tests: sourced with $out (where pages and
# screenshots go) set. Defines $tmp (removed on exit), $fail (0 until a check
# fails) and render NAME, which loads $out/NAME.html in headless chromium
# (one browser for the whole test, browser.py), dumps its DOM to
# $tmp/NAME.dom, keeps a screenshot $out/NAME.png and fails the test on a page
# script that did not finish, a console error, a dialog or a URL the page
# could fetch.
browser=$(command -v chromium || command -v chromium-browser) ||
  { echo "FAIL: chromium is not installed (run scripts/setup.sh)"; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
coproc BROWSER { exec python3 "$(dirname "${BASH_SOURCE[0]}")/browser.py" "$browser" "$out" "$tmp"; }
browser_pid=$BROWSER_PID
# On exit: end the driver's input (it closes the browser) and wait for it.
close_browser() {
  local fd=${BROWSER[1]:-}
  [ -n "$fd" ] && eval "exec $fd>&-"
  wait "$browser_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap close_browser EXIT
fail=0

# render NAME: dumps the DOM of $out/NAME.html to $tmp/NAME.dom and screenshots it.
render() {
  local rendered
  echo "$1" >&"${BROWSER[1]}"
  read -r -t 150 rendered <&"${BROWSER[0]}" && [ "$rendered" = "$1" ] ||
    { echo "FAIL: $1: the browser driver stopped"; fail=1; return 1; }
  grep -q 'data-rendered="ok"' "$tmp/$1.dom" ||
    { echo "FAIL: $1: the page script did not finish rendering"; head -5 "$tmp/$1.log"; fail=1; }
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

