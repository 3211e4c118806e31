#!/usr/bin/env bash
# Does `edgemem watch` keep up with a capture streaming at RATE MB/s?
# A paced writer (bench/paced_writer.py) feeds a text log and a seed binary
# trace through a pipe into `edgemem watch -` for about SECONDS each. The
# writer blocks whenever watch reads slower than the rate, so how far the
# writer ended behind its schedule is watch's lag; the events watch counted
# are checked against `edgemem analyze` on the same bytes; CPU is watch's
# own (user + system over its wall time).
#   bench/watch_rate.sh [SECONDS] [RATE_MB_PER_S]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
rate_mb=${2:-10}
build=build/default
cmake --build "$build" --target edgemem edgemem-gentrace >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bytes=$((seconds * rate_mb * 1000000))
rate=$((rate_mb * 1000000))

# bench-log lines average under 60 B and seed records under 8 B: generate
# enough, then cut to the byte budget (the cut record is truncated, as a
# capture stopped mid-write is).
"$build/edgemem-gentrace" bench-log $((bytes / 40)) >"$work/trace.log"
"$build/edgemem-gentrace" bench-bin $((bytes / 6)) >"$work/trace.bin"
truncate -s "$bytes" "$work/trace.log" "$work/trace.bin"

events_of() { grep -o '"events": *[0-9]*' "$1" | head -1 | grep -o '[0-9]*$'; }

printf '%-8s %8s %9s %10s %9s %9s %6s %12s %12s %s\n' format MB "writer s" "writer MB/s" "behind s" "watch s" "CPU %" "events sent" "events seen" verdict
for format in log seedbin; do
  file=$work/trace.${format/seedbin/bin}
  "$build/edgemem" analyze --format "$format" --json "$file" >"$work/analyze.json"
  sent=$(events_of "$work/analyze.json")
  # Exit 1 is a finding (an alert on the trace), not a failure to keep up.
  status=0
  python3 bench/paced_writer.py "$file" "$rate" 2>"$work/writer" |
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$build/edgemem" watch - --format "$format" --json \
      >"$work/watch.json" 2>"$work/watch.err" || status=$?
  if [ "$status" -gt 1 ]; then
    echo "$0: edgemem watch failed (exit $status):" >&2
    tail -3 "$work/watch.err" >&2
    exit 2
  fi
  read -r wall user sys < <(tail -1 "$work/time")
  writer_s=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$work/writer")
  writer_rate=$(sed -n 's/.*rate_mb_s=\([0-9.]*\).*/\1/p' "$work/writer")
  behind=$(sed -n 's/.*behind_s=\([0-9.]*\).*/\1/p' "$work/writer")
  seen=$(events_of "$work/watch.json")
  cpu=$(awk -v u="$user" -v s="$sys" -v w="$wall" 'BEGIN { printf "%.0f", (w > 0 ? 100 * (u + s) / w : 0) }')
  # Kept up: the writer never waited on watch for more than a quarter of a
  # second in total, and watch counted every event that was sent.
  verdict=$(awk -v b="$behind" -v a="$sent" -v c="$seen" 'BEGIN { print ((b < 0.25 && a == c) ? "kept up" : "FELL BEHIND") }')
  printf '%-8s %8d %9s %10s %9s %9s %6s %12s %12s %s\n' "$format" $((bytes / 1000000)) "$writer_s" "$writer_rate" \
    "$behind" "$wall" "$cpu" "$sent" "$seen" "$verdict"
done
