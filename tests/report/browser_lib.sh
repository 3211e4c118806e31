# Shared by the HTML page tests: sourced with $out (where pages and
# screenshots go) set. Defines $tmp (removed on exit), $fail (0 until a check
# fails) and render NAME, which loads $out/NAME.html in headless chromium,
# dumps its DOM to $tmp/NAME.dom, keeps a screenshot $out/NAME.png and fails
# the test on a page script that did not finish, a console error or a URL the
# page could fetch.
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

