"""pdfplumber backend: the pure-Python reference, slow (about 18 pages/s) but independent.

Words use `x_tolerance_ratio` (the fixed 3 pt default glues words in LaTeX papers);
`(cid:N)` glyphs without a Unicode mapping become U+FFFD and are counted as garbage.
Words on pages turned by /Rotate are read with the character and line directions of the
turned page, since pdfplumber reverses them at 180 and 270 degrees otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pdfplumber

from loralay_build.errors import Reason, Reject
from loralay_build.parse.accents import compose_accents
from loralay_build.parse.backend import Line, PageText, check_page_count
from loralay_build.parse.geometry import clean_box, usable_size
from loralay_build.parse.settings import ParseSettings
from loralay_build.parse.words import BIDI_MARKS, CONTROLS, GARBAGE, line_spans
from loralay_build.records import Box, Page

_CID = re.compile(r"\(cid:\d+\)")
# Directions pdfplumber reports, as clockwise quarter turns in display space.
_DIRECTION = {"ltr": 0, "ttb": 1, "rtl": 2, "btt": 3}
# (char_dir, line_dir) for upright characters on a page turned by /Rotate 0/90/180/270.
_UPRIGHT_DIRS = {0: ("ltr", "ttb"), 90: ("ttb", "rtl"), 180: ("rtl", "btt"), 270: ("btt", "ltr")}


class PlumberBackend:
    """Words from pdfplumber/pdfminer.six, without layout analysis (`laparams=None`)."""

    def pages(self, path: Path, settings: ParseSettings) -> Iterator[PageText]:
        """Yield every page; each page is closed after use so memory stays flat."""
        try:
            pdf = pdfplumber.open(path, laparams=None)
        except Exception as exc:
            if _is_password_error(exc):
                raise Reject(Reason.ENCRYPTED, f"{type(exc).__name__}: {exc}") from exc
            raise
        try:
            pages = pdf.pages
            check_page_count(len(pages), settings)
            for index, page in enumerate(pages):
                try:
                    yield _read_page(page, index, settings)
                finally:
                    page.close()
        finally:
            pdf.close()


def _is_password_error(exc: BaseException) -> bool:
    """pdfminer wraps password and security-handler failures in PdfminerException."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            break
        name = type(seen).__name__
        if "Password" in name or "Encryption" in name:
            return True
        nested = [arg for arg in seen.args if isinstance(arg, BaseException)]
        seen = nested[0] if nested else (seen.__cause__ or seen.__context__)
    return False


def _read_page(page: Any, index: int, settings: ParseSettings) -> PageText:
    width, height = float(page.width), float(page.height)
    rotation = int(page.rotation or 0) % 360
    if not usable_size(width, height):
        raise Reject(Reason.CORRUPTED, f"page {index} has an unusable size")
    result = PageText(Page(index, width, height, rotation))
    if len(page.chars) > settings.max_chars_per_page:
        raise Reject(Reason.TOO_LARGE, f"page {index} has too many chars")
    char_dir, line_dir = _UPRIGHT_DIRS.get(rotation, ("ltr", "ttb"))
    found = page.extract_words(
        x_tolerance_ratio=settings.x_tolerance_ratio,
        char_dir=char_dir,
        line_dir=line_dir,
        char_dir_rotated=char_dir,
        line_dir_rotated=line_dir,
        return_chars=settings.compose_accents,
    )
    words: list[str] = []
    chars: list[list[Box]] = []
    boxes: list[Box] = []
    sizes: list[float] = []
    dirs: list[int] = []
    for word in found:
        text = BIDI_MARKS.sub("", word["text"])
        text = _CID.sub("\ufffd", text)
        text = CONTROLS.sub("\ufffd", text)
        if not text.strip():
            continue
        box = clean_box((word["x0"], word["top"], word["x1"], word["bottom"]), width, height)
        if box is None:
            result.bad_boxes += 1
            continue
        direction = _DIRECTION.get(str(word.get("direction", "ltr")), 0)
        words.append(text)
        boxes.append(box)
        chars.append([(c["x0"], c["top"], c["x1"], c["bottom"]) for c in word.get("chars", ())])
        # Glyph height across the text direction: pdfplumber sizes characters by it.
        sizes.append(box[3] - box[1] if direction % 2 == 0 else box[2] - box[0])
        dirs.append(direction)
        result.chars += len(text)
        result.garbage += len(GARBAGE.findall(text))
    if settings.compose_accents:
        composed = compose_accents(words, boxes, [(0, len(words))], chars.__getitem__)
        if composed is not None:
            words, boxes = composed.words, composed.boxes
            sizes = [sizes[k] for k in composed.origin]
            dirs = [dirs[k] for k in composed.origin]
            result.composed += composed.count
    start = 0
    for i in range(1, len(words) + 1):
        if i == len(words) or dirs[i] != dirs[start]:
            _add_lines(result, words[start:i], boxes[start:i], sizes[start:i], dirs[start])
            start = i
    return result


def _add_lines(
    result: PageText, words: list[str], boxes: list[Box], sizes: list[float], direction: int
) -> None:
    # pdfplumber returns a page's words as one stream; the typical size judges its gaps.
    typical = sorted(sizes)[len(sizes) // 2]
    for a, b in line_spans(boxes, typical, direction):
        result.lines.append(Line(words[a:b], boxes[a:b], sizes[a:b], direction))
