"""PDFs whose structure the tests know: every printed line is placed by hand, so the words in
reading order, each word's role and the sections they make are known before parsing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reportlab.pdfgen import canvas

from loralay_build.structure.roles import Role
from tests.helpers.pdfgen import PAGE_H, PAGE_W, words, wrap

MARGIN = 72.0
GUTTER = 24.0


@dataclass
class Printed:
    """One printed line: `heading` is its level when the line is a heading."""

    text: str
    role: Role = Role.BODY
    heading: int = 0
    font: str = "Times-Roman"
    size: float = 10.0
    space_before: float = 0.0
    bottom: bool = False  # drawn at the foot of the page (a footnote)


@dataclass
class Expected:
    words: list[str] = field(default_factory=list)
    roles: list[int] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)


def heading(text: str, level: int, *, font: str = "Times-Bold", size: float = 12.0,
            space: float = 14.0) -> Printed:
    return Printed(text, Role.HEADING, level, font, size, space)


def paragraph(n: int, seed: int, width: float, space: float = 4.0) -> list[Printed]:
    lines = wrap(words(n, seed), width)
    return [Printed(line, space_before=space if k == 0 else 0.0) for k, line in enumerate(lines)]


def column_width(columns: int) -> float:
    return (PAGE_W - 2 * MARGIN - (columns - 1) * GUTTER) / columns


ONE = column_width(1)
TWO = column_width(2)


def numbered_article(path: Path, abstract: str = "") -> Expected:
    """One column: a title (and the `abstract` under it), numbered headings on two levels
    (one opening page 2), a figure caption, a footnote and a numbered reference list."""
    page_one = [
        Printed("Layout Structure in Practice", Role.OTHER, font="Helvetica-Bold", size=16),
        *[Printed(line, space_before=12 if k == 0 else 0.0)
          for k, line in enumerate(wrap(abstract.split(), ONE) if abstract else [])],
        heading("1 Introduction", 1, space=24),
        *paragraph(120, 1, ONE),
        heading("1.1 Data Sources", 2, size=11),
        *paragraph(90, 2, ONE),
        Printed("Figure 1: The pages of a sample and their word boxes.", Role.CAPTION,
                size=9, space_before=60),
        *paragraph(70, 3, ONE, space=10),
        Printed("1 Every word keeps its box and its page.", Role.FOOTNOTE, size=8,
                bottom=True),
    ]
    page_two = [
        heading("2 Pipeline Design", 1, space=0),
        *paragraph(100, 4, ONE),
        heading("References", 1),
        *[Printed(text, Role.REFERENCE, space_before=3) for text in (
            "[1] A. Martin and B. Silva. Reading order of scanned pages. Journal, 2019.",
            "[2] C. Kim. Layout aware summarization of long documents. Proceedings, 2021.",
            "[3] D. Dupont. Headings and sections in scientific articles. Revue, 2020.",
        )],
    ]
    return render(path, [[page_one], [page_two]])


def two_column_article(path: Path) -> Expected:
    """Two columns, unnumbered headings in the same size as the body: capitals for the top
    level, bold title case below it, one heading at the top of the right column and one at
    the top of page 2 (Portuguese headings, no numbering)."""

    def caps(text: str, level: int, space: float = 14.0) -> Printed:
        return heading(text, level, size=10.0, space=space)

    left = [
        caps("INTRODUÇÃO", 1, space=0),
        *paragraph(80, 11, TWO),
        caps("MÉTODOS", 1),
        *paragraph(40, 12, TWO),
        caps("Desenho do estudo", 2),
        *paragraph(60, 13, TWO),
    ]
    right = [
        caps("RESULTADOS", 1, space=0),
        *paragraph(110, 14, TWO),
        caps("Amostra estudada", 2),
        *paragraph(60, 15, TWO),
    ]
    page_two = [
        caps("DISCUSSÃO", 1, space=0),
        *paragraph(90, 16, TWO),
    ]
    return render(path, [[left, right], [page_two, paragraph(40, 17, TWO, space=0)]])


def render(path: Path, pages: list[list[list[Printed]]]) -> Expected:
    """Draw `pages` (each a list of columns, each a list of lines, top to bottom) and
    return what the structure of the drawn document is."""
    pdf = canvas.Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    expected = Expected()
    for columns in pages:
        width = column_width(len(columns))
        for c, column in enumerate(columns):
            x = MARGIN + c * (width + GUTTER)
            y = MARGIN
            feet = [line for line in column if line.bottom]
            for line in column:
                if line.bottom:
                    continue
                y += line.space_before + line.size * 1.2
                _draw(pdf, line, x, y)
                _expect(expected, line)
            y = PAGE_H - MARGIN - 1.2 * 8.0 * len(feet)
            for line in feet:
                y += line.size * 1.2
                _draw(pdf, line, x, y)
                _expect(expected, line)
        pdf.showPage()
    pdf.save()
    return expected


def _draw(pdf: canvas.Canvas, line: Printed, x: float, top: float) -> None:
    pdf.setFont(line.font, line.size)
    pdf.drawString(x, PAGE_H - top, line.text)


def _expect(expected: Expected, line: Printed) -> None:
    tokens = line.text.split()
    if line.heading:
        expected.sections.append({"title": line.text, "level": line.heading,
                                  "word_start": len(expected.words), "word_end": -1})
    elif not expected.sections:
        expected.sections.append({"title": None, "level": 1, "word_start": 0, "word_end": -1})
    expected.words.extend(tokens)
    expected.roles.extend([int(line.role)] * len(tokens))
    for before, after in zip(expected.sections, expected.sections[1:], strict=False):
        before["word_end"] = after["word_start"]
    expected.sections[-1]["word_end"] = len(expected.words)
