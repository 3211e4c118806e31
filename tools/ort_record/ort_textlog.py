#!/usr/bin/env python3
"""Derives a self-contained text trace of what ONNX Runtime allocates from
the text log `edgemem analyze RECORDING.emt --textlog ALL.log` writes of an
`edgemem record` recording of node (docs/exports.md, docs/formats/textlog.md).

That log names every block's full call stack, symbolised by edgemem where
onnxruntime-node (288 MB) is installed. This keeps the allocations whose
stack passes through ONNX Runtime (libonnxruntime.so.1 or its Node-API
binding onnxruntime_binding.node), the frees of those blocks and the
inference markers, and writes them in the same [MEM] format with each
stack cut to ORT's frames: the binding's frames around the first call into
the library (they name the JavaScript call), a "..." frame, and the
KEEP_INNER innermost ORT frames. ORT's registration code alone has more
distinct full stacks than edgemem's site table holds (65,536).

A frame is ORT's when edgemem named it by one of the two modules
(`libonnxruntime.so.1+0xOFFSET`: that library exports four functions) or by
a function in the module's symbol tables (nm), which is why the two module
files are arguments. Blocks allocated and freed before the first inference
(session creation's temporaries) are left out: the trace holds what a
session keeps and what each run does, not the peak of creating it.

usage: ort_textlog.py ALL.log LIBONNXRUNTIME_SO BINDING_NODE > ort.log
"""
import collections
import os
import re
import subprocess
import sys

KEEP_INNER = 4
LIBRARY, BINDING = "libonnxruntime.so.1", "onnxruntime_binding.node"
FRAME_LOCATION = re.compile(r" \([^()]*:\d+\)$")  # "function (file:line)"
ESCAPED = re.compile(r"%([0-9A-Fa-f]{2})")
OVERFLOW_SITE = "(other sites)"


def unescape(token):
    return ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), token)


def escape(text):
    # docs/formats/textlog.md, "Escaping": one token per field.
    return "".join("%%%02X" % ord(c) if ord(c) <= 32 or c in "%=\x7f" else c for c in text)


def function_names(path):
    names = set()
    for dynamic in (False, True):
        command = ["nm", "-C", "--defined-only"] + (["-D"] if dynamic else []) + [path]
        result = subprocess.run(command, capture_output=True, text=True)
        for line in result.stdout.splitlines():
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1] in "tTwW":
                names.add(parts[2])
    if not names:
        sys.exit("ort_textlog.py: %s: no function symbols (expected %s from onnxruntime-node)"
                 % (path, os.path.basename(path)))
    return names


class Frames:
    def __init__(self, library, binding):
        self.names = {LIBRARY: function_names(library), BINDING: function_names(binding)}
        self.module_of = {}

    def module(self, frame):
        """LIBRARY, BINDING or None (another module's frame)."""
        if frame not in self.module_of:
            function = FRAME_LOCATION.sub("", frame)
            found = None
            for module in (BINDING, LIBRARY):
                if function.startswith(module + "+0x") or function in self.names[module]:
                    found = module
                    break
            self.module_of[frame] = found
        return self.module_of[frame]


def ort_site(stack, frames, cache):
    if stack in cache:
        return cache[stack]
    ort = [(frames.module(f), f) for f in stack.split(";")]
    ort = [(m, f) for m, f in ort if m is not None]
    entry = 0  # the binding's frames around the first call into the library
    while entry < len(ort) and ort[entry][0] == BINDING:
        entry += 1
    entry = max(entry, 1)
    if len(ort) > entry + KEEP_INNER:
        ort = ort[:entry] + [(None, "...")] + ort[-KEEP_INNER:]
    cache[stack] = ";".join(f for _, f in ort)
    return cache[stack]


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: ort_textlog.py ALL.log LIBONNXRUNTIME_SO BINDING_NODE > ort.log")
    path = sys.argv[1]
    frames = Frames(sys.argv[2], sys.argv[3])
    sites = {}
    live = {}           # (pool, address) -> (its ALLOC line, its ORT site), for the blocks kept
    before = True       # blocks made and freed before the first inference are left out
    kept = collections.OrderedDict()
    overflowed = 0
    out = sys.stdout

    def cut(stack):
        """The ORT site of a stack; empty when the stack is not ORT's."""
        nonlocal overflowed
        if stack == OVERFLOW_SITE:
            overflowed += 1
            return ""
        return ort_site(stack, frames, sites)

    def alloc(time, pool, address, size, align, where):
        if not where:
            return
        line = ("[MEM][%s] ALLOC pool=%s addr=%s size=%s%s site=%s\n"
                % (time, pool, address, size, " align=%s" % align if align not in ("", "0") else "", escape(where)))
        live[(pool, int(address, 0))] = (line, where)
        if before:
            kept[(pool, int(address, 0))] = line
        else:
            out.write(line)

    def free(time, pool, address):
        key = (pool, int(address, 0))
        if live.pop(key, None) is None:
            return False
        if before:
            kept.pop(key)
        else:
            out.write("[MEM][%s] FREE pool=%s addr=%s\n" % (time, pool, address))
        return True

    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.startswith("[MEM]["):
                continue
            words = line.split()
            time = words[0][len("[MEM]["):-1]
            verb = words[1] if len(words) > 1 else ""
            fields = dict(w.split("=", 1) for w in words[2:] if "=" in w)
            try:
                if verb == "ALLOC":
                    alloc(time, unescape(fields["pool"]), fields["addr"], fields["size"], fields.get("align", ""),
                          cut(unescape(fields.get("site", ""))))
                elif verb == "FREE":
                    free(time, unescape(fields["pool"]), fields["addr"])
                elif verb == "REALLOC":
                    # The old block goes; the new one is ORT's when the old one
                    # was (it holds ORT's data) or the resizing call is ORT's.
                    pool = unescape(fields["pool"])
                    was = live.get((pool, int(fields["old"], 0)))
                    where = cut(unescape(fields.get("site", "")))
                    if free(time, pool, fields["old"]) and not where:
                        where = was[1]
                    alloc(time, pool, fields["addr"], fields["size"], fields.get("align", ""), where)
                elif verb == "INFER":
                    if before:
                        out.writelines(kept.values())
                        before = False
                    out.write("[MEM][%s] INFER %s\n" % (time, " ".join(words[2:4])))
            except (KeyError, ValueError, IndexError):
                sys.exit("ort_textlog.py: %s:%d: expected a [MEM] %s record as `edgemem analyze --textlog` writes "
                         "it (addr=, pool=, size=); write it again with edgemem analyze REC --textlog %s"
                         % (path, number, verb, path))
    if before:
        out.writelines(kept.values())
    if overflowed:
        sys.exit("ort_textlog.py: %s: %d allocations have the site '%s' (edgemem's site table was full), so "
                 "whether they are ORT's cannot be told; the derived trace would miss some"
                 % (path, overflowed, OVERFLOW_SITE))


if __name__ == "__main__":
    main()
