#!/usr/bin/env python3
"""`watch --otlp URL` pushes OTLP/HTTP JSON (ExportMetricsServiceRequest) to a
collector. A tiny HTTP receiver here stands in for the OpenTelemetry
collector's otlp receiver and checks the shape of what arrives; a receiver
that answers 500 must be reported once, without stopping the watch."""
import http.server
import json
import os
import subprocess
import sys
import threading
import time

edgemem, root = sys.argv[1:3]
trace = os.path.join(root, "examples/traces/kws_leak.emt")
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("ok  " if ok else "FAIL") + f" {name}" + (f": {detail}" if detail else ""))
    failures += not ok


def receiver(status):
    posts = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            posts.append((self.path, self.headers["Content-Type"], body))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, posts


server, posts = receiver(200)
url = f"http://127.0.0.1:{server.server_address[1]}"
r = subprocess.run([edgemem, "watch", trace, "--interval", "200ms", "--for", "1s", "--device", "rig-3", "--otlp", url],
                   capture_output=True, text=True, timeout=30)
server.shutdown()
expected = json.loads(subprocess.run([edgemem, "analyze", trace, "--json"], capture_output=True, text=True).stdout)
check("several pushes, one per interval and the final one", len(posts) >= 3, f"{len(posts)} posts")
if posts:
    path, ctype, body = posts[-1]
    check("POST /v1/metrics as application/json", path == "/v1/metrics" and ctype == "application/json", f"{path} {ctype}")
    doc = json.loads(body)
    rm = doc["resourceMetrics"][0]
    attrs = {a["key"]: a["value"]["stringValue"] for a in rm["resource"]["attributes"]}
    check("resource names the service and the device", attrs == {"service.name": "edgemem", "device": "rig-3"}, str(attrs))
    sm = rm["scopeMetrics"][0]
    check("scope edgemem", sm["scope"]["name"] == "edgemem")
    metrics = {m["name"]: m for m in sm["metrics"]}
    inf = metrics["edgemem.inferences"]["sum"]
    check("inferences: monotonic cumulative sum", inf["isMonotonic"] is True and inf["aggregationTemporality"] == 2)
    check("inferences: analyze's count, int64 as a string", inf["dataPoints"][0]["asInt"] == str(expected["inferences"]),
          inf["dataPoints"][0]["asInt"])
    used = metrics["edgemem.pool.used"]
    check("pool.used: a gauge in By per pool", used["unit"] == "By" and
          {dp["attributes"][0]["value"]["stringValue"] for dp in used["gauge"]["dataPoints"]} == {p["name"] for p in expected["pools"]})
    peak = {dp["attributes"][0]["value"]["stringValue"]: dp["asDouble"] for dp in metrics["edgemem.pool.peak"]["gauge"]["dataPoints"]}
    check("pool.peak is analyze's", peak == {p["name"]: p["peak_bytes"] for p in expected["pools"]}, str(peak))
    h = metrics["edgemem.request.size"]["histogram"]["dataPoints"][0]
    check("histogram: one more bucket than bounds", len(h["bucketCounts"]) == len(h["explicitBounds"]) + 1)
    check("histogram: buckets add up to its count", sum(int(c) for c in h["bucketCounts"]) == int(h["count"]) > 0)
    check("every point has a time", all("timeUnixNano" in dp for m in sm["metrics"]
                                          for kind in ("gauge", "sum", "histogram") if kind in m
                                          for dp in m[kind]["dataPoints"]))

# A real SWO capture (sigrok's, tests/data/corpus) with 14 ITM overflow
# packets, 192 corrupt bytes and no device drops: each count in its place.
itm = os.path.join(root, "tests/data/corpus/itm/sigrok_stm32f105_itm_stream1.bin")
server, posts = receiver(200)
url = f"http://127.0.0.1:{server.server_address[1]}"
subprocess.run([edgemem, "watch", itm, "--interval", "200ms", "--for", "1s", "--otlp", url],
               capture_output=True, text=True, timeout=30)
server.shutdown()
expected = json.loads(subprocess.run([edgemem, "analyze", itm, "--json"], capture_output=True, text=True).stdout)["input"]
check("the capture has overflows and corrupt bytes, and no drops",
      (expected["overflow_packets"], expected["corrupt_bytes"], expected["dropped_records"]) == (14, 192, 0), str(expected))
if posts:
    metrics = {m["name"]: m for m in json.loads(posts[-1][2])["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]}
    dropped = {dp["attributes"][0]["value"]["stringValue"]: dp["asInt"] for dp in metrics["edgemem.events.dropped"]["sum"]["dataPoints"]}
    check("events.dropped by reason, as the Prometheus metric's label",
          dropped == {"device_buffer_full": str(expected["dropped_records"]), "itm_overflow": str(expected["overflow_packets"])},
          str(dropped))
    corrupt = metrics["edgemem.corrupt_bytes"]
    check("corrupt_bytes: a sum in By, analyze's count",
          corrupt["unit"] == "By" and corrupt["sum"]["dataPoints"][0]["asInt"] == str(expected["corrupt_bytes"]), str(corrupt))
else:
    check("the ITM capture was pushed", False)

# A device name that is not UTF-8 is U+FFFD in the push; the JSON dump threw
# and aborted the watch without its summary (found in review).
server, posts = receiver(200)
url = f"http://127.0.0.1:{server.server_address[1]}"
r = subprocess.run([os.fsencode(edgemem), b"watch", os.fsencode(trace), b"--interval", b"200ms", b"--for", b"1s",
                    b"--device", b"rig\xff", b"--otlp", url.encode()], capture_output=True, timeout=30)
server.shutdown()
check("a device name that is not UTF-8 ends the watch normally", r.returncode == 0, f"exit {r.returncode} {r.stderr[-300:]!r}")
check("and is pushed as U+FFFD", posts and "rig\ufffd" in {a["value"]["stringValue"] for a in
      json.loads(posts[-1][2])["resourceMetrics"][0]["resource"]["attributes"]}, str(posts[-1][2][:200]) if posts else "")

server, posts = receiver(500)
url = f"http://127.0.0.1:{server.server_address[1]}/otlp/v1/metrics"
r = subprocess.run([edgemem, "watch", trace, "--interval", "200ms", "--for", "1s", "--otlp", url],
                   capture_output=True, text=True, timeout=30)
server.shutdown()
check("a path in the URL is kept", posts and posts[0][0] == "/otlp/v1/metrics")
check("a failing collector is reported once", r.stderr.count("--otlp") == 1 and "HTTP 500" in r.stderr, r.stderr)
check("and does not fail the watch (no alert on kws_leak's 50 inferences)", r.returncode == 0, f"exit {r.returncode}")
# A collector that takes the request and answers a byte a second: each read
# is within httplib's 5 s timeout, so only close()'s own deadline ends the
# push (the watch's exit waited 75 s, its docs say 10 s at most).
class Slow(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}":
            try:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            except OSError:
                return
            time.sleep(1)

    def log_message(self, *args):
        pass


slow = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
threading.Thread(target=slow.serve_forever, daemon=True).start()
started = time.monotonic()
r = subprocess.run([edgemem, "watch", trace, "--interval", "200ms", "--for", "1s", "--otlp",
                    f"http://127.0.0.1:{slow.server_address[1]}"], capture_output=True, text=True, timeout=60)
took = time.monotonic() - started
slow.shutdown()
check("a collector that answers a byte a second holds the exit 10 s at most", took < 16, f"{took:.1f} s")
check("and is named as not answering", "did not answer within 10 s" in r.stderr, r.stderr[-300:])
r = subprocess.run([edgemem, "watch", trace, "--otlp", "localhost:4318"], capture_output=True, text=True, timeout=30)
check("a URL without http:// is refused, exit 2", r.returncode == 2 and "expected http://" in r.stderr, r.stderr)
r = subprocess.run([edgemem, "watch", trace, "--otlp", "http://127.0.0.1:4318#frag"], capture_output=True, text=True,
                   timeout=30)
check("a URL with a fragment is refused, exit 2", r.returncode == 2 and "expected http://" in r.stderr, r.stderr)
sys.exit(1 if failures else 0)
