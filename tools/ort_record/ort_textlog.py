#!/usr/bin/env python3
"""Derives a self-contained text trace of what ONNX Runtime allocates from an
`edgemem record` recording (emt version 2, docs/formats/emt.md) of node.

A recording names code addresses; `edgemem analyze` symbolises them from the
binaries it names, so it is only readable where onnxruntime-node (288 MB) is
installed. This keeps the allocations whose call stack passes through ONNX
Runtime (libonnxruntime.so.1 or its Node-API binding), the frees of those
blocks and the inference markers, and writes them in the seed text-log format
(docs/formats) with each stack as a site string (KEEP_INNER below): ORT's frames only, from the
outermost one to the allocating one, each named by the symbol table entry
that contains it (the binding keeps its .symtab; libonnxruntime.so.1 exports
four functions, so its frames are `libonnxruntime.so.1+0xOFFSET`, as
`edgemem analyze` names them). The text-log format splits on spaces, so
spaces inside a frame name are written as '~'. Blocks allocated and freed
before the first inference (session creation's temporaries) are left out:
the trace holds what a session keeps and what each run does, not the peak
of creating it.

usage: ort_textlog.py RECORDING.emt > ort.log
"""
import bisect
import collections
import heapq
import os
import struct
import subprocess
import sys

ORT_MODULES = ("libonnxruntime.so.1", "onnxruntime_binding.node")
HEADER_PAGE = 4096
CHUNK = 65536
CHUNK_HEADER = 24
POOLS = {0: "malloc", 1: "mmap"}
# tag: (fields before any text, has text); the first field is dseq except for NODE.
# ORT's registration code alone has more distinct stacks than edgemem's site
# table holds (65,536): a site keeps the entry into ORT (the binding's frames,
# which name the JavaScript call, or ORT's own first frame) and the innermost
# frames, joined by a "..." frame.
KEEP_INNER = 4
SHAPES = {0x30: (6, False), 0x31: (3, False), 0x32: (5, False), 0x33: (3, False),
          0x34: (4, True), 0x35: (2, False), 0x36: (2, True), 0x37: (3, False),
          0x38: (2, False), 0x39: (2, False)}


def fail(path, offset, what):
    sys.stderr.write("ort_textlog.py: %s: offset %d: %s; record it again with "
                     "tools/ort_record/run.sh\n" % (path, offset, what))
    sys.exit(2)


def varint(b, at):
    value = shift = 0
    while True:
        if at >= len(b):
            raise IndexError(at)
        byte = b[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def chunk_records(path, data):
    """Yields (seq, slot, tag, fields, text) per record, in each chunk's order."""
    for base in range(HEADER_PAGE, len(data) - CHUNK_HEADER + 1, CHUNK):
        magic, slot, _, used, seq = struct.unpack_from("<4sIIIQ", data, base)
        if magic != b"CHK2":
            if any(data[base:base + CHUNK_HEADER]):
                fail(path, base, "expected a chunk header 'CHK2' or a zero chunk")
            continue
        at, end, address = base + CHUNK_HEADER, base + CHUNK_HEADER + used, 0
        while at < end:
            tag = data[at]
            if tag not in SHAPES:
                fail(path, at, "expected an emt v2 record tag 0x30..0x39, found 0x%02x" % tag)
            count, has_text = SHAPES[tag]
            fields, at = [], at + 1
            for _ in range(count):
                value, at = varint(data, at)
                fields.append(value)
            text = ""
            if has_text:
                length, at = varint(data, at)
                text = data[at:at + length].decode("utf-8", "replace")
                at += length
            if tag in (0x30, 0x31):  # address: zigzag delta within the chunk
                z = fields[2]
                address = (address + ((z >> 1) ^ -(z & 1))) & 0xFFFFFFFFFFFFFFFF
                fields[2] = address
            if tag == 0x33:
                yield None, slot, tag, fields, text
                continue
            seq += fields[0]
            yield seq, slot, tag, fields, text


class Symbols:
    """Function names of one ORT module from its symbol tables (nm), by file address."""

    def __init__(self, path):
        self.name = os.path.basename(path)
        entries = []
        for dynamic in (False, True):
            command = ["nm", "-C", "-S", "--defined-only"] + (["-D"] if dynamic else []) + [path]
            result = subprocess.run(command, capture_output=True, text=True)
            for line in result.stdout.splitlines():
                parts = line.split(" ", 3)
                if len(parts) == 4 and parts[2] in "tTwW":
                    entries.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
        self.entries = sorted(set(entries))
        self.starts = [e[0] for e in self.entries]

    def frame(self, pc):
        # Aliases share a start; a few entries back covers them all.
        i = bisect.bisect_right(self.starts, pc) - 1
        for start, size, name in reversed(self.entries[max(i - 8, 0):i + 1]):
            if start <= pc < start + size:
                return name.replace(" ", "~")
        return "%s+0x%x" % (self.name, pc)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ort_textlog.py RECORDING.emt > ort.log")
    path = sys.argv[1]
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < HEADER_PAGE or data[:5] != b"\x7eemt!":
        fail(path, 0, "expected an emt recording (SYNC 7E 65 6D 74 21) from `edgemem record`")

    nodes = {}          # (slot, node) -> (parent, return address)
    streams = collections.defaultdict(list)
    try:
        records = list(chunk_records(path, data))
    except IndexError as error:
        fail(path, error.args[0], "expected the rest of a record, found the end of the file")
    for seq, slot, tag, fields, text in records:
        if tag == 0x33:
            nodes[(slot, fields[0])] = (fields[1], fields[2])
        else:
            streams[slot].append((seq, slot, tag, fields, text))

    modules = {}        # start -> (end, bias, path), as the recording maps them
    symbols = {}
    frames = {}
    sites = {}

    def frame(address):
        starts = sorted(modules)
        i = bisect.bisect_right(starts, address) - 1
        if i < 0 or address >= modules[starts[i]][0]:
            return None
        end, bias, module_path = modules[starts[i]]
        if os.path.basename(module_path) not in ORT_MODULES:
            return None
        if module_path not in symbols:
            symbols[module_path] = Symbols(module_path)
        return os.path.basename(module_path), symbols[module_path].frame(address - 1 - bias)

    def site(slot, node):
        key = (slot, node)
        if key in sites:
            return sites[key]
        outer_last = []
        n = node
        while n and (slot, n) in nodes:
            parent, address = nodes[(slot, n)]
            if address not in frames:
                frames[address] = frame(address)
            outer_last.append(frames[address])
            n = parent
        ort = [f for f in reversed(outer_last) if f is not None]
        entry = 0  # the binding's frames around the first call into the library
        while entry < len(ort) and ort[entry][0] == "onnxruntime_binding.node":
            entry += 1
        entry = max(entry, 1)
        if len(ort) > entry + KEEP_INNER:
            ort = ort[:entry] + [("", "...")] + ort[-KEEP_INNER:]
        sites[key] = ";".join(name for _, name in ort)
        return sites[key]

    live = {}           # (pool, address) -> its ALLOC line while before the first inference
    before = True       # blocks made and freed before the first inference are left out
    out = sys.stdout
    kept = collections.OrderedDict()
    merged = heapq.merge(*streams.values(), key=lambda r: r[0])
    for seq, slot, tag, fields, text in merged:
        if tag == 0x34:
            modules[fields[2]] = (fields[3], fields[1], text)
            frames.clear()
        elif tag == 0x35:
            modules.pop(fields[1], None)
            frames.clear()
        elif tag == 0x30:
            where = site(slot, fields[5])
            if where:
                align = " align=%d" % fields[4] if fields[4] else ""
                line = ("[MEM][%d] ALLOC pool=%s addr=0x%x size=%d%s site=%s\n"
                        % (seq, POOLS.get(fields[1], "pool%d" % fields[1]), fields[2], fields[3], align, where))
                live[(fields[1], fields[2])] = line
                if before:
                    kept[(fields[1], fields[2])] = line
                else:
                    out.write(line)
        elif tag == 0x31:
            if live.pop((fields[1], fields[2]), None) is not None:
                if before:
                    kept.pop((fields[1], fields[2]))
                else:
                    out.write("[MEM][%d] FREE pool=%s addr=0x%x\n" % (seq, POOLS.get(fields[1], "pool%d" % fields[1]), fields[2]))
        elif tag in (0x38, 0x39):
            if before:
                out.writelines(kept.values())
                before = False
            out.write("[MEM][%d] INFER %s %d\n" % (seq, "begin" if tag == 0x38 else "end", fields[1]))
    if before:
        out.writelines(kept.values())


if __name__ == "__main__":
    main()
