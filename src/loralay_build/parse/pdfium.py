"""Default backend: PDFium through pypdfium2's raw API, two C calls per word.

The page text comes out in one `FPDFText_GetText` call; words are the whitespace-separated
runs of that text (PDFium inserts the spaces and line breaks), and each word's box is the
union of the loose boxes of its first and last characters, so no Python runs per
character. Measured on 484 real pages: `FPDFText_CountRects`/`FPDFText_GetRect` per word
cost 0.2 s more than this. PDFium marks a hyphen that
breaks a word at a line end with U+FFFE (or U+0002); such a word ends the line and is
emitted with a plain trailing "-", which the text module treats as a join candidate.
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as raw

from loralay_build.errors import Reason, Reject
from loralay_build.parse.backend import Line, PageText, check_page_count
from loralay_build.parse.geometry import Frame, clean_box, display_size, to_display, usable_size
from loralay_build.parse.settings import ParseSettings
from loralay_build.parse.words import CONTROLS, GARBAGE, line_spans
from loralay_build.records import Page

# A line break, a word ending in PDFium's hyphen marker, or a plain word.
_TOKEN = re.compile(r"\r\n|[\r\n]|[^\s\ufffe\x02]*[\ufffe\x02]|[^\s\ufffe\x02]+")
_HYPHEN_MARKS = "\ufffe\x02"
# FPDFText_GetLooseCharBox(text_page, index, FS_RECTF*) declared with plain integers.
_LOOSE_BOX = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)(
    ctypes.cast(raw.FPDFText_GetLooseCharBox, ctypes.c_void_p).value or 0
)
_USHORT_P = ctypes.POINTER(ctypes.c_ushort)
_BREAKS = frozenset(("\r\n", "\r", "\n"))
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
    buffer = ctypes.create_string_buffer(4 * count + 4)
    written = raw.FPDFText_GetText(textpage, 0, count, ctypes.cast(buffer, _USHORT_P))
    text = buffer.raw[: 2 * max(written - 1, 0)].decode("utf-16-le", "replace")
    if len(text) == count:
        return text
    # Unpaired surrogates or truncation: fall back to one call per character.
    chars = []
    for i in range(count):
        code = raw.FPDFText_GetUnicode(textpage, i)
        valid = 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF
        chars.append(chr(code) if valid else "\ufffd")
    return "".join(chars)


def _read_text(textpage: Any, frame: Frame, result: PageText, settings: ParseSettings) -> None:
    """Cut the page text into words and lines and fill `result` with them.

    This loop runs once per word of the corpus, so it is kept flat: the word box is the union
    of the loose boxes (font ascent to descent) of its first and last characters, which
    along any quarter-turn direction spans the word; the display transform is inlined and
    the slow clamping path only runs for boxes off the page.
    """
    count = raw.FPDFText_CountChars(textpage)
    if count <= 0:
        return
    if count > settings.max_chars_per_page:
        raise Reject(
            Reason.TOO_LARGE,
            f"page {result.page.index} has {count} chars > max_chars_per_page",
        )
    text = CONTROLS.sub("\ufffd", _page_text(textpage, count))
    # Loose boxes of each word's first and last characters land in one float array (8
    # floats per word) through an int-only prototype, the cheapest call ctypes makes.
    store = (ctypes.c_float * (8 * count + 8))()
    base = ctypes.addressof(store)
    handle = ctypes.cast(textpage, ctypes.c_void_p).value
    loose_box = _LOOSE_BOX

    words: list[str] = []
    lines: list[tuple[int, int, int]] = []  # (first word, end word, first character)
    line_word = line_char = 0
    chars = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in _BREAKS:
            if len(words) > line_word:
                lines.append((line_word, len(words), line_char))
                line_word = len(words)
            continue
        start = match.start()
        slot = base + 32 * len(words)
        if not loose_box(handle, start, slot):
            continue
        end = match.end() - 1
        if end == start or not loose_box(handle, end, slot + 16):
            loose_box(handle, start, slot + 16)
        if len(words) == line_word:
            line_char = start
        chars += end - start + 1
        if token[-1] in _HYPHEN_MARKS:
            words.append(token[:-1] + "-")
            lines.append((line_word, len(words), line_char))
            line_word = len(words)
        else:
            words.append(token)
    if len(words) > line_word:
        lines.append((line_word, len(words), line_char))
    floats = store[: 8 * len(words)]
    corners = list(zip(*[iter(floats)] * 8, strict=True))
    for first, last, char in lines:
        _add_line(textpage, result, words[first:last], corners[first:last], frame, char)
    result.chars += chars
    result.garbage += len(GARBAGE.findall(text))


def _add_line(
    textpage: object,
    result: PageText,
    words: list[str],
    corners: list[tuple[float, ...]],
    frame: Frame,
    first: int,
) -> None:
    """Turn the loose boxes of each word's first and last characters into display boxes,
    then append the engine line, split where the geometry shows several lines.

    Direction and font size are read once per line, from its first character. The size is
    the Tf size scaled by the character's matrix: producers that set `Tf 1` and scale with
    the text matrix are common, and their nominal size says nothing.
    """
    left, _, _, top, quarter = frame
    width, height = result.page.width, result.page.height
    if quarter == 0:
        boxes = [
            (
                (a if a < e else e) - left,
                top - (b if b > f else f),
                (c if c > g else g) - left,
                top - (d if d < h else h),
            )
            for a, b, c, d, e, f, g, h in corners
        ]
    else:
        boxes = [
            to_display(frame, min(a, e), min(d, h), max(c, g), max(b, f))
            for a, b, c, d, e, f, g, h in corners
        ]
    x0, y0, x1, y1 = zip(*boxes, strict=True)
    if not (min(x0) >= 0.0 and min(y0) >= 0.0 and max(x1) <= width and max(y1) <= height):
        kept = [(w, clean_box(box, width, height)) for w, box in zip(words, boxes, strict=True)]
        words = [w for w, box in kept if box is not None]
        boxes = [box for _, box in kept if box is not None]
        result.bad_boxes += len(kept) - len(boxes)
        if not boxes:
            return
    angle = raw.FPDFText_GetCharAngle(textpage, first)
    turns = round(angle / _QUARTER) if math.isfinite(angle) and angle >= 0 else 0
    direction = (turns + quarter) % 4
    size = raw.FPDFText_GetFontSize(textpage, first)
    matrix = raw.FS_MATRIX()
    if raw.FPDFText_GetMatrix(textpage, first, matrix):
        size *= math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c))
    if not (math.isfinite(size) and 0.0 < size < 10_000.0):
        box = boxes[0]
        size = box[3] - box[1] if direction % 2 == 0 else box[2] - box[0]
    for a, b in line_spans(boxes, size, direction):
        result.lines.append(Line(words[a:b], boxes[a:b], [size] * (b - a), direction))
