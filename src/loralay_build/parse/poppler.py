"""poppler backend: `pdftotext -bbox-layout` in a subprocess, XHTML read as it streams.

Only end events are used: a word is read once its element is complete, so no word is lost
where the XHTML crosses a parser read boundary. Poppler's blocks are kept together by the
reading order. Poppler reports some turned pages with their unrotated size while the word
boxes are in display space; the size is swapped when only the swapped size holds the boxes.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from lxml import etree

from loralay_build.errors import Reason, Reject
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
            argv = [self.binary, "-q", "-bbox-layout", "-enc", "UTF-8", str(path), "-"]
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, stdin=subprocess.DEVNULL)
            assert proc.stdout is not None
            try:
                pages = list(_parse(proc.stdout, settings))
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
        check_page_count(len(pages), settings)
        yield from pages


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
            yield _page(index - 1, width, height, lines, chars, garbage, bad)
            lines, chars, garbage, bad = [], 0, 0, 0


def _page(
    index: int, width: float, height: float, lines: list[Line], chars: int, garbage: int, bad: int
) -> PageText:
    """A page with its display size and every box clamped inside it."""
    if not usable_size(width, height):
        raise Reject(Reason.CORRUPTED, f"page {index} has an unusable size")
    rotation = 0
    if lines:
        right = max(b[2] for line in lines for b in line.boxes)
        bottom = max(b[3] for line in lines for b in line.boxes)
        if (right > width + 1 or bottom > height + 1) and right <= height + 1 and bottom <= width + 1:
            width, height, rotation = height, width, 90
    for line in lines:
        line.boxes = [clean_box(b, width, height) or b for b in line.boxes]
    return PageText(Page(index, width, height, rotation), lines, chars, garbage, bad)

