"""Default backend: PDFium through pypdfium2's raw API, a few C calls per word.

The page text comes out in one `FPDFText_GetText` call; words are the whitespace-separated
runs of that text and each word's box comes from `FPDFText_CountRects`/`FPDFText_GetRect`
over its character range, so no Python runs per character. PDFium marks a hyphen that
breaks a word at a line end with U+FFFE (or U+0002); such a word ends the line and is
emitted with a plain trailing "-", which the text module treats as a join candidate.
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Iterator
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as raw

from loralay_build.errors import Reason, Reject
from loralay_build.parse.backend import Line, PageText, check_page_count, register
from loralay_build.parse.geometry import Frame, clean_box, display_size, to_display, usable_size
from loralay_build.parse.settings import ParseSettings
from loralay_build.parse.words import CONTROLS, GARBAGE, line_breaks
from loralay_build.records import Box, Page

# A line break, a word ending in PDFium's hyphen marker, or a plain word.
_TOKEN = re.compile(r"\r\n|[\r\n]|[^\s\ufffe\x02]*[\ufffe\x02]|[^\s\ufffe\x02]+")
_HYPHEN_MARKS = "\ufffe\x02"
_QUARTER = math.pi / 2
_PASSWORD_ERRORS = {raw.FPDF_ERR_PASSWORD, raw.FPDF_ERR_SECURITY}


class PdfiumBackend:
    """Words, boxes and font sizes from PDFium, in display space."""

    def pages(self, path: Path, settings: ParseSettings) -> Iterator[PageText]:
        """Yield every page; the document and each page are closed as soon as done."""
        try:
            pdf = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError as exc:
            if getattr(exc, "err_code", None) in _PASSWORD_ERRORS:
                raise Reject(Reason.ENCRYPTED, f"PdfiumError: {exc}") from exc
            raise
        try:
            count = len(pdf)
            check_page_count(count, settings)
            for index in range(count):
                yield _read_page(pdf.raw, index, settings)
        finally:
            pdf.close()


def _read_page(doc: object, index: int, settings: ParseSettings) -> PageText:
    """Extract one page through the raw API and close it before returning."""
    page = raw.FPDF_LoadPage(doc, index)
    if not page:
        raise Reject(Reason.CORRUPTED, f"PdfiumError: failed to load page {index}")
    try:
        rect = raw.FS_RECTF()
        raw.FPDF_GetPageBoundingBox(page, rect)
        quarter = raw.FPDFPage_GetRotation(page) % 4
        frame: Frame = (rect.left, rect.bottom, rect.right, rect.top, quarter)
        width, height = display_size(frame)
        if not usable_size(width, height):
            raise Reject(Reason.CORRUPTED, f"page {index} has an unusable size")
        result = PageText(Page(index, width, height, quarter * 90))
        textpage = raw.FPDFText_LoadPage(page)
        if not textpage:
            return result
        try:
            _read_text(textpage, frame, result, settings)
        finally:
            raw.FPDFText_ClosePage(textpage)
        return result
    finally:
        raw.FPDF_ClosePage(page)


def _page_text(textpage: object, count: int) -> str:
    """The whole page text, one Python character per PDFium character."""
    buffer = (ctypes.c_ushort * (2 * count + 2))()
    written = raw.FPDFText_GetText(textpage, 0, count, buffer)
    text = ctypes.string_at(buffer, 2 * max(written - 1, 0)).decode("utf-16-le", "replace")
    if len(text) == count:
        return text
    # Unpaired surrogates or truncation: fall back to one call per character.
    chars = []
    for i in range(count):
        code = raw.FPDFText_GetUnicode(textpage, i)
        valid = 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF
        chars.append(chr(code) if valid else "\ufffd")
    return "".join(chars)


def _read_text(textpage: object, frame: Frame, result: PageText, settings: ParseSettings) -> None:
    """Cut the page text into words and lines and fill `result` with them."""
    count = raw.FPDFText_CountChars(textpage)
    if count <= 0:
        return
    if count > settings.max_chars_per_page:
        raise Reject(
            Reason.TOO_LARGE,
            f"page {result.page.index} has {count} chars > max_chars_per_page",
        )
    text = CONTROLS.sub("\ufffd", _page_text(textpage, count))
    width, height = result.page.width, result.page.height
    quarter = frame[4]
    left, top, right, bottom = (ctypes.c_double() for _ in range(4))
    refs = (ctypes.byref(left), ctypes.byref(top), ctypes.byref(right), ctypes.byref(bottom))
    count_rects, get_rect = raw.FPDFText_CountRects, raw.FPDFText_GetRect
    font_size = raw.FPDFText_GetFontSize

    words: list[str] = []
    boxes: list[Box] = []
    sizes: list[float] = []
    direction = 0
    chars = 0

    def flush() -> None:
        if words:
            _add_line(result, words, boxes, sizes, direction)

    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first == "\r" or first == "\n":
            flush()
            words, boxes, sizes = [], [], []
            continue
        start, length = match.start(), len(token)
        rects = count_rects(textpage, start, length)
        if rects <= 0:
            continue
        get_rect(textpage, 0, *refs)
        x0, y1, x1, y0 = left.value, top.value, right.value, bottom.value
        for k in range(1, rects):
            get_rect(textpage, k, *refs)
            x0, y1 = min(x0, left.value), max(y1, top.value)
            x1, y0 = max(x1, right.value), min(y0, bottom.value)
        box = clean_box(to_display(frame, x0, y0, x1, y1), width, height)
        if box is None:
            result.bad_boxes += 1
            continue
        if not words:
            angle = raw.FPDFText_GetCharAngle(textpage, start)
            turns = round(angle / _QUARTER) if math.isfinite(angle) and angle >= 0 else 0
            direction = (turns + quarter) % 4
        size = font_size(textpage, start)
        if not (math.isfinite(size) and size > 0.0):
            size = box[3] - box[1]
        hyphen = token[-1] in _HYPHEN_MARKS
        if hyphen:
            token = token[:-1] + "-"
        chars += length
        words.append(token)
        boxes.append(box)
        sizes.append(size)
        if hyphen:
            flush()
            words, boxes, sizes = [], [], []
    flush()
    result.chars += chars
    result.garbage += len(GARBAGE.findall(text))


def _add_line(
    result: PageText, words: list[str], boxes: list[Box], sizes: list[float], direction: int
) -> None:
    """Append an engine line, split where the geometry shows several lines."""
    cuts = [0, *line_breaks(boxes, sizes, direction), len(words)]
    for a, b in zip(cuts, cuts[1:], strict=False):
        result.lines.append(Line(words[a:b], boxes[a:b], sizes[a:b], direction))


register("pdfium", PdfiumBackend)
