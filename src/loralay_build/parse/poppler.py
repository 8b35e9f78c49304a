"""poppler backend: `pdftotext -bbox-layout` in a subprocess, XHTML read as it streams.

Only end events are used: a word is read once its element is complete, so no word is lost
where the XHTML crosses a parser read boundary. Poppler's blocks are kept together by the
reading order. Poppler reports turned pages with their unrotated size while the word boxes
are in display space, so the displayed size is read from PDFium's page dictionary (no
content parsing); `Page.rotation` is then 90 for a quarter-turned page (poppler does not
tell 90 from 270, nor 0 from 180).
"""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pypdfium2 as pdfium
import pypdfium2.raw as raw
from lxml import etree

from loralay_build.errors import Reason, Reject
from loralay_build.parse.accents import compose_accents
from loralay_build.parse.backend import Line, PageText, check_page_count
from loralay_build.parse.geometry import clean_box, usable_size
from loralay_build.parse.settings import ParseSettings
from loralay_build.parse.words import BIDI_MARKS, CONTROLS, GARBAGE, direction_of
from loralay_build.records import Box, Page

_NS = "{http://www.w3.org/1999/xhtml}"
_PAGE, _BLOCK, _LINE, _WORD = (_NS + tag for tag in ("page", "block", "line", "word"))
_COORDS = ("xMin", "yMin", "xMax", "yMax")
# pdftotext exit codes: 1 error opening the file (passwords included), 3 permissions.
_EXIT_ENCRYPTED = "password"


class PopplerBackend:
    """Words, lines and blocks from poppler's `pdftotext -bbox-layout`."""

    def __init__(self) -> None:
        binary = shutil.which("pdftotext")
        if binary is None:
            raise RuntimeError("the poppler backend needs `pdftotext` (apt: poppler-utils)")
        self.binary = binary

    def pages(self, path: Path, settings: ParseSettings) -> Iterator[PageText]:
        """Yield pages as pdftotext writes them; the subprocess never outlives the call."""
        with tempfile.TemporaryFile() as errors:
            argv = [self.binary, "-bbox-layout", "-enc", "UTF-8", str(path), "-"]
            proc = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=errors, stdin=subprocess.DEVNULL
            )
            assert proc.stdout is not None
            failure: Exception | None = None
            try:
                pages = list(_parse(proc.stdout, settings))
            except etree.XMLSyntaxError as exc:
                # pdftotext wrote nothing parsable: its exit status says why.
                failure, pages = exc, []
            try:
                code = proc.wait()
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                proc.stdout.close()
            if code != 0:
                errors.seek(0)
                message = errors.read(2000).decode("utf-8", "replace").strip()
                if _EXIT_ENCRYPTED in message.lower():
                    raise Reject(Reason.ENCRYPTED, f"pdftotext: {message}")
                raise Reject(Reason.CORRUPTED, f"pdftotext exit {code}: {message}")
            if failure is not None:
                raise failure
        check_page_count(len(pages), settings)
        displayed = _display_sizes(path, len(pages))
        for page, size in zip(pages, displayed, strict=True):
            yield _resize(page, size)


def _parse(stream: IO[bytes], settings: ParseSettings) -> Iterator[PageText]:
    """Pages from the XHTML stream, using end events only."""
    parser = etree.iterparse(
        stream, events=("end",), recover=True, resolve_entities=False, no_network=True
    )
    words: list[str] = []
    boxes: list[Box] = []
    sizes: list[float] = []
    lines: list[Line] = []
    block = 0
    index = 0
    chars = garbage = bad = 0
    for _, element in parser:
        tag = element.tag
        if tag == _WORD:
            text = CONTROLS.sub("\ufffd", BIDI_MARKS.sub("", element.text or "")).strip()
            raw_box = tuple(float(element.get(name, "nan")) for name in _COORDS)
            element.clear()
            if not text:
                continue
            if not all(math.isfinite(v) for v in raw_box):
                bad += 1
                continue
            words.append(text)
            boxes.append((raw_box[0], raw_box[1], raw_box[2], raw_box[3]))
            sizes.append(raw_box[3] - raw_box[1])
            chars += len(text)
            garbage += len(GARBAGE.findall(text))
        elif tag == _LINE:
            if words:
                lines.append(Line(words, boxes, sizes, direction_of(boxes), block))
            words, boxes, sizes = [], [], []
            element.clear()
        elif tag == _BLOCK:
            block += 1
            element.clear()
        elif tag == _PAGE:
            width = float(element.get("width", "nan"))
            height = float(element.get("height", "nan"))
            element.clear()
            index += 1
            if index > settings.max_pages:
                raise Reject(Reason.TOO_LARGE, f"more than max_pages={settings.max_pages} pages")
            page = _page(index - 1, width, height, lines, chars, garbage, bad)
            if settings.compose_accents:
                page.lines, page.composed = _composed(lines)
            yield page
            lines, chars, garbage, bad = [], 0, 0, 0


def _composed(lines: list[Line]) -> tuple[list[Line], int]:
    """The page's lines after accent composition, and the number of accents composed.

    poppler composes most accents itself and puts an accent it leaves alone on a line of its
    own, so the page is composed as one run (without character boxes, only stand-alone accent
    words compose); each new word keeps the line of its first piece.
    """
    words = [w for line in lines for w in line.words]
    boxes = [b for line in lines for b in line.boxes]
    done = compose_accents(words, boxes, [(0, len(words))])
    if done is None:
        return lines, 0
    sizes = [s for line in lines for s in line.sizes]
    owner = [k for k, line in enumerate(lines) for _ in line.words]
    out: list[Line] = []
    last = -1
    for word, box, first in zip(done.words, done.boxes, done.origin, strict=True):
        line = lines[owner[first]]
        if owner[first] != last:
            out.append(Line([], [], [], line.direction, line.group))
            last = owner[first]
        out[-1].words.append(word)
        out[-1].boxes.append(box)
        out[-1].sizes.append(sizes[first])
    return out, done.count


def _page(
    index: int, width: float, height: float, lines: list[Line], chars: int, garbage: int, bad: int
) -> PageText:
    """A page with its display size and every box clamped inside it."""
    if not usable_size(width, height):
        raise Reject(Reason.CORRUPTED, f"page {index} has an unusable size")
    return PageText(Page(index, width, height), lines, chars, garbage, bad)


def _display_sizes(path: Path, count: int) -> list[tuple[float, float] | None]:
    """Displayed page sizes from PDFium (None where PDFium cannot tell)."""
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:
        return [None] * count
    try:
        size = raw.FS_SIZEF()
        sizes: list[tuple[float, float] | None] = []
        for i in range(count):
            ok = i < len(pdf) and raw.FPDF_GetPageSizeByIndexF(pdf.raw, i, size)
            sizes.append((size.width, size.height) if ok else None)
        return sizes
    finally:
        pdf.close()


def _resize(page: PageText, size: tuple[float, float] | None) -> PageText:
    """Give the page its displayed size and clamp every box inside it."""
    width, height = page.page.width, page.page.height
    rotation = 0
    if size is not None and usable_size(*size):
        turned = abs(size[0] - height) < 1 and abs(size[1] - width) < 1 and abs(width - height) >= 1
        width, height = size
        rotation = 90 if turned else 0
    page.page = Page(page.page.index, width, height, rotation)
    for line in page.lines:
        line.boxes = [clean_box(b, width, height) or (0.0, 0.0, 0.0, 0.0) for b in line.boxes]
    return page
