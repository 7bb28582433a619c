"""The demo page of ``spacy-lisa serve`` in a real browser: headless Chromium, driven
over the DevTools protocol, opens the page from a real server, types a sentence into
the text box and clicks "Label"; the frames must appear (the render view's rows, the
frame table), the page must load nothing from elsewhere and log no error, and the
screenshot must show them. Without Chromium the test skips locally and FAILS in CI
(``CI=true``), as the render browser test does."""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import fastapi  # noqa: F401  (make install; missing, the module fails)
import pytest
from serve_testing import post_json, start_server
from test_render_browser import CHROMIUM_FLAGS, dom_elements, png_info
from websockets.sync import client as sync_client

pytestmark = pytest.mark.slow

SENTENCE = "John sold the car to Mary. She said she would come."


@pytest.fixture(scope="module")
def server(srl_model_dir: Path) -> Iterator[str]:
    proc, url = start_server(srl_model_dir)
    try:
        yield url
    finally:
        assert proc.terminate() == 0, proc.output()


def png_pixels(path: Path) -> List[Tuple[int, int, int]]:
    """The RGB pixels of a small 8-bit RGB/RGBA PNG (as Chromium writes them)."""
    data = path.read_bytes()
    width, height, depth, kind = struct.unpack(">IIBB", data[16:26])
    assert depth == 8 and kind in (2, 6), (depth, kind)
    channels = 3 if kind == 2 else 4
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        if data[pos + 4 : pos + 8] == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    rows: List[bytearray] = []
    prior = bytearray(stride)
    for y in range(height):
        kind_of_filter = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):  # undo the PNG filter of the row
            a = line[i - channels] if i >= channels else 0
            b, c = prior[i], prior[i - channels] if i >= channels else 0
            if kind_of_filter == 1:
                line[i] = (line[i] + a) & 255
            elif kind_of_filter == 2:
                line[i] = (line[i] + b) & 255
            elif kind_of_filter == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind_of_filter == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prior = line
    return [tuple(row[i : i + 3]) for row in rows for i in range(0, stride, channels)]  # type: ignore[misc]


class DevTools:
    """The few DevTools commands the test needs, over one websocket to the browser,
    with one page attached (DevTools' flat mode)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0
        self.events: List[Dict[str, Any]] = []
        self.session: Optional[str] = None

    def send(self, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        self.next_id += 1
        message: Dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session is not None:
            message["sessionId"] = self.session
        self.ws.send(json.dumps(message))
        while True:
            data = json.loads(self.ws.recv(timeout=60))
            if data.get("id") == self.next_id:
                assert "error" not in data, (method, data["error"])
                return data.get("result", {})
            self.events.append(data)

    def wait_event(self, method: str, timeout: float = 60) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    self.events.remove(event)
                    return event
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {method} event"
            self.events.append(json.loads(self.ws.recv(timeout=remaining)))

    def js(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait_js(self, expression: str, timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        while not (value := self.js(expression)):
            assert time.monotonic() < deadline, f"timed out: {expression}"
            time.sleep(0.1)
        return value

    def screenshot(self, path: Path, clip: Optional[Dict[str, float]] = None) -> Path:
        params: Dict[str, Any] = {"format": "png"}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", params)["data"]))
        return path

    def box(self, selector: str) -> Dict[str, float]:
        return self.js(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height};"
            " })()"
        )

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the element."""
        box = self.box(selector)
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )

    def type_into(self, selector: str, text: str) -> None:
        self.js(f"document.querySelector({json.dumps(selector)}).focus()")
        self.js(f"document.querySelector({json.dumps(selector)}).select()")
        self.send("Input.insertText", {"text": text})


@pytest.fixture
def browser(chromium: str, tmp_path: Path) -> Iterator[DevTools]:
    profile = tmp_path / "profile"
    proc = subprocess.Popen(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
         "--window-size=1200,900", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            assert proc.poll() is None and time.monotonic() < deadline, "chromium did not start"
            time.sleep(0.1)
        port, path = port_file.read_text().splitlines()[:2]
        with sync_client.connect(f"ws://127.0.0.1:{port}{path}", max_size=None) as ws:
            tools = DevTools(ws)
            targets = tools.send("Target.getTargets")["targetInfos"]
            page = next(t for t in targets if t["type"] == "page")
            tools.session = tools.send(
                "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}
            )["sessionId"]
            for domain in ("Page", "Runtime", "Network", "Log"):
                tools.send(f"{domain}.enable")
            tools.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            )
            yield tools
    finally:
        proc.kill()
        proc.wait(30)


def test_demo_page_labels_a_sentence(browser: DevTools, server: str, tmp_path: Path) -> None:
    browser.send("Page.navigate", {"url": f"{server}/"})
    browser.wait_event("Page.loadEventFired")
    assert browser.js("document.getElementById('lisa-result').dataset.state") == "empty"
    before = browser.screenshot(tmp_path / "before.png")

    browser.type_into("#lisa-text", SENTENCE)
    browser.click("#lisa-submit")
    assert browser.wait_js("document.getElementById('lisa-result').dataset.state !== 'loading'"
                           " && document.getElementById('lisa-result').dataset.state")  # fmt: skip
    state = browser.js("document.getElementById('lisa-result').dataset.state")
    assert state == "done", browser.js("document.getElementById('lisa-status').textContent")
    after = browser.screenshot(tmp_path / "after.png")
    dom = dom_elements(browser.js("document.documentElement.outerHTML"))

    # what the page shows is what the API returns for the sentence (predict's records)
    records = post_json(f"{server}/v1/annotate", {"text": SENTENCE}).json()["records"]
    frames = [f for r in records for f in r["frames"]]
    assert frames, "the tiny model should find frames in the sentence"
    shown = [(a["data-predicate"], a.get("data-roleset"), a.get("data-lemma"))
             for a in dom.with_class("lisa-frame")]  # fmt: skip
    assert shown == [(f["predicate"]["text"], f["roleset"], f["lemma"]) for f in frames]
    roles = [a["data-role-label"] for a in dom.with_class("lisa-role")]
    assert roles == [role["label"] for f in frames for role in f["roles"]]
    legend = {a["data-role-label"] for a in dom.with_class("lisa-legend-item")}
    assert set(roles) | {"V"} == legend
    n_tokens = sum(len(r["tokens"]) for r in records)
    assert len(dom.with_class("lisa-arc-group")) == n_tokens  # the arcs the model used
    # the frame table: predicate, roleset, lemma and the labelled roles of each frame
    table = browser.js(
        "[...document.querySelectorAll('.demo-frames tbody tr')].map(r => "
        "[...r.cells].map(c => c.textContent))"
    )
    assert [row[:3] for row in table] == [
        [f["predicate"]["text"], f["roleset"] or "-", f["lemma"] or "-"] for f in frames
    ]
    for row, frame in zip(table, frames, strict=True):
        for role in frame["roles"]:
            assert f"{role['label']}: {role['text']}" in row[3]
    status = browser.js("document.getElementById('lisa-status').textContent")
    assert status == f"{len(frames)} frame(s)"
    assert browser.js("location.search").startswith("?text=John")

    # nothing came from anywhere but this server, and nothing went wrong on the page
    urls = [e["params"]["request"]["url"] for e in browser.events
            if e.get("method") == "Network.requestWillBeSent"]  # fmt: skip
    assert any(u.endswith("/v1/render") for u in urls)
    assert all(u.startswith(server) for u in urls), urls
    problems = [e["params"]["entry"] for e in browser.events if e.get("method") == "Log.entryAdded"]
    problems += [
        e["params"] for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
    ]
    assert not [p for p in problems if p.get("level", "error") == "error"], problems

    width, height, distinct = png_info(after)
    assert (width, height) == (1200, 900)
    assert distinct > 32, "the screenshot looks blank"
    assert after.read_bytes() != before.read_bytes()
    # the first role as drawn: its cell is painted in its label's colour
    cell = ".lisa-frame .lisa-role"
    colour = browser.js(f"getComputedStyle(document.querySelector('{cell}')).backgroundColor")
    pixels = png_pixels(browser.screenshot(tmp_path / "role.png", clip=browser.box(cell)))
    most = Counter(pixels).most_common(1)[0][0]
    assert colour == f"rgb({most[0]}, {most[1]}, {most[2]})", (colour, most)
    assert most != (255, 255, 255)


def test_demo_page_shows_the_error(browser: DevTools, server: str) -> None:
    browser.send("Page.navigate", {"url": f"{server}/"})
    browser.wait_event("Page.loadEventFired")
    browser.type_into("#lisa-text", "   ")  # not empty to the browser, blank to the server
    browser.click("#lisa-submit")
    browser.wait_js("document.getElementById('lisa-result').dataset.state === 'error'")
    status = browser.js("document.getElementById('lisa-status').textContent")
    assert status.startswith("[E405]") and "empty" in status
    assert browser.js("document.getElementById('lisa-status').className") == "error"
    assert browser.js("document.querySelectorAll('.lisa-frame').length") == 0
