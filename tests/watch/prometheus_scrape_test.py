#!/usr/bin/env python3
"""A real Prometheus scrapes `edgemem watch` while the trace it follows grows.

A writer appends a [MEM] log of a 644 B/inference leak at 20 inferences a
second, timestamped in microseconds of wall time (--clock-hz 1000000), so the
trace's clock and Prometheus' clock are the same clock. Prometheus (the
installed binary, scrape_interval 1s) scrapes /metrics; after 25 s the test
asks it, in PromQL, when predict_linear says the 2 MiB arena is full, and
compares with edgemem's own forecast (edgemem_exhaustion_forecast_seconds,
read back through the same Prometheus at the same instant).

Tolerance 10 %: both divide the same remaining bytes by the same growth; they
differ by the status interval (edgemem publishes once a second, so the scraped
used bytes lag up to 1 s of growth, ~1 % of the ~130 s left), by the writer's
pacing jitter over predict_linear's 20 s window (it writes what is due every
50 ms, timestamped with the real time), and by edgemem counting the inference's
2 KiB scratch as needed space (0.1 %). A wrong rate (per inference taken as
per second, a lost factor) is off by far more than 10 %.

Exit 77 (skipped) only when the prometheus binary is missing.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

edgemem = sys.argv[1]
prometheus = shutil.which("prometheus")
if not prometheus:
    print("SKIP: no prometheus binary (Debian package 'prometheus', installed by scripts/setup.sh)")
    sys.exit(77)

ARENA = 2 << 20
LEAK = 644
PER_SECOND = 20
TOLERANCE = 0.10


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


tmp = tempfile.mkdtemp(prefix="edgemem-prom-")
trace = os.path.join(tmp, "soak.log")
stop = threading.Event()


def writer():
    start = time.monotonic()
    n = 0
    top = 24576
    with open(trace, "a", buffering=1) as f:
        f.write(f"[MEM][0] ALLOC size=24576 align=16 offset=0 site=model.cc:10 pool=arena\n")
        while not stop.is_set():
            due = int((time.monotonic() - start) * PER_SECOND)
            lines = []
            while n < due:
                n += 1
                t = int(n / PER_SECOND * 1e6)  # when it was due, in µs since the start
                lines.append(f"[MEM][{t}] INFER begin {n} pool=arena")
                lines.append(f"[MEM][{t + 100}] ALLOC size={LEAK} align=4 offset={top} site=lstm.cc:88 pool=arena")
                top += LEAK
                lines.append(f"[MEM][{t + 200}] ALLOC size=2048 align=16 offset={top} site=conv.cc:140 pool=arena")
                lines.append(f"[MEM][{t + 300}] FREE offset={top} pool=arena")
                lines.append(f"[MEM][{t + 400}] INFER end {n} pool=arena")
            if lines:
                f.write("\n".join(lines) + "\n")
            time.sleep(0.05)


procs = []
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("ok  " if ok else "FAIL") + f" {name}" + (f": {detail}" if detail else ""))
    failures += not ok


try:
    threading.Thread(target=writer, daemon=True).start()
    metrics_port, prom_port = free_port(), free_port()
    watch = subprocess.Popen(
        [edgemem, "watch", trace, "--format", "log", "--arena-size", str(ARENA), "--clock-hz", "1000000",
         "--device", "soak-rig-1", "--metrics-listen", f"127.0.0.1:{metrics_port}", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(watch)
    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: edgemem\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{metrics_port}']\n")
    prom = subprocess.Popen(
        [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp}/data",
         f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w"))
    procs.append(prom)

    def query(expr):
        url = f"http://127.0.0.1:{prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=5) as r:
            body = json.load(r)
        result = body["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    time.sleep(25)
    sel = 'pool="arena",device="soak-rig-1",job="edgemem"'
    up = query(f'up{{job="edgemem"}}')
    check("Prometheus scraped edgemem watch", up == 1.0, f"up = {up}")
    # One instant for all of them (the API's `time` parameter), not each its own "now".
    at = time.time()

    def query_at(expr):
        url = f"http://127.0.0.1:{prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": at})
        with urllib.request.urlopen(url, timeout=5) as r:
            result = json.load(r)["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    size = query_at(f"edgemem_pool_size_bytes{{{sel}}}")
    now = query_at(f"predict_linear(edgemem_pool_used_bytes{{{sel}}}[20s], 0)")
    in_1s = query_at(f"predict_linear(edgemem_pool_used_bytes{{{sel}}}[20s], 1)")
    ours = query_at(f"edgemem_exhaustion_forecast_seconds{{{sel}}}")
    check("pool size exported", size == ARENA, f"{size}")
    if None in (size, now, in_1s, ours) or in_1s <= now:
        check("predict_linear sees the arena grow", False, f"size={size} now={now} in_1s={in_1s} ours={ours}")
    else:
        rate = in_1s - now
        theirs = (size - now) / rate
        check("predict_linear growth is 644 B x 20/s", abs(rate - LEAK * PER_SECOND) <= LEAK * PER_SECOND * TOLERANCE,
              f"{rate:.0f} B/s")
        check(f"time to exhaustion agrees within {TOLERANCE:.0%}", abs(theirs - ours) <= TOLERANCE * theirs,
              f"predict_linear {theirs:.1f} s, edgemem {ours:.1f} s")
    leak = query_at(f'edgemem_leak_confirmed{{{sel}}}')
    check("the leak alert shows as a metric", leak == 1.0, f"{leak}")
    watch.send_signal(signal.SIGINT)
    out, err = watch.communicate(timeout=20)
    check("watch exits 1 on SIGINT after a leak alert", watch.returncode == 1, f"exit {watch.returncode}\n{err[-2000:]}")
    check("the alert was printed", "ALERT leak arena" in err, "" if "ALERT leak arena" in err else err[-500:])
    summary = json.loads(out)
    check("the summary covers what was seen", summary["inferences"] >= 400, f"{summary['inferences']} inferences")
finally:
    stop.set()
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
