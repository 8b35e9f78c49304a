"""Reading order on generated one-, two- and three-column pages."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from loralay_build.parse import ParseSettings, parse_pdf
from tests.helpers.pdfgen import columns_pdf

HEAD_WORDS = 66  # title (6 words) and abstract (60) of `columns_pdf`, before the columns


def similarity(a: list[str], b: list[str]) -> float:
    return difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio()


@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber"])
@pytest.mark.parametrize("ncols", [1, 2, 3])
def test_columns_read_in_order(tmp_path: Path, backend: str, ncols: int) -> None:
    path = tmp_path / f"c{ncols}.pdf"
    expected = columns_pdf(path, ncols)
    doc = parse_pdf(path, backend)
    assert similarity(doc.words, expected) >= 0.98
    # A body block never spans two columns (block ids come from a counter in reading order,
    # so their order alone proves nothing). The title and abstract are full-width blocks.
    head = {doc.block_ids[i] for i in range(HEAD_WORDS)}
    left = min(box[0] for box in doc.boxes)
    width = (max(box[2] for box in doc.boxes) - left) / ncols
    columns: dict[int, set[int]] = {}
    for box, block in zip(doc.boxes, doc.block_ids, strict=True):
        if block not in head:
            band = min(ncols - 1, int(((box[0] + box[2]) / 2 - left) // width))
            columns.setdefault(block, set()).add(band)
    assert all(len(bands) == 1 for bands in columns.values())
    assert len({b for bands in columns.values() for b in bands}) == ncols


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


def test_a_centred_author_line_is_not_the_start_of_the_right_column(tmp_path: Path) -> None:
    """A centred author line over two columns whose first row holds the left column's
    "Abstract" heading beside the right column's first line (a sentence carried over): the
    author is read first, then the whole left column, then the whole right one."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "author.pdf"
    c = canvas.Canvas(str(path), pagesize=(595, 842))
    c.setFont("Helvetica-Bold", 16)
    c.drawCentredString(298, 842 - 78, "A statistical study of practices in linguistics")
    c.setFont("Helvetica", 11)
    c.drawCentredString(298, 842 - 100, "Ada Lovelace")
    c.drawString(63, 842 - 215, "Abstract")
    c.setFont("Helvetica", 10)
    c.drawString(315, 842 - 215, "carried over from before.")
    for k in range(9):
        c.drawString(63, 842 - 235 - 12.5 * k, f"abstract line {k} of the left column")
    for k in range(30):
        c.drawString(63, 842 - 370 - 12.5 * k, f"left body line {k} of the text")
        c.drawString(315, 842 - 235 - 12.5 * k, f"right body line {k} of the text")
    c.showPage()
    c.save()
    words = parse_pdf(path).words
    at = words.index("Lovelace")
    assert words[at:at + 4] == ["Lovelace", "Abstract", "abstract", "line"]
    assert words.index("carried") > max(i for i, w in enumerate(words) if w == "left")
    assert words.index("carried") < words.index("right")
