#!/usr/bin/env python3
"""Baseline (a) for bench/compare.sh: seed 000's own Python parser, read byte
by byte into a dict address -> size, extended only to skip the marker records
the benchmark trace contains."""
import sys


def parse(path):
    live = {}
    events = 0
    with open(path, 'rb') as f:
        while True:
            header = f.read(1)
            if not header:
                break
            if header == b'\xA1':
                size = int.from_bytes(f.read(2), 'big')
                live[int.from_bytes(f.read(4), 'big')] = size
            elif header == b'\xA2':
                size = int.from_bytes(f.read(4), 'big')
                live[int.from_bytes(f.read(4), 'big')] = size
            elif header == b'\xF1':
                live.pop(int.from_bytes(f.read(4), 'big'), None)
            elif header in (b'\xB1', b'\xB2'):
                f.read(4)
            else:
                continue
            events += 1
    print(f"{events} events, {len(live)} live")


parse(sys.argv[1])
