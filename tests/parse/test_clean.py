"""Cleaners: HAL cover, arXiv stamp, running headers, line numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reportlab.pdfgen import canvas

from loralay_build.parse import clean_document, parse_pdf
from loralay_build.parse.clean import MARGIN_BAND, running_headers
from loralay_build.records import Document, Page
from tests.helpers.pdfgen import PAGE_H, pages_pdf, words

BODY = [" ".join(words(10, seed)) for seed in range(8)]


def test_hal_cover_dropped_pages_keep_true_indices(tmp_path: Path) -> None:
    path = tmp_path / "hal.pdf"
    cover = [
        "HAL Id: hal-01234567",
        "https://hal.science/hal-01234567",
        "HAL is a multi-disciplinary open access archive for the deposit",
        "L'archive ouverte pluridisciplinaire HAL, est destinée au dépôt",
    ]
    pages_pdf(path, [cover, BODY, BODY])
    doc = parse_pdf(path)
    cleaned = clean_document(doc, ["hal_cover"])
    assert cleaned.removed["hal_cover"] == sum(p == 0 for p in doc.word_pages)
    assert set(cleaned.word_pages) == {1, 2}
    assert [p.index for p in cleaned.pages] == [0, 1, 2]
    assert "HAL" not in cleaned.words


def test_hal_cover_needs_the_banner(tmp_path: Path) -> None:
    path = tmp_path / "nohal.pdf"
    pages_pdf(path, [["HAL Id: hal-1 is cited here", *BODY], BODY])
    doc = parse_pdf(path)
    assert len(clean_document(doc, ["hal_cover"])) == len(doc)


def test_arxiv_stamp_removed(tmp_path: Path) -> None:
    path = tmp_path / "arxiv.pdf"
    c = canvas.Canvas(str(path), pagesize=(612, PAGE_H))
    c.setFont("Times-Roman", 20)
    c.saveState()
    c.translate(30, 250)
    c.rotate(90)
    c.drawString(0, 0, "arXiv:1111.2011v2  [cond-mat.str-el]  2 Apr 2012")
    c.restoreState()
    c.setFont("Helvetica", 10)
    for j, line in enumerate(BODY):
        c.drawString(72, 700 - 12 * j, line)
    c.showPage()
    c.save()
    doc = parse_pdf(path)
    assert "arXiv:1111.2011v2" in doc.words
    cleaned = clean_document(doc, ["arxiv_stamp"])
    assert cleaned.removed["arxiv_stamp"] == 5
    assert cleaned.words == " ".join(BODY).split()


def test_running_headers_and_page_numbers_removed(tmp_path: Path) -> None:
    path = tmp_path / "headers.pdf"
    c = canvas.Canvas(str(path), pagesize=(612, PAGE_H))
    for page in range(5):
        c.setFont("Helvetica", 9)
        c.drawString(72, PAGE_H - 40, "Journal of Layout Studies, vol. 3")
        c.drawString(300, 40, str(page + 1))
        c.setFont("Helvetica", 10)
        for j, line in enumerate(BODY[page:] + BODY[:page]):
            c.drawString(72, 650 - 12 * j, line)
        c.showPage()
    c.save()
    doc = parse_pdf(path)
    cleaned = clean_document(doc, ["running_headers"])
    assert cleaned.removed["running_headers"] == 5 * (6 + 1)
    assert "Journal" not in cleaned.words and "3" not in cleaned.words
    assert len(cleaned) == 5 * len(" ".join(BODY).split())


def test_line_numbers_removed(tmp_path: Path) -> None:
    path = tmp_path / "lineno.pdf"
    c = canvas.Canvas(str(path), pagesize=(612, PAGE_H))
    c.setFont("Helvetica", 10)
    for j in range(24):
        c.drawRightString(50, 700 - 12 * j, str(j + 1))
        c.drawString(72, 700 - 12 * j, BODY[j % len(BODY)])
    c.showPage()
    c.save()
    doc = parse_pdf(path)
    cleaned = clean_document(doc, ["line_numbers"])
    assert cleaned.removed["line_numbers"] == 24
    assert not any(w.isdigit() and int(w) <= 24 and len(w) < 3 for w in cleaned.words)


def test_cleaners_switch_off_and_unknown_names(tmp_path: Path) -> None:
    path = tmp_path / "plain.pdf"
    pages_pdf(path, [BODY])
    doc = parse_pdf(path)
    assert clean_document(doc, []).words == doc.words
    with pytest.raises(ValueError):
        clean_document(doc, ["nope"])


def _reference_running_headers(doc: Document) -> set[int]:
    """The per-line formula the column version replaces: a line's union box in a band."""
    heights = {page.index: page.height for page in doc.pages}
    lines: dict[tuple[int, int], list[int]] = {}
    for i, line_key in enumerate(zip(doc.word_pages, doc.line_ids, strict=True)):
        lines.setdefault(line_key, []).append(i)
    seen: dict[tuple[str, str], set[int]] = {}
    found = []
    for (page, _), line in lines.items():
        height = heights[page]
        if max(doc.boxes[i][3] for i in line) <= MARGIN_BAND * height:
            zone = "top"
        elif min(doc.boxes[i][1] for i in line) >= (1.0 - MARGIN_BAND) * height:
            zone = "bottom"
        else:
            continue
        text = " ".join(doc.words[i] for i in line)
        key = (zone, "#" if re.match(r"^[ivxlc]{1,6}$", text, re.IGNORECASE)
               else re.sub(r"\d+", "#", text.casefold()))
        seen.setdefault(key, set()).add(page)
        found.append((key, line))
    repeats = 2 if len({p for p, _ in lines}) <= 4 else 3
    return {i for key, line in found if len(seen[key]) >= repeats for i in line}


HEIGHT = 700.0
EDGES = [MARGIN_BAND * HEIGHT, (1.0 - MARGIN_BAND) * HEIGHT]  # exactly on a band's edge
WORD = st.tuples(st.integers(0, 5), st.integers(0, 6),
                 st.sampled_from(["Journal", "12", "iv", "x"]), st.floats(0.0, 100.0),
                 st.sampled_from(EDGES) | st.floats(0.0, HEIGHT),
                 st.just(0.0) | st.floats(0.0, 60.0))


@settings(max_examples=300, deadline=None)
@given(st.lists(WORD, max_size=60), st.booleans())
def test_running_headers_equal_the_per_line_union(
    items: list[tuple[int, int, str, float, float, float]], in_line_order: bool,
) -> None:
    """Words at random heights on random lines of six pages: same removals as line unions,
    with the words in (page, line) order as a parser gives them, or in any order."""
    if in_line_order:
        items.sort(key=lambda w: (w[0], w[1]))
    pages = [Page(i, 600.0, HEIGHT) for i in range(6)]
    doc = Document(
        pages=pages,
        words=[w[2] for w in items],
        boxes=[(w[3], w[4], w[3] + 10.0, w[4] + w[5]) for w in items],
        word_pages=[w[0] for w in items],
        line_ids=[w[0] * 10 + w[1] for w in items],
    )
    assert running_headers(doc) == _reference_running_headers(doc)
