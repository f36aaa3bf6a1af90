"""Open a page in headless Chromium (Debian's `chromium`, which `make setup` installs): a screenshot and the DOM
as the browser built it. A missing chromium fails the test that asks (no skip)."""
from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
import zlib
from html.parser import HTMLParser
from pathlib import Path


def chromium() -> str:
    path = shutil.which("chromium")
    assert path, "chromium is missing: run `make setup` (it installs Debian's chromium package)"
    return path


def _run(*args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:  # a profile of its own: parallel runs never share a lock
        return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=120,
                              check=False)


def screenshot(page: Path, out: Path, size: str = "1280,1600") -> bytes:
    proc = _run(f"--screenshot={out}", f"--window-size={size}", page.resolve().as_uri())
    assert out.is_file(), proc.stderr[-2000:]
    return out.read_bytes()


def dump_dom(page: Path) -> str:
    proc = _run("--dump-dom", page.resolve().as_uri())
    assert proc.returncode == 0 and "<html" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def png_pixels(data: bytes) -> list[list[tuple[int, ...]]]:
    """The pixel rows of an 8-bit RGB or RGBA PNG (what Chromium writes), unfiltered."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = chunk
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), f"PNG depth {depth} colour type {colour}"
    channels = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                line[i] = (line[i] + near[2]) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return rows


def colours(data: bytes) -> dict[tuple[int, ...], int]:
    """Pixel count per colour (RGB) of a PNG."""
    counts: dict[tuple[int, ...], int] = {}
    for row in png_pixels(data):
        for pixel in row:
            counts[pixel] = counts.get(pixel, 0) + 1
    return counts


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Elements(HTMLParser):
    """Every start tag with its attributes, the text of the document, and each `<title>` element's text with its
    parent's tag and attributes (an SVG shape's hover text), from a DOM dump."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.titles: list[tuple[str, dict[str, str], str]] = []
        self._open: list[tuple[str, dict[str, str]]] = []
        self.colours: dict[tuple[int, ...], int] = {}
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        self.tags.append((tag, found))
        if tag == "title" and self._open:
            self.titles.append((*self._open[-1], ""))
        if tag not in VOID:
            self._open.append((tag, found))

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._open and self._open[-1][0] == "title" and self.titles:
            parent, attrs, text = self.titles[-1]
            self.titles[-1] = (parent, attrs, text + data)

    def titled(self, tag: str, css: str) -> list[tuple[dict[str, str], str]]:
        """(attributes, hover text) of the `tag` elements of class `css` that hold a `<title>`."""
        return [(attrs, text) for parent, attrs, text in self.titles
                if parent == tag and css in attrs.get("class", "").split()]

    def having(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        """Attributes of the `tag` elements whose attributes include `attrs` (class as one of its words)."""
        out = []
        for name, found in self.tags:
            if name != tag:
                continue
            if all((v in found.get("class", "").split()) if k == "class_" else found.get(k) == v for k, v in attrs.items()):
                out.append(found)
        return out


def check_page(page: Path, png: Path, size: str = "1280,1600") -> Elements:
    """The page renders (many colours, not one flat fill) and its DOM parses; the DOM is returned, with the
    screenshot's pixel count per colour as its `colours`."""
    counts = colours(screenshot(page, png, size))
    white = counts.get((255, 255, 255), 0)
    assert len(counts) > 20 and white < 0.97 * sum(counts.values()), f"{page.name} renders blank: {len(counts)} colours"
    dom = Elements(dump_dom(page))
    dom.colours = counts
    return dom


def check_fleet(fleet_html: Path, png: Path, verdicts: dict[str, str], cells: dict[str, set[str]]) -> Elements:
    """fleet.html shows a row per host with its verdict and, per reported host, heat-map cells for `cells[host]`;
    the DOM is returned."""
    dom = check_page(fleet_html, png)
    text = " ".join(dom.text)
    rows = [t for t in dom.text if t.strip()]
    for host, verdict in verdicts.items():
        assert host in rows and verdict in rows, (host, verdict, text[:2000])
    assert {s["data-host"] for s in dom.having("section", class_="cluster")} == set(cells)
    # A heat map's cells follow its section: split the tags at each section to see whose cells they are.
    owner, found = "", {host: set() for host in cells}
    for tag, attrs in dom.tags:
        if tag == "section" and "cluster" in attrs.get("class", "").split():  # not a section inside one
            owner = attrs.get("data-host", "")
        elif tag == "rect" and "cell" in attrs.get("class", "").split():
            found[owner].add(attrs["data-node"])
    assert found == cells
    return dom
