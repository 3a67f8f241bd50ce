"""The HTML report of an analysis: written by the command line beside the other outputs,
self-contained, and working in a real browser: headless Chromium (Debian's ``chromium``)
opens it from a file, its script runs, and a click on the graph, a click on a move or a key
shows the right position.  Chromium is driven through the DevTools protocol over a pipe
(``--remote-debugging-pipe``: no port, no extra package).

Without Chromium the browser tests are skipped, except in CI (``CI`` set), where they fail:
``.ci/run`` installs it."""

from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import re
import select
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from usi_engine import Position
from usi_engine.analysis.cli import main as cli_main
from usi_engine.analysis.html import GRAPH_W

# Black's rook walks to 4d (move 9), where the 4c pawn takes it (move 10): a blunder.
ROOK_HANG = "2g2f 3c3d 2f2e 8c8d 2h2f 8d8e 2f4f 4a3b 4f4d 4c4d 7g7f 3a4b".split()
VIEWPORT = (1280, 900)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    """The rook-hanging game analysed at depth 2 by the command line: the paths of its
    outputs and the JSON, which the page must agree with."""
    folder = tmp_path_factory.mktemp("report")
    game = folder / "game.kif"
    game.write_bytes(Position.from_usi("startpos moves " + " ".join(ROOK_HANG)).kif().encode("cp932"))
    assert cli_main([str(game), "--depth", "2", "--jobs", "1", "--quiet"]) == 0
    html = folder / "game.analysis.html"
    data = json.loads((folder / "game.analysis.json").read_text(encoding="utf-8"))
    return {"folder": folder, "html": html, "json": data}


# --- the file itself ---------------------------------------------------------------------------


class _Elements(HTMLParser):
    """Every start tag with its attributes, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_written_beside_the_other_outputs_with_one_entry_per_move(report):
    for ext in ("png", "kif", "csa", "json", "html"):
        assert (report["folder"] / f"game.analysis.{ext}").stat().st_size > 100, ext
    parser = _Elements()
    parser.feed(report["html"].read_text(encoding="utf-8"))
    entries = [a for _, a in parser.tags if "data-ply" in a]
    assert [int(a["data-ply"]) for a in entries] == list(range(1, len(ROOK_HANG) + 1))
    # each entry carries its move's class, as the JSON has it
    classes = [(set(a["class"].split()) - {"move"}) or {None} for a in entries]
    assert classes == [{m["class"]} for m in report["json"]["moves"]]
    assert "blunder" in classes[8]
    assert sum(t == "template" for t, _ in parser.tags) == len(ROOK_HANG) + 1


def test_nothing_comes_from_the_network(report):
    text = report["html"].read_text(encoding="utf-8")
    parser = _Elements()
    parser.feed(text)
    assert not [a for _, a in parser.tags if "src" in a or "href" in a]
    assert not [t for t, _ in parser.tags if t in ("link", "iframe", "img", "object", "embed")]
    assert "@import" not in text and "url(http" not in text
    # the one address in the file is SVG's namespace name, which is never fetched
    assert set(re.findall(r"https?://[^\s'\"<>)]+", text)) == {"http://www.w3.org/2000/svg"}


# --- in a browser ------------------------------------------------------------------------------


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    message = "headless Chromium is needed for the browser tests: apt-get install chromium"
    if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
        pytest.fail(message)
    pytest.skip(message)


def _above_4(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Chromium:
    """Headless Chromium driven through the DevTools protocol on a pipe: messages are JSON
    ending in a NUL byte, written to the browser's fd 3 and read from its fd 4."""

    def __init__(self, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # above 4, so that the shell's "3<&R 4>&W" cannot overwrite one end with the other
        to_browser_r, from_browser_w = _above_4(to_browser_r), _above_4(from_browser_w)
        args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-pipe",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}",
        ]
        # bash (dash takes no fd above 9) hands the pipe ends over as fds 3 and 4, where
        # Chromium expects them
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w}', chromium_binary(), *args],
            pass_fds=(to_browser_r, from_browser_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session: str | None = None

    def send(
        self, method: str, params: dict | None = None, timeout: float = 30, browser: bool = False
    ) -> dict:
        """A command and its answer; events that arrive meanwhile are kept in ``events``."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError(f"Chromium closed the pipe (exit status {self.proc.poll()})")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for k, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(k)
            self.events.append(self._read(deadline))

    def open_page(self) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        self.session = self.send(
            "Target.attachToTarget", {"targetId": target, "flatten": True}, browser=True
        )["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False},
        )

    def load(self, url: str, fragment: str = "") -> None:
        """Open ``url`` afresh: a query of its own makes each load a new document (a change of
        the fragment alone would only scroll the page)."""
        self.events.clear()
        self._loads = getattr(self, "_loads", 0) + 1
        self.send("Page.navigate", {"url": f"{url}?load={self._loads}{fragment}"})
        self.wait_for("Page.loadEventFired")

    def js(self, expression: str):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def key(self, key: str, code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code},
            )

    def click(self, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}
            )

    def close(self) -> None:
        try:
            self.send("Browser.close", browser=True, timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chrome = Chromium(tmp_path_factory.mktemp("chromium-profile"))
    try:
        chrome.open_page()
        yield chrome
    finally:
        chrome.close()


def shown(browser: Chromium) -> tuple[int, str]:
    """(the ply the page says it shows, the SFEN of the board it shows)."""
    return (
        int(browser.js("document.getElementById('board').getAttribute('data-show')")),
        browser.js("document.querySelector('#board svg.shogi-board desc').textContent"),
    )


def sfen_at(report: dict, ply: int) -> str:
    return report["json"]["positions"][ply]["sfen"]


@pytest.mark.browser
def test_the_page_opens_from_a_file_and_its_script_runs(browser, report):
    browser.load(report["html"].as_uri())
    last = len(ROOK_HANG)
    assert shown(browser) == (last, sfen_at(report, last))
    assert browser.js("document.querySelectorAll('#moves [data-ply]').length") == last
    # text that only the script writes
    assert browser.js("document.getElementById('info-move').textContent").startswith(f"{last}. ")
    assert browser.js("document.querySelector('#moves .selected').getAttribute('data-ply')") == str(last)
    on_board = Position(sfen_at(report, last))
    assert (
        browser.js("document.querySelectorAll('#board .pieces text').length")
        == sum(on_board.piece_at(sq) is not None for sq in range(81))
        == 39
    )  # a rook is in a hand
    assert not [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"]
    # the page asked for nothing but itself
    urls = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert urls and all(u.startswith("file://") for u in urls), urls


@pytest.mark.browser
def test_an_address_with_a_ply_opens_that_position(browser, report):
    browser.load(report["html"].as_uri(), "#ply=9")
    assert shown(browser) == (9, sfen_at(report, 9))
    assert browser.js("document.getElementById('info-label').textContent").startswith("blunder: loses")
    # the engine's line from the position shown is drawn as arrows
    pv = report["json"]["positions"][9]["pv"]
    assert browser.js("document.querySelectorAll('#board .arrow').length") == min(3, len(pv)) > 0


@pytest.mark.browser
def test_keys_move_through_the_game(browser, report):
    browser.load(report["html"].as_uri(), "#ply=9")
    steps = [
        ("ArrowLeft", 37, 8),
        ("ArrowRight", 39, 9),
        ("ArrowRight", 39, 10),
        ("Home", 36, 0),
        ("ArrowLeft", 37, 0),
        ("End", 35, len(ROOK_HANG)),
        ("ArrowRight", 39, len(ROOK_HANG)),
    ]
    for key, code, ply in steps:
        browser.key(key, code)
        assert shown(browser) == (ply, sfen_at(report, ply)), key
    assert browser.js("location.hash") == f"#ply={len(ROOK_HANG)}"


@pytest.mark.browser
def test_a_click_on_the_graph_or_a_move_shows_that_position(browser, report):
    browser.load(report["html"].as_uri())
    rect = browser.js(
        "(function(){var r=document.getElementById('graph').getBoundingClientRect();"
        "return [r.left, r.top, r.width, r.height];})()"
    )
    x0, dx = browser.js(
        "[JSON.parse(document.getElementById('report-data').textContent).graph.x0,"
        "JSON.parse(document.getElementById('report-data').textContent).graph.dx]"
    )
    for ply in (3, 7):
        scale = rect[2] / GRAPH_W
        browser.click(rect[0] + (x0 + ply * dx) * scale, rect[1] + rect[3] / 2)
        assert shown(browser) == (ply, sfen_at(report, ply))
    box = browser.js(
        "(function(){var r=document.querySelector('#moves [data-ply=\"5\"]').getBoundingClientRect();"
        "return [r.left + r.width / 2, r.top + r.height / 2];})()"
    )
    browser.click(*box)
    assert shown(browser) == (5, sfen_at(report, 5))


@pytest.mark.browser
def test_a_screenshot_is_a_real_picture(browser, report, tmp_path):
    from PIL import Image

    browser.load(report["html"].as_uri(), "#ply=9")
    png = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png"})["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    (tmp_path / "report.png").write_bytes(png)
    with Image.open(io.BytesIO(png)) as img:
        assert img.size == VIEWPORT
        rgb = img.convert("RGB")
        colors = rgb.getcolors(maxcolors=1 << 20)
        assert len(colors) > 100  # not a blank or single-colour page
        # the board's wood and the graph's orange (white ahead after the blunder) are on screen
        counts = {color: n for n, color in colors}
        assert counts.get((0xEE, 0xC2, 0x7A), 0) > 20_000
        board = browser.js(
            "(function(){var r=document.querySelector('#board svg').getBoundingClientRect();"
            "return [r.left, r.top, r.right, r.bottom];})()"
        )
        inside = rgb.crop(tuple(round(v) for v in board)).getcolors(maxcolors=1 << 20)
        assert len(inside) > 50  # pieces drawn on the board
