"""Accent composition: spacing accents drawn over letters come out as accented letters."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from loralay_build.errors import Reject
from loralay_build.parse import ParseSettings, parse_pdf
from loralay_build.parse.accents import ACCENT, COMBINING, compose_accents
from tests.helpers.pdfgen import ACCENT_FONT, accent_pdf

pytestmark = pytest.mark.skipif(not ACCENT_FONT.is_file(), reason="DejaVu Sans is absent")

BACKENDS = ["pdfium", "pdfplumber", "poppler"]
REALDOCS = Path(__file__).resolve().parents[3] / "shared" / "realdocs"
REALDOCS = REALDOCS if REALDOCS.is_dir() else Path("/work/shared/realdocs")
SPLIT_BY_ACCENTS = ["fr-taln-2002-poster-007", "en-acl-2020.acl-main.447", "en-arxiv-1111.2011v2"]
OFF = ParseSettings(compose_accents=False)


def _accented(base: str, accent: str) -> str:
    return unicodedata.normalize("NFC", base + COMBINING[accent])


@pytest.fixture(scope="module")
def every_accent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("accents") / "accents.pdf"
    accent_pdf(path, [[("me", a, "moire"), ("TE", a, "XT")] for a in COMBINING])
    return path


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_accent_composes_over_lower_and_upper_case(every_accent: Path, backend: str) -> None:
    doc = parse_pdf(every_accent, backend)
    expected = [
        w
        for a in COMBINING
        for w in ("m" + _accented("e", a) + "moire", "T" + _accented("E", a) + "XT")
    ]
    # poppler composes most accents itself, into decomposed form: published NFC all the same.
    assert doc.words == expected
    assert not any(ACCENT.search(w) for w in doc.words)


@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber"])
def test_compositions_are_counted_and_can_be_turned_off(every_accent: Path, backend: str) -> None:
    assert parse_pdf(every_accent, backend).composed == 2 * len(COMBINING)
    raw = parse_pdf(every_accent, backend, OFF)
    assert raw.composed == 0
    assert sum(bool(ACCENT.search(w)) for w in raw.words) == 2 * len(COMBINING)


@pytest.mark.parametrize("backend", BACKENDS)
def test_composed_word_box_is_the_union_of_its_pieces(every_accent: Path, backend: str) -> None:
    doc = parse_pdf(every_accent, backend)
    raw = parse_pdf(every_accent, backend, OFF)
    x0, y0, x1, y1 = doc.boxes[0]
    pieces = [b for w, b in zip(raw.words, raw.boxes, strict=True) if b[1] < y1 and b[3] > y0]
    pieces = [b for b in pieces if b[0] < doc.boxes[1][0]]
    assert x0 == pytest.approx(min(b[0] for b in pieces), abs=0.01)
    assert x1 == pytest.approx(max(b[2] for b in pieces), abs=0.01)


@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber"])
def test_accent_text_that_is_no_accent_stays(tmp_path: Path, backend: str) -> None:
    """A prime after a maths symbol, "´" as an apostrophe or alone between words overlap no
    letter; a composed word stays apart from the next word."""
    path = tmp_path / "text.pdf"
    accent_pdf(
        path,
        [
            [("f\u00b4(x)", "", ""), ("=", "", ""), ("2x", "", "")],
            [("children\u00b4s", "", ""), ("word", "", ""), ("\u00b4", "", ""), ("next", "", "")],
            [("cafe", "\u00b4", ""), ("noir", "", ""), ("a", "\u0060", ""), ("table", "", "")],
        ],
    )
    doc = parse_pdf(path, backend)
    assert doc.words == [
        "f\u00b4(x)", "=", "2x", "children\u00b4s", "word", "\u00b4", "next",
        "caf\u00e9", "noir", "\u00e0", "table",
    ]
    assert doc.composed == 2


def test_words_without_accents_are_left_alone() -> None:
    words = ["plain", "words", "only"]
    boxes = [(0.0, 0.0, 10.0, 10.0), (12.0, 0.0, 20.0, 10.0), (22.0, 0.0, 30.0, 10.0)]
    assert compose_accents(words, boxes, [(0, 3)]) is None


def test_standalone_accent_rejoins_the_word_it_split() -> None:
    """Engines emit "Resum ´ e": the accent goes on the "e" of "Resum", the halves rejoin."""
    words = ["R\u00e9sum", "\u00b4", "e", "next"]
    words[0] = "Resum"
    boxes = [(0.0, 0.0, 50.0, 12.0), (11.0, 0.0, 17.0, 12.0), (50.0, 0.0, 56.0, 12.0),
             (60.0, 0.0, 80.0, 12.0)]
    done = compose_accents(words, boxes, [(0, 4)])
    assert done is not None
    assert done.words == ["R\u00e9sume", "next"]
    assert done.boxes[0] == (0.0, 0.0, 56.0, 12.0)
    assert done.origin == [0, 3]
    assert done.runs == [(0, 2)]
    assert done.count == 1


def test_a_page_opening_with_an_accent_over_its_own_letter() -> None:
    """"´Ecole" as a page's first word: the accent is composed away at the word's start with
    no word before it to rejoin."""
    boxes = [(0.0, 4.0, 30.0, 14.0), (40.0, 4.0, 45.0, 14.0)]
    chars = {0: [(0.0, 0.0, 5.0, 4.0), (0.0, 4.0, 6.0, 14.0), *[(6.0 * k, 4.0, 6.0 * k + 6.0, 14.0)
                                                              for k in range(1, 5)]],
             1: [boxes[1]]}
    done = compose_accents(["\u00b4Ecole", "x"], boxes, [(0, 2)], chars.__getitem__)
    assert done is not None
    assert done.words == ["\u00c9cole", "x"]
    assert done.count == 1


def _realdoc(name: str, settings: ParseSettings | None = None) -> list[str] | None:
    try:
        return parse_pdf(REALDOCS / "pdf" / f"{name}.pdf", settings=settings).words
    except Reject:
        return None


@pytest.mark.skipif(not REALDOCS.is_dir(), reason="realdocs folder absent")
@pytest.mark.parametrize("name", SPLIT_BY_ACCENTS)
def test_realdocs_split_by_accents_come_out_whole(name: str) -> None:
    raw, words = _realdoc(name, OFF), _realdoc(name)
    assert raw is not None and words is not None
    assert sum(bool(ACCENT.search(w)) for w in raw) >= 20
    assert not [w for w in words if ACCENT.search(w)]
    assert len(words) < len(raw)


@pytest.mark.skipif(not REALDOCS.is_dir(), reason="realdocs folder absent")
def test_realdocs_without_spacing_accents_are_unchanged() -> None:
    checked = 0
    for path in sorted((REALDOCS / "pdf").glob("*.pdf")):
        raw = _realdoc(path.stem, OFF)
        if raw is None or any(ACCENT.search(w) for w in raw):
            continue
        assert _realdoc(path.stem) == raw, path.stem
        checked += 1
    assert checked >= 30
