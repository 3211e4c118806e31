#!/usr/bin/env python3
"""Writes FILE to stdout at a fixed rate, as a device streaming a capture
would, for bench/watch_rate.sh. Writes block when the reader is slower than
the rate (the pipe is full), so falling behind the schedule is the reader's
lag. On exit prints one line to stderr:
  bytes=N seconds=S rate_mb_s=R behind_s=B
behind_s: how far the last byte left after its scheduled time.
Usage: paced_writer.py FILE BYTES_PER_SECOND [CHUNK_BYTES]"""
import fcntl
import os
import sys
import time


def main():
    path, rate = sys.argv[1], float(sys.argv[2])
    chunk = int(sys.argv[3]) if len(sys.argv) > 3 else 256 * 1024
    out = sys.stdout.fileno()
    # A 1 MiB pipe (Linux's default limit for a user) holds 0.1 s at 10 MB/s,
    # so a reader that is briefly not scheduled on a busy machine does not
    # stall the writer at once.
    try:
        fcntl.fcntl(out, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (AttributeError, OSError):
        pass
    sent = 0
    start = time.monotonic()
    with open(path, 'rb') as f:
        while True:
            data = f.read(chunk)
            if not data:
                break
            due = start + sent / rate  # when this chunk may leave
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            view = memoryview(data)
            while view:
                n = os.write(out, view)
                view = view[n:]
            sent += len(data)
    end = time.monotonic()
    behind = max(0.0, end - (start + sent / rate))
    os.close(out)
    print(f"bytes={sent} seconds={end - start:.2f} rate_mb_s={sent / (end - start) / 1e6:.2f} behind_s={behind:.2f}",
          file=sys.stderr)


main()
