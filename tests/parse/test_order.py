"""Reading order on generated one-, two- and three-column pages."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from loralay_build.parse import ParseSettings, parse_pdf

from .pdfgen import columns_pdf


def similarity(a: list[str], b: list[str]) -> float:
    return difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio()


@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber"])
@pytest.mark.parametrize("ncols", [1, 2, 3])
def test_columns_read_in_order(tmp_path: Path, backend: str, ncols: int) -> None:
    path = tmp_path / f"c{ncols}.pdf"
    expected = columns_pdf(path, ncols)
    doc = parse_pdf(path, backend)
    assert similarity(doc.words, expected) >= 0.98
    # Block ids never go back: a block is read whole.
    assert doc.block_ids == sorted(doc.block_ids)


def test_order_is_deterministic(tmp_path: Path) -> None:
    path = tmp_path / "c2.pdf"
    columns_pdf(path, 2, seed=7)
    first, second = parse_pdf(path), parse_pdf(path)
    assert first.words == second.words and first.block_ids == second.block_ids


def test_reading_order_can_be_switched_off(tmp_path: Path) -> None:
    path = tmp_path / "c2.pdf"
    expected = columns_pdf(path, 2, seed=3)
    doc = parse_pdf(path, settings=ParseSettings(reading_order=False))
    assert sorted(doc.words) == sorted(expected)


@pytest.mark.parametrize("heading_y", [113, 160])
def test_title_above_a_left_heading_is_read_first(tmp_path: Path, heading_y: int) -> None:
    """A centred title and a narrow left-aligned heading below it, touching it or after a
    gap, are not two columns."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "title.pdf"
    c = canvas.Canvas(str(path), pagesize=(612, 792))
    c.setFont("Helvetica-Bold", 16)
    c.drawCentredString(306, 792 - 79, "A study of graph neural networks")
    c.setFont("Helvetica", 11)
    c.drawCentredString(306, 792 - 97, "Ada Lovelace")
    c.setFont("Helvetica-Bold", 11)
    c.drawString(72, 792 - heading_y, "Abstract")
    c.setFont("Helvetica", 10)
    for k in range(4):
        c.drawString(72, 792 - heading_y - 28 - 12 * k, f"abstract line {k} says what was found")
    c.setFont("Helvetica-Bold", 11)
    c.drawString(72, 792 - 260, "1 Introduction")
    c.setFont("Helvetica", 10)
    for k in range(20):
        c.drawString(72, 792 - 276 - 12 * k, f"body line {k} of the introduction, one column")
    c.showPage()
    c.save()
    doc = parse_pdf(path)
    words = doc.words
    if heading_y == 160:  # a gap between them: the title and the heading are separate blocks
        assert len({doc.block_ids[0], doc.block_ids[8], doc.block_ids[words.index("body")]}) == 3
    assert words[:9] == ["A", "study", "of", "graph", "neural", "networks", "Ada", "Lovelace",
                         "Abstract"]
    assert words.index("Introduction") < words.index("body")
