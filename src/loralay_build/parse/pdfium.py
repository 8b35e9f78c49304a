"""Default backend: PDFium through pypdfium2's raw API, two C calls per word.

The page text comes out in one `FPDFText_GetText` call; words are the whitespace-separated
runs of that text (PDFium inserts the spaces and line breaks), and each word's box is the
union of the loose boxes of its first and last characters, so no Python runs per
character. Measured on 484 real pages: `FPDFText_CountRects`/`FPDFText_GetRect` per word
cost 0.2 s more than this. The C functions are called without declared argument types,
the cheapest call ctypes makes. PDFium marks a hyphen that breaks a word at a line end with
U+FFFE (or U+0002); such a word ends the line and is emitted with a plain trailing "-",
which the text module treats as a join candidate.

When the compiled core is built (`native/_native.c`, see `native/__init__.py`), the loop from
the page text to lines, spacing accents composed, runs there in one call per page, on the
same PDFium functions taken from their addresses; the Python loop below is the reference it
matches output for output.
"""

from __future__ import annotations

import ctypes
import math
import re
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as raw

from loralay_build.errors import Reason, Reject
from loralay_build.native import native_module
from loralay_build.parse.accents import ACCENT, compose_accents
from loralay_build.parse.backend import Line, PageText, check_page_count
from loralay_build.parse.geometry import Frame, clean_box, display_size, to_display, usable_size
from loralay_build.parse.ocr import SCAN_CHARS, page_image_cover
from loralay_build.parse.settings import ParseSettings
from loralay_build.parse.words import CONTROLS, GARBAGE, line_spans
from loralay_build.records import Box, Page

# The whitespace before a word, and the word: a run ending in PDFium's hyphen marker or not.
_WORD = re.compile(r"(\s*)([^\s\ufffe\x02]+[\ufffe\x02]?|[\ufffe\x02])")
_HYPHEN_MARKS = "\ufffe\x02"
# A character outside the BMP: PDFium counts it as two characters (its surrogate halves).
_WIDE = re.compile("[\U00010000-\U0010ffff]")
_QUARTER = math.pi / 2
_PASSWORD_ERRORS = {raw.FPDF_ERR_PASSWORD, raw.FPDF_ERR_SECURITY}


def _function(restype: type, function: Any) -> Callable[..., Any]:
    """`function` of the PDFium library without declared argument types.

    ctypes then passes Python ints as C ints and ctypes objects (the text page as a
    `c_void_p`, buffers through `byref`) as they are, skipping the per-argument conversion
    that declared types cost on every call.
    """
    address = ctypes.cast(function, ctypes.c_void_p).value or 0
    return ctypes.CFUNCTYPE(restype)(address)


_LOOSE_BOX = _function(ctypes.c_int, raw.FPDFText_GetLooseCharBox)
_CHAR_ANGLE = _function(ctypes.c_float, raw.FPDFText_GetCharAngle)
_FONT_SIZE = _function(ctypes.c_double, raw.FPDFText_GetFontSize)
_MATRIX = _function(ctypes.c_int, raw.FPDFText_GetMatrix)
_GET_TEXT = _function(ctypes.c_int, raw.FPDFText_GetText)
_UNICODE = _function(ctypes.c_uint, raw.FPDFText_GetUnicode)
_CHAR_INDEX = _function(ctypes.c_int, raw.FPDFText_GetCharIndexFromTextIndex)
_FONT_WEIGHT = _function(ctypes.c_int, raw.FPDFText_GetFontWeight)
_FONT_INFO = _function(ctypes.c_ulong, raw.FPDFText_GetFontInfo)
# Font names of bold faces and of other faces: PDFium reports the standard fonts' weight
# as 0 and derives others' from the stem width, which some producers set wide for regular
# faces, so a name that tells ("Times-Bold", "CMBX10", "Times-Roman") wins over the weight.
_BOLD_NAME = re.compile(r"bold|black|heavy|cmbx|semibd|-bd|,bd|demi")
_OTHER_NAME = re.compile(r"roman|regu|book|light|ital|oblique|medium|normal|cmr|cmti|cmsy|cmmi")


def _address(function: Any) -> int:
    return ctypes.cast(function, ctypes.c_void_p).value or 0


def _bound_native() -> ModuleType | None:
    """The compiled core with this process's PDFium functions bound, or None."""
    native = native_module()
    if native is not None:
        native.bind(*(_address(f) for f in (
            raw.FPDFText_GetText, raw.FPDFText_GetUnicode,
            raw.FPDFText_GetCharIndexFromTextIndex, raw.FPDFText_GetLooseCharBox,
            raw.FPDFText_GetCharAngle, raw.FPDFText_GetFontSize, raw.FPDFText_GetMatrix,
            raw.FPDFText_GetFontWeight, raw.FPDFText_GetFontInfo,
        )))
    return native


_NATIVE = _bound_native()


class PdfiumBackend:
    """Words, boxes and font sizes from PDFium, in display space.

    `native=False` runs the Python loop even when the compiled core is available.
    """

    def __init__(self, native: bool = True) -> None:
        self.native = _NATIVE if native else None

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
                yield _read_page(pdf.raw, index, settings, self.native)
        finally:
            pdf.close()


def _read_page(
    doc: object, index: int, settings: ParseSettings, native: ModuleType | None
) -> PageText:
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
        if textpage:
            try:
                _read_text(textpage, frame, result, settings, native)
            finally:
                raw.FPDFText_ClosePage(textpage)
        if result.chars < SCAN_CHARS:  # maybe a scan: measured now, not by loading it again
            result.image_cover = page_image_cover(page)
        return result
    finally:
        raw.FPDF_ClosePage(page)


def _page_text(handle: ctypes.c_void_p, count: int) -> str:
    """The whole page text, one Python character per PDFium character.

    A character outside the BMP fills two PDFium characters and becomes two U+FFFD, as a
    lone surrogate becomes one. Characters PDFium leaves out of its text (U+0000 and some
    controls) are found by bisection over the text and put back with one call each.
    """
    buffer = ctypes.create_string_buffer(4 * count + 4)
    written = _GET_TEXT(handle, 0, count, ctypes.byref(buffer))
    units = max(written - 1, 0)
    text = buffer.raw[: 2 * units].decode("utf-16-le", "replace")
    if len(text) != units:
        text = _WIDE.sub("\ufffd\ufffd", text)
    if units == count:
        return text
    missing = _missing_chars(handle, units, count) if 0 < units < count else None
    if missing is None:
        return "".join(_char(handle, i) for i in range(count))
    pieces = []
    done = 0
    for k, index in enumerate(missing):
        pieces.append(text[done : index - k])
        pieces.append(_char(handle, index))
        done = index - k
    pieces.append(text[done:])
    return "".join(pieces)


def _char(handle: ctypes.c_void_p, index: int) -> str:
    """One character through `FPDFText_GetUnicode`; U+FFFD for codes that are not text."""
    code = _UNICODE(handle, index)
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"


def _missing_chars(handle: ctypes.c_void_p, units: int, count: int) -> list[int] | None:
    """Indices of the characters absent from the page text, ascending; None if inconsistent.

    The character index of text index t is t plus the characters missing before it, so
    that offset only grows along the text; bisection finds where it steps.
    """

    def offset(t: int) -> int:
        return int(_CHAR_INDEX(handle, t)) - t

    first, last = offset(0), offset(units - 1)
    if not 0 <= first <= last <= count - units:
        return None
    missing = list(range(first))
    stack = [(0, units - 1, first, last)]
    while stack:
        lo, hi, lo_offset, hi_offset = stack.pop()
        if lo_offset == hi_offset:
            continue
        if hi - lo == 1:
            missing.extend(range(lo + lo_offset + 1, hi + hi_offset))
            continue
        mid = (lo + hi) // 2
        mid_offset = offset(mid)
        if not lo_offset <= mid_offset <= hi_offset:
            return None
        stack.append((mid, hi, mid_offset, hi_offset))
        stack.append((lo, mid, lo_offset, mid_offset))
    missing.extend(range(units + last, count))
    return missing


def _read_text(
    textpage: Any, frame: Frame, result: PageText, settings: ParseSettings,
    native: ModuleType | None,
) -> None:
    """Cut the page text into words and lines and fill `result` with them.

    This loop runs once per word of the corpus, so it is kept flat: the word box is the union
    of the loose boxes (font ascent to descent) of its first and last characters, which
    along any quarter-turn direction spans the word. A line break is a whitespace run
    holding CR or LF; a word ending in the hyphen marker ends its line.
    """
    count = raw.FPDFText_CountChars(textpage)
    if count <= 0:
        return
    if count > settings.max_chars_per_page:
        raise Reject(
            Reason.TOO_LARGE,
            f"page {result.page.index} has {count} chars > max_chars_per_page",
        )
    handle = ctypes.cast(textpage, ctypes.c_void_p)
    if native is not None:
        _read_text_native(native, handle, count, frame, result, settings)
        return
    text = CONTROLS.sub("\ufffd", _page_text(handle, count))
    # Loose boxes of each word's first and last characters land in one float array (8
    # floats per word).
    store = (ctypes.c_float * (8 * count + 8))()
    slot = 0
    loose_box, byref = _LOOSE_BOX, ctypes.byref

    words: list[str] = []
    starts: list[int] = []  # index of each word's first character
    lines: list[tuple[int, int]] = []  # (first word, end word)
    line_word = pos = 0
    for space, token in _WORD.findall(text):
        start = pos + len(space)
        pos = start + len(token)
        if space != " " and ("\n" in space or "\r" in space) and len(words) > line_word:
            lines.append((line_word, len(words)))
            line_word = len(words)
        if not loose_box(handle, start, byref(store, slot)):
            continue
        if pos - start == 1 or not loose_box(handle, pos - 1, byref(store, slot + 16)):
            loose_box(handle, start, byref(store, slot + 16))
        slot += 32
        starts.append(start)
        if token[-1] in _HYPHEN_MARKS:
            words.append(token[:-1] + "-")
            lines.append((line_word, len(words)))
            line_word = len(words)
        else:
            words.append(token)
    if len(words) > line_word:
        lines.append((line_word, len(words)))
    result.chars += sum(map(len, words))
    result.garbage += len(GARBAGE.findall(text))
    if words:
        corners = struct.iter_unpack("8f", ctypes.string_at(store, 32 * len(words)))
        boxes = _display_boxes(corners, frame)
        if settings.compose_accents and ACCENT.search(text) is not None:
            words, boxes, starts, lines = _compose(handle, result, words, boxes, starts, lines,
                                                   frame)
        _add_lines(handle, result, words, boxes, starts, lines, frame[4])


def _compose(
    handle: ctypes.c_void_p, result: PageText, words: list[str], boxes: list[Box],
    starts: list[int], lines: list[tuple[int, int]], frame: Frame,
) -> tuple[list[str], list[Box], list[int], list[tuple[int, int]]]:
    """The page's words, boxes, first characters and engine lines after composing its
    spacing accents (the same lists when there is none to compose)."""
    chars = _CharBoxes(handle, words, starts, frame)
    composed = compose_accents(words, boxes, lines, chars)
    if composed is None:
        return words, boxes, starts, lines
    result.composed += composed.count
    return (composed.words, composed.boxes, [starts[k] for k in composed.origin],
            composed.runs)


def _read_text_native(
    native: ModuleType, handle: ctypes.c_void_p, count: int, frame: Frame, result: PageText,
    settings: ParseSettings,
) -> None:
    """`_read_text` in one call to the compiled core, spacing accents composed there too."""
    page = result.page
    chars, garbage, composed, items, bad, junk, infos = native.read_text(
        handle.value, count, frame[:4], frame[4], page.width, page.height,
        settings.compose_accents)
    result.chars += chars
    result.garbage += garbage
    result.composed += composed
    result.bad_boxes += bad
    result.letterless = junk
    result.lines.extend([Line(*line) for line in items])
    result.line_infos = infos


class _CharBoxes:
    """Display boxes of each character of a word, read only for words holding an accent."""

    def __init__(self, handle: ctypes.c_void_p, words: list[str], starts: list[int],
                 frame: Frame) -> None:
        self.handle, self.words, self.starts, self.frame = handle, words, starts, frame

    def __call__(self, i: int) -> list[Box]:
        n, start = len(self.words[i]), self.starts[i]
        store = (ctypes.c_float * (4 * n))()
        for k in range(n):
            _LOOSE_BOX(self.handle, start + k, ctypes.byref(store, 16 * k))
        corners = list(store)
        return [
            to_display(self.frame, min(a, c), min(b, d), max(a, c), max(b, d))
            for a, b, c, d in zip(*[iter(corners)] * 4, strict=True)
        ]


def _display_boxes(corners: Iterator[tuple[Any, ...]], frame: Frame) -> list[Box]:
    """Display boxes of the words from the loose boxes (left, top, right, bottom) of their
    first and last characters, 8 floats per word; the transform is inlined for upright pages.
    """
    left, _, _, top, quarter = frame
    if quarter == 0:
        return [
            (
                (a if a < e else e) - left,
                top - (b if b > f else f),
                (c if c > g else g) - left,
                top - (d if d < h else h),
            )
            for a, b, c, d, e, f, g, h in corners
        ]
    return [
        to_display(frame, min(a, e), min(d, h), max(c, g), max(b, f))
        for a, b, c, d, e, f, g, h in corners
    ]


def _add_lines(
    handle: ctypes.c_void_p,
    result: PageText,
    words: list[str],
    boxes: list[Box],
    starts: list[int],
    lines: list[tuple[int, int]],
    quarter: int,
) -> None:
    """Append the engine lines, each split where the geometry shows several lines.

    A line holding a box off the page or not finite has its boxes clamped and the non-finite
    ones dropped; the page-wide check spares that per line on ordinary pages. Direction and
    font size are read once per line, from its first character. The size is the Tf size
    scaled by the character's matrix: producers that set `Tf 1` and scale with the text
    matrix are common, and their nominal size says nothing.
    """
    width, height = result.page.width, result.page.height
    x0, y0, x1, y1 = zip(*boxes, strict=True)
    clamp = not (
        math.isfinite(sum(x0) + sum(y0) + sum(x1) + sum(y1))
        and min(x0) >= 0.0
        and min(y0) >= 0.0
        and max(x1) <= width
        and max(y1) <= height
    )
    matrix = (ctypes.c_float * 6)()
    matrix_ref = ctypes.byref(matrix)
    append = result.lines.append
    for first, end in lines:
        line_words, line_boxes = words[first:end], boxes[first:end]
        if clamp:
            kept = _clamped(line_words, line_boxes, width, height)
            if kept is not None:
                result.bad_boxes += len(line_words) - len(kept[0])
                line_words, line_boxes = kept
                if not line_boxes:
                    continue
        char = starts[first]
        angle = _CHAR_ANGLE(handle, char)
        if angle == 0.0:
            direction = quarter
        else:
            turns = round(angle / _QUARTER) if math.isfinite(angle) and angle >= 0 else 0
            direction = (turns + quarter) % 4
        size = _FONT_SIZE(handle, char)
        bold = font_is_bold(handle, char)
        if _MATRIX(handle, char, matrix_ref):
            a, b, c, d, _, _ = matrix
            size *= math.sqrt(abs(a * d - b * c))
        if not (math.isfinite(size) and 0.0 < size < 10_000.0):
            box = line_boxes[0]
            size = box[3] - box[1] if direction % 2 == 0 else box[2] - box[0]
        spans = line_spans(line_boxes, size, direction)
        if len(spans) == 1:
            append(Line(line_words, line_boxes, [size] * len(line_words), direction, -1, bold))
            continue
        for lo, hi in spans:
            append(Line(line_words[lo:hi], line_boxes[lo:hi], [size] * (hi - lo), direction, -1,
                        bold))


def font_is_bold(handle: ctypes.c_void_p, char: int) -> bool:
    """The character's font is bold: its name says so, or names no other face and its
    weight is 600 or more."""
    name = ctypes.create_string_buffer(128)
    if _FONT_INFO(handle, char, name, 128, ctypes.byref(ctypes.c_int())) > 0:
        text = name.value.decode("latin-1").lower()
        if _BOLD_NAME.search(text):
            return True
        if _OTHER_NAME.search(text):
            return False
    return bool(_FONT_WEIGHT(handle, char) >= 600)


def _clamped(
    words: list[str], boxes: list[Box], width: float, height: float
) -> tuple[list[str], list[Box]] | None:
    """None when the line's boxes lie on the page, else its words and clamped boxes with
    the non-finite ones dropped."""
    x0, y0, x1, y1 = zip(*boxes, strict=True)
    if (min(x0) >= 0.0 and min(y0) >= 0.0 and max(x1) <= width and max(y1) <= height
            and all(map(math.isfinite, x0 + y0 + x1 + y1))):
        return None
    kept = [(w, clean_box(box, width, height)) for w, box in zip(words, boxes, strict=True)]
    return [w for w, box in kept if box is not None], [box for _, box in kept if box is not None]
