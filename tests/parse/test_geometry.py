"""Rotated pages and rotated text: right words, display-space boxes inside the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from loralay_build.parse import parse_pdf
from loralay_build.records import Document
from tests.helpers.pdfgen import PAGE_H, PAGE_W, rotated_pdf


def assert_boxes_inside(doc: Document) -> None:
    sizes = {p.index: (p.width, p.height) for p in doc.pages}
    for box, page in zip(doc.boxes, doc.word_pages, strict=True):
        w, h = sizes[page]
        x0, y0, x1, y1 = box
        assert 0 <= x0 <= x1 <= w and 0 <= y0 <= y1 <= h, (box, w, h)


@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber"])
@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_page_rotation(tmp_path: Path, backend: str, rotation: int) -> None:
    path = tmp_path / f"r{rotation}.pdf"
    expected = rotated_pdf(path, rotation)
    doc = parse_pdf(path, backend)
    assert doc.words == expected
    page = doc.pages[0]
    assert page.rotation == rotation
    # reportlab writes a landscape MediaBox for a portrait page turned by 90 or 270 degrees,
    # so the displayed page is portrait at every angle.
    assert (page.width, page.height) == pytest.approx((PAGE_W, PAGE_H), abs=0.5)
    assert_boxes_inside(doc)
    # The first line is above (0), right of (90), below (180) or left of (270) the second.
    first, second = doc.boxes[0], doc.boxes[len(expected) // 3 + 2]
    centre = {k: ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for k, b in (("a", first), ("b", second))}
    (ax, ay), (bx, by) = centre["a"], centre["b"]
    assert {0: ay < by, 90: ax > bx, 180: ay > by, 270: ax < bx}[rotation]


@pytest.mark.parametrize("angle", [90, 180, 270])
def test_rotated_text_on_upright_page(tmp_path: Path, angle: int) -> None:
    path = tmp_path / f"t{angle}.pdf"
    expected = rotated_pdf(path, 0, angle)
    doc = parse_pdf(path)
    assert doc.words == expected
    assert_boxes_inside(doc)


def test_rotated_page_with_rotated_text_reads_upright(tmp_path: Path) -> None:
    """Text turned 90 degrees on a page turned back by /Rotate 270 reads normally on screen."""
    path = tmp_path / "both.pdf"
    expected = rotated_pdf(path, 270, 90)
    doc = parse_pdf(path)
    assert doc.words == expected
    assert_boxes_inside(doc)
    boxes = doc.boxes[:3]
    assert all(b[2] - b[0] > b[3] - b[1] for b in boxes)  # horizontal on screen
