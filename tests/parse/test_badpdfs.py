"""Hostile files: each ends as a Document or a Reject with the expected reason.

Only files safe in-process run here: the decompression bombs (C01, C02) and the files that
hang pdfminer forever (B03, B04, C06, F02 with pdfplumber) belong to the isolation tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loralay_build.errors import Reason, Reject
from loralay_build.parse import ParseSettings, parse_pdf

BAD = Path(__file__).resolve().parents[1] / "fixtures" / "badpdfs"
OK = {"A00", "A06", "A08", "C03", "C07", "D02", "D03"}
EXPECTED: dict[str, set[Reason | None]] = {
    **{name: {None} for name in OK},
    "A01": {Reason.CORRUPTED},
    "A02": {Reason.CORRUPTED},
    "A03": {Reason.CORRUPTED},
    "A04": {Reason.CORRUPTED},
    "A05": {None, Reason.CORRUPTED},
    "A07": {Reason.CORRUPTED},
    "A09": {None, Reason.CORRUPTED},
    "A10": {None, Reason.CORRUPTED, Reason.NO_TEXT_LAYER},
    "B01": {None, Reason.CORRUPTED},
    "B02": {None, Reason.CORRUPTED},
    "B03": {None, Reason.CORRUPTED, Reason.NO_TEXT_LAYER},
    "B04": {None, Reason.CORRUPTED},
    "B05": {None, Reason.CORRUPTED},
    "B06": {None, Reason.CORRUPTED},
    "B07": {None, Reason.CORRUPTED},
    "B08": {None, Reason.CORRUPTED},
    "B09": {None, Reason.CORRUPTED, Reason.NO_TEXT_LAYER},
    "B10": {None, Reason.CORRUPTED},
    "C04": {None},
    "C05": {Reason.TOO_LARGE},
    "C06": {None, Reason.CORRUPTED},
    "D01": {Reason.ENCRYPTED},
    "D04": {Reason.ENCRYPTED},
    "E01": {Reason.NEEDS_OCR},  # a scanned page: read with --ocr
    "E02": {None, Reason.NO_TEXT_LAYER},
    "E03": {None, Reason.NO_TEXT_LAYER},
    "F01": {Reason.CORRUPTED, Reason.NO_TEXT_LAYER, None},
    "F02": {Reason.CORRUPTED},
}
UNSAFE = {"pdfium": set(), "pdfplumber": {"B03", "B04", "C06", "F02", "C04", "C05"}}


def cases() -> list[tuple[str, str]]:
    return [
        (backend, code)
        for backend in ("pdfium", "pdfplumber")
        for code in sorted(EXPECTED)
        if code not in UNSAFE[backend]
    ]


def file_of(code: str) -> Path:
    (path,) = BAD.glob(f"{code}_*.pdf")
    return path


@pytest.mark.parametrize(("backend", "code"), cases())
def test_hostile_file_outcome(backend: str, code: str) -> None:
    settings = ParseSettings(max_pages=300)
    try:
        doc = parse_pdf(file_of(code), backend, settings)
    except Reject as exc:
        assert exc.reason in EXPECTED[code], exc
        if exc.reason is Reason.CORRUPTED:
            assert exc.detail
        return
    assert None in EXPECTED[code]
    assert len(doc) > 0 and len(doc.pages) >= 1
    for box, page in zip(doc.boxes, doc.word_pages, strict=True):
        size = doc.pages[page]
        assert 0 <= box[0] <= box[2] <= size.width and 0 <= box[1] <= box[3] <= size.height
    if code in OK:
        assert doc.words == ["Hello", "abstract", "body", "text"]


def test_page_cap_rejects_before_reading_pages() -> None:
    with pytest.raises(Reject) as info:
        parse_pdf(file_of("C05"), settings=ParseSettings(max_pages=10))
    assert info.value.reason is Reason.TOO_LARGE


def test_three_thousand_pages_under_a_high_cap() -> None:
    doc = parse_pdf(file_of("C05"), settings=ParseSettings(max_pages=5000))
    assert len(doc.pages) == 3000 and [p.index for p in doc.pages] == list(range(3000))
