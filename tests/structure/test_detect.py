"""Generated PDFs whose headings, captions, footnotes and reference lists are known get the
exact `sections` and `word_roles`: numbered and unnumbered headings, two levels, two
columns, a heading at the top of a page, a title before the first heading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loralay_build.parse import ParseSettings, parse_pdf
from loralay_build.structure import Role, detect_structure
from tests.helpers.structure_pdf import (
    ONE,
    Expected,
    Printed,
    heading,
    numbered_article,
    paragraph,
    render,
    two_column_article,
)


def _check(path: Path, expected: Expected) -> None:
    doc = parse_pdf(str(path), settings=ParseSettings())
    assert doc.words == expected.words  # the layout is read in the order it was drawn
    found = detect_structure(doc)
    assert found.sections == expected.sections
    assert found.roles.dtype == np.int8
    assert found.roles.tolist() == expected.roles


def test_numbered_headings_caption_footnote_and_references(tmp_path: Path) -> None:
    _check(tmp_path / "a.pdf", numbered_article(tmp_path / "a.pdf"))


def test_unnumbered_headings_in_two_columns_and_at_a_page_top(tmp_path: Path) -> None:
    _check(tmp_path / "b.pdf", two_column_article(tmp_path / "b.pdf"))


@pytest.mark.parametrize("text", [
    "A body line of ordinary text set in the body size that runs on.",
    "2. The second item of a list, a whole sentence ending with a period.",
    "Editor: Jane Smith, University of Somewhere, 2020",
])
def test_body_lines_set_apart_are_not_headings(tmp_path: Path, text: str) -> None:
    """Space around a line is not enough: a sentence, a numbered sentence and a label with
    its value stay body text."""
    path = tmp_path / "c.pdf"
    expected = render(path, [[[
        heading("1 Introduction", 1, space=0),
        *paragraph(60, 21, ONE),
        Printed(text, space_before=20),
        *paragraph(60, 22, ONE, space=20),
    ]]])
    _check(path, expected)


def test_a_document_without_lines_is_one_untitled_section() -> None:
    from loralay_build.records import Document, Page

    doc = Document(pages=[Page(0, 612.0, 792.0)], words=["a", "b"],
                   boxes=[(0, 0, 1, 1), (1, 0, 2, 1)], word_pages=[0, 0])
    found = detect_structure(doc)
    assert found.sections == [{"title": None, "level": 1, "word_start": 0, "word_end": 2}]
    assert found.roles.tolist() == [0, 0]
    assert detect_structure(Document(pages=[])).sections == []


def test_a_line_opening_with_a_word_that_holds_a_newline(tmp_path: Path) -> None:
    """Lines are found by their first words' place in one text; a newline inside a word
    (which no parser makes) must not shift the lines after it."""
    path = tmp_path / "a.pdf"
    numbered_article(path)
    doc = parse_pdf(str(path), settings=ParseSettings())
    expected = detect_structure(doc)
    first = doc.line_ids.index(doc.line_ids[0] + 2)  # the first word of the third line
    doc.words[first] = doc.words[first][:2] + "\n" + doc.words[first][2:]
    found = detect_structure(doc)
    assert found.sections == expected.sections
    assert found.roles.tolist() == expected.roles.tolist()
    assert Role.CAPTION in found.roles  # a caption, found after the changed word
