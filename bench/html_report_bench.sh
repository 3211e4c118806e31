#!/usr/bin/env bash
# The analyze HTML report on a long trace: writes EVENTS "[MEM]" lines
# (edgemem-gentrace report-log: arena temporaries, heap temporaries from
# call stacks, 644 B leaked every 10th inference), runs
# `edgemem analyze --html`, and prints the analyze time, the report's size
# and its render time in headless chromium: the page stamps
# performance.now() (navigation start to drawn page) into data-render-ms,
# read back with --dump-dom. The goals (issue #11): under 2 MB, under 2 s.
# A benchmark, not a timed test: it fails only when the page does not render.
# Usage: bench/html_report_bench.sh EDGEMEM EDGEMEM_GENTRACE [EVENTS] [OUT_DIR]
set -euo pipefail
edgemem=$1 gentrace=$2 events=${3:-10000000}
out=${4:-$(mktemp -d)}
mkdir -p "$out"
browser=$(command -v chromium || command -v chromium-browser) ||
  { echo "chromium is not installed (run scripts/setup.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

seconds() { date +%s.%N; }
"$gentrace" report-log "$events" >"$tmp/trace.log"
start=$(seconds)
rc=0
# GNU time, when installed, adds the peak memory of the analysis.
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f %M -o "$tmp/rss")
"${timer[@]}" "$edgemem" analyze "$tmp/trace.log" --html "$out/report.html" >/dev/null 2>"$tmp/analyze.err" || rc=$?
analyze_s=$(echo "$(seconds) - $start" | bc)
# Exit 1 is the leak the trace holds; anything else is a failure.
[ "$rc" -le 1 ] || { echo "FAIL: edgemem analyze --html exit $rc"; cat "$tmp/analyze.err"; exit 1; }
bytes=$(stat -c %s "$out/report.html")

# No --virtual-time-budget here: it would make performance.now() virtual.
render() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" \
    --window-size=1280,2400 --dump-dom "file://$out/report.html" 2>/dev/null
}
runs=()
for i in 1 2 3; do
  dom=$(render)
  grep -q 'data-rendered="ok"' <<<"$dom" || { echo "FAIL: the report did not render (run $i)"; exit 1; }
  runs+=("$(grep -o 'data-render-ms="[0-9]*"' <<<"$dom" | grep -o '[0-9]*')")
done
median=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p)
drawn=$(grep -o 'data-blocks-drawn="[0-9]*"' <<<"$dom" | grep -o '[0-9]*')

printf 'events            %s\n' "$events"
printf 'trace             %s bytes\n' "$(stat -c %s "$tmp/trace.log")"
printf 'analyze --html    %.2f s%s\n' "$analyze_s" "$([ -s "$tmp/rss" ] && echo ", max RSS $(tail -1 "$tmp/rss") KiB")"
printf 'report            %s bytes (%.2f MB; goal < 2 MB: %s)\n' "$bytes" "$(echo "$bytes / 1000000" | bc -l)" \
  "$([ "$bytes" -lt 2000000 ] && echo met || echo NOT met)"
printf 'render (chromium) %s ms median of %s (goal < 2000 ms: %s)\n' "$median" "${runs[*]}" \
  "$([ "$median" -lt 2000 ] && echo met || echo NOT met)"
printf 'layout blocks     %s drawn one by one\n' "$drawn"
