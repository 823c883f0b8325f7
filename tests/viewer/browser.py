"""A headless Chromium driven over the DevTools protocol on a pipe (stdlib only).

`--remote-debugging-pipe` makes Chromium read protocol commands from fd 3 and write replies
and events to fd 4, each message a JSON object ended by a NUL byte. That needs no port, no
websocket client and no browser download (playwright and pyppeteer fetch their own builds,
which this machine cannot).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One Chromium process with one page; `evaluate` runs JS in it and returns the value."""

    def __init__(self, executable: str, width: int = 1200, height: int = 800) -> None:
        self.profile = tempfile.mkdtemp(prefix="spade-viewer-chromium-")
        # Our pipe ends go to fds ≥ 10 first, so the dup2 onto 3 and 4 cannot clobber them.
        to_child, from_parent = os.pipe()
        from_child, to_parent = os.pipe()
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, to_parent)]
        for fd in (to_child, to_parent):
            os.close(fd)

        def wire() -> None:  # runs in the child before exec
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            pass_fds=(3, 4), preexec_fn=wire,
        )  # fmt: skip
        for fd in ends:
            os.close(fd)
        self._out = os.fdopen(from_parent, "wb", buffering=0)
        self._in = os.fdopen(from_child, "rb", buffering=0)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = self._attach()
        for domain in ("Page", "Runtime"):
            self.send(f"{domain}.enable")
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.send("Emulation.setDeviceMetricsOverride", metrics)

    def _attach(self) -> str:
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        reply = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True},
                          session=False)  # fmt: skip
        return str(reply["sessionId"])

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise BrowserError("no reply from Chromium in time")
            chunk = self._in.read(1 << 16)
            if not chunk:
                raise BrowserError(f"Chromium exited: {self._stderr_tail()}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: bool = True,
        timeout: float = 30.0,
    ) -> dict[str, Any]:  # fmt: skip
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        self._out.write(json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self._on_event(reply)

    def _on_event(self, event: dict[str, Any]) -> None:
        if "method" not in event:
            return
        self.events.append(event)
        if event["method"] == "Page.javascriptDialogOpening":  # never leave a dialog hanging
            self._next_id += 1
            self._out.write(json.dumps({
                "id": self._next_id, "sessionId": self.session,
                "method": "Page.handleJavaScriptDialog", "params": {"accept": True},
            }).encode() + b"\0")  # fmt: skip

    def wait_for_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(index)
            self._on_event(self._read_message(deadline))

    def open(self, path: Path, fragment: str = "") -> float:
        """Load a file and wait for its load event; returns the seconds it took."""
        # From a blank page first: a URL differing only in its fragment would otherwise be a
        # same-document navigation, which fires no load event.
        self.send("Page.navigate", {"url": "about:blank"})
        self.wait_for_event("Page.loadEventFired")
        self.events.clear()
        started = time.monotonic()
        url = path.resolve().as_uri() + (f"#{fragment}" if fragment else "")
        self.send("Page.navigate", {"url": url})
        self.wait_for_event("Page.loadEventFired", timeout=60)
        return time.monotonic() - started

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True})  # fmt: skip
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression[:80]}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the first element matching `selector`; fails
        when it is not visible on the page."""
        box = self.evaluate(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el || !el.checkVisibility()) return null;
            el.scrollIntoView({{block: "center"}});
            const r = el.getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2];
        }})()""")
        if box is None:
            raise BrowserError(f"no visible element {selector!r} to click")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})  # fmt: skip

    def type_into(self, selector: str, text: str) -> None:
        """Focus an input, clear it and type `text` as keyboard input."""
        self.evaluate(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            el.focus(); el.select();
        }})()""")
        self.send("Input.insertText", {"text": text})

    def text(self, selector: str) -> str:
        """The rendered text of the elements matching `selector` (hidden ones give '')."""
        value = self.evaluate(
            f"[...document.querySelectorAll({json.dumps(selector)})]"
            ".map(e => e.checkVisibility() ? e.innerText : '').join('\\n')"
        )
        return str(value)

    def screenshot(self, out: Path) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        out.write_bytes(base64.b64decode(data))

    def dialogs(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["method"] == "Page.javascriptDialogOpening"]

    def _stderr_tail(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return "still running"
        return self.process.stderr.read().decode(errors="replace")[-500:]

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):  # it may exit before it replies
            self.send("Browser.close", session=False, timeout=5)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for handle in (self._in, self._out):
            handle.close()
        if self.process.stderr is not None:
            self.process.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)
