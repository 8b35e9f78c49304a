"""The compiled core and the Python loop of the PDFium backend give identical output.

Both paths run on the same files in one process (`PdfiumBackend(native=False)` forces the
Python loop) and every page must match: words, boxes, sizes, directions, line breaks and the
counts. A scripted text page served through C callbacks drives both paths through the cases
real files rarely show (characters missing from the page text, lone surrogates, hyphen marks,
non-finite boxes, odd angles and sizes).
"""

from __future__ import annotations

import ctypes
import gc
import math
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pypdfium2.raw as raw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from loralay_build.native import native_module
from loralay_build.parse import ParseSettings, api, order, parse_pdf, pdfium
from loralay_build.parse.backend import Line, PageText, get_backend
from loralay_build.records import Document, Page
from tests.helpers.pdfgen import ACCENT_FONT, PAGE_H, PAGE_W, accent_pdf, rotated_pdf

NATIVE = native_module()
pytestmark = pytest.mark.skipif(NATIVE is None, reason="the compiled core is not built")

BAD = Path(__file__).resolve().parents[1] / "fixtures" / "badpdfs"
BOMBS = {"C01", "C02"}  # decompression bombs: the isolation tests' business
REALDOCS = Path(__file__).resolve().parents[3] / "shared" / "realdocs" / "pdf"
REALDOCS = REALDOCS if REALDOCS.is_dir() else Path("/work/shared/realdocs/pdf")
SETTINGS = ParseSettings(max_pages=300)


def _check_letterless(page: PageText) -> None:
    """The core's count of letterless word characters is the one `parse_pdf` computes."""
    if page.letterless >= 0:
        python = sum(len(word) for line in page.lines for word in line.words
                     if not any(c.isalnum() for c in word) and len(set(word)) > 1)
        assert page.letterless == python


def _columns(doc: Document) -> tuple[list[Any], ...]:
    return doc.words, doc.boxes, doc.font_sizes, doc.word_pages, doc.line_ids, doc.block_ids


def _order_same(
    lines: list[Line], width: float, height: float, infos: bytes | None = None
) -> None:
    """The core orders the lines exactly as the Python code (same blocks, same lines), with
    and without the facts it made for them (`infos`), and appends them to a document as the
    Python code does."""
    native = order.order_page(lines, width, height, infos)
    python = order.order_page_python(lines, width, height)
    assert [[id(line) for line in block] for block in native] == [
        [id(line) for line in block] for block in python]
    if infos is not None:
        read = order.order_page(lines, width, height)
        assert [[id(line) for line in block] for block in read] == [
            [id(line) for line in block] for block in python]
    assert NATIVE is not None
    ours, theirs = Document(pages=[]), Document(pages=[])
    for doc in (ours, theirs):  # earlier pages already appended
        doc.words.append("x")
        doc.line_ids.append(4)
    ids = NATIVE.extend_document(native, 3, 5, 7, _columns(ours))
    assert ids == api._extend(theirs, python, 3, 5, 7)
    assert _columns(ours) == _columns(theirs)


def _orders_same(path: Path, backend: str = "pdfium") -> None:
    """Every page of the file is ordered alike by both paths (nothing to order if rejected)."""
    try:
        pages = list(get_backend(backend).pages(path, SETTINGS))
    except Exception:
        return
    for page in pages:
        assert backend == "pdfium" or page.line_infos is None
        _order_same(page.lines, page.page.width, page.page.height, page.line_infos)


def _pages(path: Path, native: bool, parse: ParseSettings = SETTINGS) -> str:
    """Everything the backend yields for the file, or the error it raised, as text."""
    try:
        pages = list(pdfium.PdfiumBackend(native=native).pages(path, parse))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    for page in pages:
        _check_letterless(page)
    return repr([(p.page, p.chars, p.garbage, p.bad_boxes, p.composed,
                  [(line.words, line.boxes, line.sizes, line.direction, line.group)
                   for line in p.lines]) for p in pages])


def _same(path: Path, parse: ParseSettings = SETTINGS) -> None:
    assert _pages(path, True, parse) == _pages(path, False, parse), path.name


def test_the_python_path_is_the_one_forced() -> None:
    assert pdfium.PdfiumBackend(native=False).native is None
    assert pdfium.PdfiumBackend().native is NATIVE


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
@pytest.mark.parametrize("angle", [0, 45, 90, 180, 270])
def test_rotated_pages_and_text(tmp_path: Path, rotation: int, angle: int) -> None:
    path = tmp_path / "r.pdf"
    rotated_pdf(path, rotation, angle)
    _same(path)


def test_the_core_makes_cheap_boxes(tmp_path: Path) -> None:
    """Box tuples hold floats only: the core leaves them untracked, so the collection that
    follows a parse does not scan every word's box, and a coordinate equal to the previous
    word's of the line (its baseline, mostly) is that word's float, not a new one."""
    path = tmp_path / "r.pdf"
    rotated_pdf(path, 0, 0)
    doc = parse_pdf(path, settings=SETTINGS)
    assert doc.boxes and not any(map(gc.is_tracked, doc.boxes))
    pairs = [(a, b) for (a, b), (line, next_line) in zip(pairwise(doc.boxes),
                                                         pairwise(doc.line_ids), strict=True)
             if line == next_line and a[1] == b[1]]
    assert pairs and all(a[1] is b[1] for a, b in pairs)


def test_line_facts_that_do_not_fit_the_lines_are_read_from_the_lines(tmp_path: Path) -> None:
    """Facts of another length, or not valid (NaN boxes, no words), are not trusted."""
    path = tmp_path / "r.pdf"
    rotated_pdf(path, 90, 0)
    (page,) = pdfium.PdfiumBackend().pages(path, SETTINGS)
    assert page.line_infos and len(page.lines) > 1
    python = order.order_page_python(page.lines, page.page.width, page.page.height)
    size = len(page.line_infos) // len(page.lines)
    for infos in (page.line_infos[:-size], page.line_infos + page.line_infos[:size],
                  b"\xff" * len(page.line_infos), bytes(len(page.line_infos))):
        blocks = order.order_page(page.lines, page.page.width, page.page.height, infos)
        assert blocks == python


def test_the_words_nfc_must_look_at_are_the_non_ascii_ones() -> None:
    assert NATIVE is not None
    assert NATIVE.non_ascii(["a", "\u00e9", "b-", "e\u0301", "\U0001d400", "\x7f"]) == [
        "\u00e9", "e\u0301", "\U0001d400"]
    with pytest.raises(TypeError):
        NATIVE.non_ascii(["a", b"b"])


@pytest.mark.skipif(not ACCENT_FONT.is_file(), reason="DejaVu Sans is absent")
@pytest.mark.parametrize("compose", [True, False])
def test_accents_ligatures_non_bmp_and_hyphens(tmp_path: Path, compose: bool) -> None:
    accents = tmp_path / "accents.pdf"
    accent_pdf(accents, [[("me", "´", "moire"), ("TE", "ˇ", "XT"), ("Resum", "´", "e")]] * 3)
    _same(accents, ParseSettings(compose_accents=compose))
    pdfmetrics.registerFont(TTFont("NativeSans", str(ACCENT_FONT)))
    mixed = tmp_path / "mixed.pdf"
    c = canvas.Canvas(str(mixed), pagesize=(PAGE_W, PAGE_H))
    c.setFont("NativeSans", 11)
    lines = ["ﬁnance ﬂow eﬀect ﬃce", "math 𝐀𝐁𝐂 𝔸 and 😀 emoji", "an inter-",
             "national word, é ü ß Å", "private \ue000\ue001 use", "ʼapostrophe ´ alone"]
    for j, line in enumerate(lines):
        c.drawString(72, PAGE_H - 100 - 16 * j, line)
    c.setFont("NativeSans", 30)
    c.drawString(72, 200, "Large 𝐗 title")
    c.showPage()
    c.save()
    _same(mixed, ParseSettings(compose_accents=compose))


@pytest.mark.parametrize("path", sorted(p for p in BAD.glob("*.pdf") if p.name[:3] not in BOMBS),
                         ids=lambda p: p.name[:3])
def test_hostile_pdfs(path: Path) -> None:
    _same(path)
    _orders_same(path)


@pytest.mark.skipif(not REALDOCS.is_dir(), reason="../shared/realdocs is absent")
def test_realdocs_pages_and_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    for path in sorted(REALDOCS.glob("*.pdf")):
        _same(path)
        _orders_same(path)
        _orders_same(path, "poppler")  # engine blocks: lines ordered as units
    for path in sorted(REALDOCS.glob("*.pdf"))[:12]:
        native = parse_pdf(path, settings=SETTINGS)
        with monkeypatch.context() as patch:
            patch.setattr(pdfium, "_NATIVE", None)
            patch.setenv("LORALAY_NATIVE", "0")
            python = parse_pdf(path, settings=SETTINGS)
        assert repr(native) == repr(python), path.name


# A scripted text page: PDFium characters (UTF-16 units), the ones `GetText` leaves out, and
# per character its loose box (None: the call fails), angle, size and matrix.


@dataclass
class FakePage:
    units: list[int]
    omitted: set[int]
    boxes: list[tuple[float, float, float, float] | None]
    angles: list[float]
    sizes: list[float]
    matrices: list[tuple[float, float, float, float] | None]


_FAKE: list[FakePage] = []
_RECT_P = ctypes.POINTER(raw.FS_RECTF)
_MATRIX_P = ctypes.POINTER(raw.FS_MATRIX)


def _page() -> FakePage:
    return _FAKE[0]


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,  # type: ignore[untyped-decorator]
                  ctypes.POINTER(ctypes.c_ushort))
def _get_text(_tp: int, start: int, count: int, out: ctypes.Array[ctypes.c_ushort]) -> int:
    page = _page()
    kept = [u for i, u in enumerate(page.units[start:start + count]) if i not in page.omitted]
    for k, unit in enumerate(kept):
        out[k] = unit
    out[len(kept)] = 0
    return len(kept) + 1


@ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_void_p, ctypes.c_int)  # type: ignore[untyped-decorator]
def _get_unicode(_tp: int, index: int) -> int:
    units = _page().units
    return units[index] if 0 <= index < len(units) else 0


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)  # type: ignore[untyped-decorator]
def _char_index(_tp: int, text_index: int) -> int:
    page = _page()
    present = [i for i in range(len(page.units)) if i not in page.omitted]
    return present[text_index] if 0 <= text_index < len(present) else -1


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, _RECT_P)  # type: ignore[untyped-decorator]
def _loose_box(_tp: int, index: int, rect: ctypes._Pointer[raw.FS_RECTF]) -> int:
    boxes = _page().boxes
    box = boxes[index] if 0 <= index < len(boxes) else None
    if box is None:
        return 0
    rect[0].left, rect[0].top, rect[0].right, rect[0].bottom = box
    return 1


@ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_void_p, ctypes.c_int)  # type: ignore[untyped-decorator]
def _char_angle(_tp: int, index: int) -> float:
    return _page().angles[index]


@ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_int)  # type: ignore[untyped-decorator]
def _font_size(_tp: int, index: int) -> float:
    return _page().sizes[index]


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, _MATRIX_P)  # type: ignore[untyped-decorator]
def _matrix(_tp: int, index: int, out: ctypes._Pointer[raw.FS_MATRIX]) -> int:
    matrix = _page().matrices[index]
    if matrix is None:
        return 0
    out[0].a, out[0].b, out[0].c, out[0].d = matrix
    out[0].e = out[0].f = 0.0
    return 1


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)  # type: ignore[untyped-decorator]
def _font_weight(_tp: int, index: int) -> int:
    return 700 if index % 2 else 400  # both paths must read a line's first character


@ctypes.CFUNCTYPE(ctypes.c_ulong, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,  # type: ignore[untyped-decorator]
                  ctypes.c_ulong, ctypes.c_void_p)
def _font_info(_tp: int, _index: int, _buffer: int, _size: int, _flags: int) -> int:
    return 0  # no name: the weight decides


_CALLBACKS = (_get_text, _get_unicode, _char_index, _loose_box, _char_angle, _font_size, _matrix,
              _font_weight, _font_info)
_RESTYPES = (ctypes.c_int, ctypes.c_uint, ctypes.c_int, ctypes.c_int, ctypes.c_float,
             ctypes.c_double, ctypes.c_int, ctypes.c_int, ctypes.c_ulong)
_PYTHON_NAMES = ("_GET_TEXT", "_UNICODE", "_CHAR_INDEX", "_LOOSE_BOX", "_CHAR_ANGLE",
                 "_FONT_SIZE", "_MATRIX", "_FONT_WEIGHT", "_FONT_INFO")


@pytest.fixture(scope="module")
def scripted() -> Iterator[None]:
    """Both paths call the scripted page's functions; PDFium's are bound back afterwards."""
    assert NATIVE is not None
    patch = pytest.MonkeyPatch()
    for name, restype, callback in zip(_PYTHON_NAMES, _RESTYPES, _CALLBACKS, strict=True):
        patch.setattr(pdfium, name, pdfium._function(restype, callback))
    patch.setattr(raw, "FPDFText_CountChars", lambda _tp: len(_page().units))
    NATIVE.bind(*(pdfium._address(c) for c in _CALLBACKS))
    try:
        yield
    finally:
        patch.undo()
        pdfium._bound_native()


def _read(page: FakePage, native: bool, quarter: int, compose: bool) -> str:
    _FAKE[:] = [page]
    frame = (10.0, 20.0, 410.0, 620.0, quarter)
    width, height = (600.0, 400.0) if quarter % 2 else (400.0, 600.0)
    result = PageText(Page(0, width, height, quarter * 90))
    try:
        pdfium._read_text(ctypes.c_void_p(1), frame, result, ParseSettings(compose_accents=compose),
                          NATIVE if native else None)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    _check_letterless(result)
    _order_same(result.lines, result.page.width, result.page.height, result.line_infos)
    return repr((result.chars, result.garbage, result.bad_boxes, result.composed,
                 [(line.words, line.boxes, line.sizes, line.direction) for line in result.lines]))


_UNITS = st.sampled_from(
    [*map(ord, "abcdeé"), *map(ord, "ab12"), 0x20, 0x20, 0x20, 0x0a, 0x0d, 0xa0, 0x2028,
     0x3000, 0x1c, 0xfffe, 0x02, 0x00, 0x01, 0x07, 0x7f, 0xd835, 0xdc00, 0xfffd, 0xe000, 0xb4,
     0x2c7, 0x60, 0x131, 0xfb01, 0x3b1]
)
_COORD = st.one_of(st.floats(-50, 700, width=32), st.sampled_from([math.nan, math.inf, -1e30]))
_BOX = st.one_of(
    st.none(),
    st.tuples(st.floats(0, 380, width=32), st.floats(40, 600, width=32), st.floats(1, 20, width=32),
              st.floats(1, 20, width=32)).map(lambda t: (t[0], t[1], t[0] + t[2], t[1] - t[3])),
    st.tuples(_COORD, _COORD, _COORD, _COORD),
)
_ANGLE = st.one_of(st.just(0.0), st.sampled_from([math.pi / 4, 3 * math.pi / 4, math.pi / 2,
                                                  math.pi, -1.0, math.nan, 5.5]),
                   st.floats(0, 6.25, width=32))
_SIZE = st.one_of(st.floats(0.5, 40), st.sampled_from([0.0, -3.0, math.nan, 1e9, math.inf]))
_MATRIX = st.one_of(st.none(), st.tuples(*[st.floats(-3, 3, width=32)] * 4))


@st.composite
def fake_pages(draw: st.DrawFn) -> FakePage:
    n = draw(st.integers(1, 60))
    units = draw(st.lists(_UNITS, min_size=n, max_size=n))
    omitted = set(draw(st.lists(st.integers(0, n - 1), max_size=4)))
    if draw(st.booleans()):
        omitted = set()
    boxes = draw(st.lists(_BOX, min_size=n, max_size=n))
    angles = draw(st.lists(_ANGLE, min_size=n, max_size=n))
    sizes = draw(st.lists(_SIZE, min_size=n, max_size=n))
    matrices = draw(st.lists(_MATRIX, min_size=n, max_size=n))
    return FakePage(units, omitted, boxes, angles, sizes, matrices)


@pytest.mark.usefixtures("scripted")
@pytest.mark.parametrize("quarter", range(4))
def test_a_word_with_an_infinite_box_is_dropped_on_both_paths(quarter: int) -> None:
    """An inverted box with an infinite side passes a range test side by side (-inf is below
    every bound): each path must still see it is not finite and drop it."""
    page = FakePage([97] * 21 + [32] + [97] * 14 + [10, 97], set(),
                    [None] * 22 + [(10.0, 0.0, 0.0, math.inf)] + [None] * 14
                    + [(0.0, 40.0, 1.0, 39.0)],
                    [0.0] * 22 + [2.356194490192345] + [0.0] * 15, [1.0] * 38, [None] * 38)
    for native in (True, False):
        _FAKE[:] = [page]
        frame = (10.0, 20.0, 410.0, 620.0, quarter)
        width, height = (600.0, 400.0) if quarter % 2 else (400.0, 600.0)
        result = PageText(Page(0, width, height, quarter * 90))
        pdfium._read_text(ctypes.c_void_p(1), frame, result, ParseSettings(),
                          NATIVE if native else None)
        boxes = [box for line in result.lines for box in line.boxes]
        assert all(math.isfinite(v) for box in boxes for v in box), (native, result.lines)
    assert _read(page, True, quarter, False) == _read(page, False, quarter, False)


@pytest.mark.usefixtures("scripted")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=fake_pages(), quarter=st.integers(0, 3), compose=st.booleans())
def test_scripted_pages(page: FakePage, quarter: int, compose: bool) -> None:
    assert _read(page, True, quarter, compose) == _read(page, False, quarter, compose)


@pytest.mark.usefixtures("scripted")
def test_scripted_edge_cases() -> None:
    """Missing characters, a pair and lone surrogates, hyphen marks and controls, at once."""
    text = "ab\ufffecd\x02 \ud835\udc00x \udc00y\ud835 z\x07\n\r é´ end"
    units = [ord(c) for c in text]
    n = len(units)
    box = (20.0, 500.0, 30.0, 490.0)
    page = FakePage(units, {0, 5, n - 1}, [box] * n, [0.0] * n, [10.0] * n, [None] * n)
    for quarter in range(4):
        for compose in (True, False):
            native = _read(page, True, quarter, compose)
            assert native == _read(page, False, quarter, compose)
            assert "ab-" in native and "'cd-'" in native and "\ufffd\ufffdx" in native


# Pages for accent composition: letters on a line with a 6-point pitch (dotless i among
# them), spacing accents moved up to two letters away and raised, spaces, line breaks and
# hyphen marks, so that accents over letters, beside them and words split by an accent to
# rejoin are common.
_ACCENTS = [0xb4, 0x60, 0x2c7, 0xa8, 0xb8, 0x2dc]
_ACCENT_UNITS = st.sampled_from([*map(ord, "aeEio1"), 0x131, *_ACCENTS, *_ACCENTS, 0x20, 0x20,
                                 0x0a, 0xfffe])


@st.composite
def accent_pages(draw: st.DrawFn) -> FakePage:
    n = draw(st.integers(1, 40))
    units = draw(st.lists(_ACCENT_UNITS, min_size=n, max_size=n))
    boxes: list[tuple[float, float, float, float] | None] = []
    cursor = 20.0
    for unit in units:
        accent = unit in _ACCENTS
        x, width, top = cursor, 6.0, 500.0
        if accent:
            x += 6.0 * draw(st.integers(-2, 2)) + draw(st.floats(-3, 3, width=32))
            width = draw(st.floats(0.5, 6, width=32))
            top += draw(st.floats(-2, 8, width=32))
        # a space or an accent takes no room at times (TeX moves an accent back over its
        # letter): the letters on either side then touch
        cursor += draw(st.sampled_from([0.0, 6.0])) if unit in (0x20, 0x0a) or accent else 6.0
        boxes.append((x, top, x + width, top - 10.0))
    return FakePage(units, set(), boxes, [0.0] * n, [10.0] * n, [None] * n)


@pytest.mark.usefixtures("scripted")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=accent_pages(), quarter=st.integers(0, 3))
def test_scripted_accents_compose_alike(page: FakePage, quarter: int) -> None:
    assert _read(page, True, quarter, True) == _read(page, False, quarter, True)


def _typeset(text: str) -> FakePage:
    """A scripted line of `text`: each character 6 points after the last, but a spacing
    accent takes no room and a "~" (dropped) steps back over the last character, as TeX
    sets them."""
    units, boxes, cursor = [], [], 20.0
    for char in text:
        if char == "~":
            cursor -= 6.0
            continue
        accent = ord(char) in _ACCENTS
        units.append(ord(char))
        top = 508.0 if accent else 500.0
        boxes.append((cursor, top, cursor + 6.0, top - 10.0) if char != " " else None)
        cursor += 0.0 if accent else 6.0
    n = len(units)
    return FakePage(units, set(), boxes, [0.0] * n, [10.0] * n, [None] * n)


@pytest.mark.usefixtures("scripted")
@pytest.mark.parametrize(("text", "lines"), [
    ("\u00b4Ecole x", [["\u00c9cole", "x"]]),  # the page's first word opens with its accent
    ("Resum ~\u00b4 ~e", [["Resum\u00e9"]]),  # a stand-alone accent split the word
    ("Resum\u00b4 ~e", [["Resum\u00e9"]]),  # an accent ending the first half
    ("ab~\u00b4\ne", [["ab\u0301"], ["e"]]),  # a line break ends the word all the same
])
def test_scripted_accent_cases(text: str, lines: list[list[str]]) -> None:
    """Accents composed with the letter under them, the halves of a split word rejoined."""
    page = _typeset(text)
    assert _read(page, True, 0, True) == _read(page, False, 0, True)
    result = PageText(Page(0, 400.0, 600.0, 0))
    pdfium._read_text(ctypes.c_void_p(1), (10.0, 20.0, 410.0, 620.0, 0), result,
                      ParseSettings(), NATIVE)
    assert [line.words for line in result.lines] == lines


# Random pages of lines for the ordering: a layout of one to three columns of body lines
# (blocks, indents, footnote-sized lines low on the page, a large title), engine blocks and
# turned lines, plus scattered lines. Coordinates sit on a grid of 4 points, the body size
# is 10 and line pitches are whole points, so gaps equal to the column (8) and block (5)
# thresholds, equal keys and touching boxes are common.
_GRID = st.integers(0, 150).map(lambda k: k * 4.0)


def _line(draw: st.DrawFn, x0: float, x1: float, top: float, size: float) -> Line:
    cuts = sorted({x0, x1, *draw(st.lists(st.integers(int(x0), int(x1)).map(float), max_size=2))})
    boxes = [(a, top, b, top + size) for a, b in pairwise(cuts)] or [
        (x0, top, x1, top + size)]
    direction = draw(st.sampled_from([0] * 12 + [1, 2, 3]))
    group = draw(st.sampled_from([-1] * 6 + [0, 1, 2, 7]))
    return Line(["w"] * len(boxes), boxes, [size] * len(boxes), direction, group)


@st.composite
def line_pages(draw: st.DrawFn) -> list[Line]:
    lines = []
    columns = draw(st.integers(1, 3))
    width = 600.0 / columns
    pitch = draw(st.sampled_from([10.0, 12.0, 13.0, 14.0, 16.0]))
    for c in range(columns):
        left, y = c * width + draw(st.sampled_from([0.0, 4.0, 8.0])), draw(_GRID) / 4
        for _ in range(draw(st.integers(0, 25))):
            indent = draw(st.sampled_from([0.0, 0.0, 4.0, 8.0, 16.0]))
            right = c * width + width - draw(st.sampled_from([0.0, 8.0, 12.0, 16.0, 80.0]))
            size = draw(st.sampled_from([10.0] * 6 + [8.0, 6.0, 12.0, 24.0]))
            if left + indent < right:
                lines.append(_line(draw, left + indent, right, y, size))
            y += pitch * draw(st.sampled_from([1.0, 1.0, 1.0, 1.5, 2.0, 0.0]))
    for _ in range(draw(st.integers(0, 8))):
        x0, y0 = draw(_GRID), draw(_GRID)
        lines.append(_line(draw, x0, x0 + draw(st.sampled_from([4.0, 40.0, 120.0])), y0,
                           draw(st.sampled_from([6.0, 10.0, 30.0]))))
    return draw(st.permutations(lines))


@settings(max_examples=400, deadline=None)
@given(lines=line_pages(), width=st.sampled_from([600.0, 400.0, 612.0]))
def test_random_pages_are_ordered_alike(lines: list[Line], width: float) -> None:
    _order_same(lines, width, 600.0)


def test_lines_the_core_does_not_handle_go_to_python() -> None:
    """A non-finite box or an int size, a tuple for a list: the core declines (appending
    nothing) and Python orders, appends or raises."""
    assert NATIVE is not None
    ok = Line(["a"], [(10.0, 10.0, 20.0, 20.0)], [10.0])
    for odd in (Line(["b"], [(10.0, math.nan, 20.0, 20.0)], [10.0]),
                Line(["b"], [(10.0, 30.0, 20.0, 40.0)], [10]), Line([], [], [])):
        assert NATIVE.order_page([ok, odd], 100.0, 100.0, order.LIMITS) is None
    with pytest.raises(ValueError):
        order.order_page([ok, Line([], [], [])], 100.0, 100.0)
    doc = Document(pages=[])
    tuple_words = Line(["b"], [(1.0, 1.0, 2.0, 2.0)], [1.0])
    tuple_words.words = ("b",)  # type: ignore[assignment]
    for blocks in ([[ok], (ok,)], [[ok, tuple_words]],
                   [[Line(["a", "b"], [(1.0, 1.0, 2.0, 2.0)], [1.0, 1.0])]]):
        assert NATIVE.extend_document(blocks, 0, 0, 0, _columns(doc)) is None
    assert _columns(doc) == ([], [], [], [], [], [])


def _shards(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.parquet"))}


def test_builds_write_identical_shards_on_both_paths(tmp_path: Path) -> None:
    """`build-corpus local` over generated articles, once per path: the same Parquet bytes."""
    from tests.helpers.cli import run_cli_subprocess
    from tests.helpers.local import make_corpus, write_manifest

    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "docs.jsonl", make_corpus(docs, 4))
    shards = []
    for flag in ("1", "0"):
        out = tmp_path / f"out{flag}"
        done = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out), "--workers",
                                  "1", "--no-filter", env={"LORALAY_NATIVE": flag})
        assert done.returncode == 0, done.stderr
        shards.append(_shards(out))
    assert shards[0] and shards[0] == shards[1]


def test_version_names_the_active_path() -> None:
    from tests.helpers.cli import run_cli_subprocess

    assert "PDF core: native" in run_cli_subprocess("--version").stdout
    assert "PDF core: python" in run_cli_subprocess("--version", env={"LORALAY_NATIVE": "0"}).stdout
