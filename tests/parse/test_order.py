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
