#!/usr/bin/env python3
"""Metrics from the command line, checked by Prometheus' own promtool
(text 0.0.4; OpenMetrics is parsed by a real Prometheus in prometheus_scrape_test.py):
`analyze --metrics-file` for a batch job, `watch --metrics-file` rewritten
each interval, and `watch --metrics-listen` answering Prometheus text 0.0.4
or OpenMetrics 1.0 by the Accept header. The numbers must be analyze's."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

edgemem, root = sys.argv[1:3]
promtool = shutil.which("promtool")
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("ok  " if ok else "FAIL") + f" {name}" + (f": {detail}" if detail else ""))
    failures += not ok


def promtool_ok(text, name):
    if not promtool:
        print(f"note: no promtool (Debian package 'prometheus'); {name} not linted")
        return
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    check(f"promtool check metrics: {name}", r.returncode == 0, (r.stdout + r.stderr).strip())


def samples(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        key, value = line.rsplit(" ", 1)
        out[key] = float(value)
    return out


tmp = tempfile.mkdtemp(prefix="edgemem-metrics-")
try:
    trace = os.path.join(root, "examples/traces/kws_leak.emt")
    prom = os.path.join(tmp, "batch.prom")
    r = subprocess.run([edgemem, "analyze", trace, "--json", "--metrics-file", prom], capture_output=True, text=True)
    doc = json.loads(r.stdout)
    text = open(prom).read()
    promtool_ok(text, "analyze --metrics-file")
    s = samples(text)
    check("inferences_total is analyze's", s.get("edgemem_inferences_total") == doc["inferences"],
          f"{s.get('edgemem_inferences_total')} vs {doc['inferences']}")
    for p in doc["pools"]:
        key = f'edgemem_pool_peak_bytes{{pool="{p["name"]}"}}'
        check(f"peak of {p['name']} is analyze's", s.get(key) == p["peak_bytes"], f"{s.get(key)} vs {p['peak_bytes']}")
    check("leak rate is analyze's", s.get("edgemem_leak_rate_bytes_per_inference") == doc["leak_rate_bytes_per_inference"])
    count = s.get("edgemem_request_size_bytes_count")
    inf = s.get('edgemem_request_size_bytes_bucket{le="+Inf"}')
    check("histogram +Inf bucket equals its count", count is not None and count == inf and count > 0, f"{inf} / {count}")
    check("no temporary file left beside it", os.listdir(tmp) == ["batch.prom"], str(os.listdir(tmp)))

    # watch: a file rewritten each interval, and /metrics on a free port.
    live = os.path.join(tmp, "live.prom")
    w = subprocess.Popen([edgemem, "watch", trace, "--interval", "200ms", "--device", 'bench "7"', "--metrics-file", live,
                          "--metrics-listen", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = None
    deadline = time.time() + 10
    while time.time() < deadline and url is None:
        line = w.stderr.readline()
        m = re.search(r"serving metrics on (\S+)", line)
        if m:
            url = m.group(1)
    check("watch says where it serves metrics", url is not None)
    time.sleep(1.5)
    text = open(live).read()
    promtool_ok(text, "watch --metrics-file")
    check("device label escaped on every sample", all('device="bench \\"7\\""' in l for l in text.splitlines() if l and l[0] != "#"))
    if url:
        with urllib.request.urlopen(url, timeout=5) as resp:
            plain = resp.read().decode()
            ctype = resp.headers["Content-Type"]
        check("no Accept: Prometheus text 0.0.4", ctype.startswith("text/plain; version=0.0.4"), ctype)
        promtool_ok(plain, "/metrics as text 0.0.4")
        req = urllib.request.Request(url, headers={
            "Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"})
        with urllib.request.urlopen(req, timeout=5) as resp:
            om = resp.read().decode()
            ctype = resp.headers["Content-Type"]
        check("Accept openmetrics: OpenMetrics 1.0", ctype.startswith("application/openmetrics-text; version=1.0.0"), ctype)
        check("OpenMetrics ends with # EOF", om.endswith("# EOF\n"))
        check("OpenMetrics names counters without _total and gives units",
              "# TYPE edgemem_inferences counter" in om and "# UNIT edgemem_pool_used_bytes bytes" in om)
        # promtool check metrics reads only the 0.0.4 text format; the OpenMetrics
        # answer is parsed by a real Prometheus in prometheus_scrape_test.py.
        check("both formats carry the same samples", samples(om) == samples(plain))
        try:
            urllib.request.urlopen(urllib.request.Request(url, data=b"x", method="POST"), timeout=5)
            check("POST /metrics is refused", False, "answered 2xx")
        except urllib.error.HTTPError as e:
            check("POST /metrics is 405, allowing GET", e.code == 405 and "GET" in e.headers.get("Allow", ""),
                  f"{e.code} {e.headers.get('Allow')}")
    w.terminate()
    w.communicate(timeout=10)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
