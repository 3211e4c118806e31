#!/usr/bin/env python3
"""Renders report pages in one headless Chromium, driven over the DevTools
protocol on a pipe (--remote-debugging-pipe: NUL-terminated JSON on fds 3
and 4). Starting a browser costs seconds of CPU; the page tests render
dozens of pages, so they share this one.

Usage: browser.py CHROMIUM OUT TMP. Reads page names from stdin, one per
line. For NAME it loads OUT/NAME.html in a fresh tab, waits until the page
script has stamped <body data-rendered> (or 30 s), writes the DOM to
TMP/NAME.dom, a screenshot to OUT/NAME.png and what the page reported to
TMP/NAME.log ("Uncaught ..." for an exception or a dialog, "CONSOLE level:
..." for console and browser messages, such as a refused request), then
prints NAME on stdout."""
import base64
import fcntl
import json
import os
import select
import subprocess
import sys
import time

WIDTH, HEIGHT = 1280, 2400
RENDER_TIMEOUT_S = 30


class Browser:
    def __init__(self, chromium, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def fds():  # Chromium reads commands on fd 3 and answers on fd 4
            # Both moved out of the way first: either may itself be fd 3 or 4.
            r, w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_chrome_r, from_chrome_w))
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", "--proxy-server=127.0.0.1:9", f"--window-size={WIDTH},{HEIGHT}",
             "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.next_id = 0
        self.buffer = b""
        self.events = []

    def _read(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_chrome], [], [], left)[0]:
                return None
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def _send(self, method, params, session):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        return self.next_id

    def call(self, method, params=None, session=None, timeout=30):
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply is None:
                raise RuntimeError(f"{method}: no answer in {timeout} s")
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)
                # A dialog blocks the page (and this call) until it is closed;
                # the event is logged as a failure by describe().
                if reply["method"] == "Page.javascriptDialogOpening":
                    self._send("Page.handleJavaScriptDialog", {"accept": True}, reply.get("sessionId"))

    def wait_event(self, method, session, timeout):
        """Waits for `method` from `session`; False after `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            if any(e["method"] == method and e.get("sessionId") == session for e in self.events):
                return True
            message = self._read(deadline)
            if message is None:
                return False
            if "method" in message:
                self.events.append(message)

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def describe(event):
    """One log line for a DevTools event a page test must see, else None."""
    method, p = event["method"], event.get("params", {})
    if method == "Runtime.exceptionThrown":
        d = p["exceptionDetails"]
        return "Uncaught " + d.get("exception", {}).get("description", d.get("text", ""))
    if method == "Runtime.consoleAPICalled":
        text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
        return f"CONSOLE {p['type']}: {text}"
    if method == "Log.entryAdded":
        e = p["entry"]
        return f"CONSOLE {e['level']}: {e.get('text', '')} {e.get('url', '')}".rstrip()
    if method == "Network.requestWillBeSent":
        url = p["request"]["url"]
        if not url.startswith(("file:", "data:", "about:")):
            return f"CONSOLE error: Refused: the page requested {url}"
    if method == "Page.javascriptDialogOpening":
        return f"Uncaught: the page opened a {p['type']} dialog: {p.get('message', '')}"
    return None


def render(browser, out, tmp, name):
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.call(f"{domain}.enable", session=session)
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False}, session=session)
    browser.events.clear()
    browser.call("Page.navigate", {"url": f"file://{out}/{name}.html"}, session=session)
    log = []
    deadline = time.monotonic() + RENDER_TIMEOUT_S
    while True:
        for event in browser.events:
            if event.get("sessionId") != session:
                continue
            line = describe(event)
            if line:
                log.append(line)
        browser.events.clear()
        stamped = browser.call("Runtime.evaluate", {
            "expression": "document.readyState === 'complete' && document.body && 'rendered' in document.body.dataset",
            "returnByValue": True}, session=session)
        if stamped.get("result", {}).get("value") is True or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    # Five seconds of the page's timers run at once (as --virtual-time-budget
    # did), so an error a timer throws after the first render is seen too.
    browser.call("Emulation.setVirtualTimePolicy", {"policy": "advance", "budget": 5000}, session=session)
    if not browser.wait_event("Emulation.virtualTimeBudgetExpired", session, 30):
        log.append("Uncaught: the page's timers did not run out in 30 s")
    browser.call("Emulation.setVirtualTimePolicy", {"policy": "advance"}, session=session)
    # What the renderer left to the next frames (chart layout) is drawn before the DOM is read.
    browser.call("Runtime.evaluate", {
        "expression": "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))",
        "awaitPromise": True}, session=session, timeout=10)
    dom = browser.call("Runtime.evaluate", {"expression": "document.documentElement.outerHTML", "returnByValue": True},
                       session=session)
    with open(f"{tmp}/{name}.dom", "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html>\n" + dom.get("result", {}).get("value", "") + "\n")
    shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=session)
    with open(f"{out}/{name}.png", "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    # Messages that arrived while the DOM and the screenshot were taken.
    log += [line for e in browser.events if e.get("sessionId") == session and (line := describe(e))]
    browser.events.clear()
    with open(f"{tmp}/{name}.log", "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in log))
    browser.call("Target.closeTarget", {"targetId": target})
    browser.events.clear()


def main():
    chromium, out, tmp = sys.argv[1:4]
    browser = Browser(chromium, f"{tmp}/browser-profile")
    try:
        for line in sys.stdin:
            name = line.strip()
            if not name:
                continue
            try:
                render(browser, out, tmp, name)
            except (RuntimeError, OSError) as e:
                with open(f"{tmp}/{name}.log", "a", encoding="utf-8") as f:
                    f.write(f"Uncaught: the browser could not render the page: {e}\n")
                open(f"{tmp}/{name}.dom", "a").close()
            print(name, flush=True)
    finally:
        browser.close()


if __name__ == "__main__":
    main()
