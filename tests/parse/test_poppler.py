"""poppler backend: same Document contract; skipped when `pdftotext` is not installed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loralay_build.errors import Reason, Reject
from loralay_build.parse import parse_pdf
from tests.helpers.pdfgen import columns_pdf, rotated_pdf

pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext")
BAD = Path(__file__).resolve().parents[1] / "fixtures" / "badpdfs"


def test_poppler_agrees_with_pdfium_on_two_columns(tmp_path: Path) -> None:
    path = tmp_path / "c2.pdf"
    expected = columns_pdf(path, 2)
    doc = parse_pdf(path, "poppler")
    assert sorted(doc.words) == sorted(expected)
    assert doc.words == parse_pdf(path, "pdfium").words


@pytest.mark.parametrize("rotation", [90, 270])
def test_poppler_rotated_page_size_is_displayed(tmp_path: Path, rotation: int) -> None:
    path = tmp_path / "r.pdf"
    expected = rotated_pdf(path, rotation)
    doc = parse_pdf(path, "poppler")
    assert doc.words == expected
    page = doc.pages[0]
    assert (page.width, page.height) == pytest.approx((612, 792), abs=0.5)
    assert all(b[2] <= page.width and b[3] <= page.height for b in doc.boxes)


@pytest.mark.parametrize(("code", "reason"), [("D01", Reason.ENCRYPTED), ("A03", Reason.CORRUPTED)])
def test_poppler_rejects(code: str, reason: Reason) -> None:
    (path,) = BAD.glob(f"{code}_*.pdf")
    with pytest.raises(Reject) as info:
        parse_pdf(path, "poppler")
    assert info.value.reason is reason
