"""reportlab generators of small PDFs whose exact text and layout the tests know."""

from __future__ import annotations

import random
from pathlib import Path

from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

VOCAB = [
    "layout",
    "aware",
    "summarization",
    "corpus",
    "scientific",
    "article",
    "column",
    "reading",
    "order",
    "model",
    "transformer",
    "abstract",
    "section",
    "result",
    "table",
    "figure",
    "evaluation",
    "baseline",
    "token",
    "page",
    "document",
    "dataset",
    "language",
    "french",
    "korean",
    "english",
    "spanish",
    "portuguese",
    "extraction",
]

PAGE_W, PAGE_H = 612.0, 792.0
FONT, SIZE, LEADING = "Helvetica", 10.0, 12.0


def words(n: int, seed: int) -> list[str]:
    """A deterministic word list, numbered so every word of the stream is unique."""
    rng = random.Random(seed)
    return [f"{rng.choice(VOCAB)}{i}" for i in range(n)]


def wrap(tokens: list[str], width: float, font: str = FONT, size: float = SIZE) -> list[str]:
    lines: list[str] = []
    current: list[str] = []
    for token in tokens:
        trial = " ".join([*current, token])
        if current and stringWidth(trial, font, size) > width:
            lines.append(" ".join(current))
            current = [token]
        else:
            current.append(token)
    if current:
        lines.append(" ".join(current))
    return lines


def columns_pdf(path: Path, ncols: int, seed: int = 1) -> list[str]:
    """One page: a full-width title and abstract, then `ncols` columns of body text.

    Returns the words in reading order (title, abstract, then column after column).
    """
    c = canvas.Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    title = ["Title", "of", "the", f"{ncols}", "column", "paper"]
    c.setFont(FONT, 16)
    c.drawCentredString(PAGE_W / 2, PAGE_H - 72, " ".join(title))
    abstract = words(60, seed + 100)
    c.setFont(FONT, SIZE)
    y = PAGE_H - 110
    for line in wrap(abstract, PAGE_W - 144):
        c.drawString(72, y, line)
        y -= LEADING
    gutter = 18.0
    col_w = (PAGE_W - 144 - gutter * (ncols - 1)) / ncols
    lines_per_col = 40
    body = words(ncols * lines_per_col * 7, seed)
    all_lines = wrap(body, col_w)[: ncols * lines_per_col]
    top = y - 2 * LEADING
    for k in range(ncols):
        x = 72 + k * (col_w + gutter)
        for j, line in enumerate(all_lines[k * lines_per_col : (k + 1) * lines_per_col]):
            # A paragraph gap every 10 lines, at the same height in every column.
            yy = top - j * LEADING - (j // 10) * 8
            c.drawString(x, yy, line)
    c.showPage()
    c.save()
    used = " ".join(all_lines).split()
    return title + abstract + used


def rotated_pdf(path: Path, rotation: int, text_angle: int = 0) -> list[str]:
    """One page with /Rotate `rotation`, and three lines drawn at `text_angle` degrees."""
    c = canvas.Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    c.setFont(FONT, 12)
    lines = [
        f"Rotated page {rotation} angle {text_angle} first line",
        "second line of the rotated text sample",
        "third line closes the little paragraph",
    ]
    c.saveState()
    c.translate(PAGE_W / 2, PAGE_H / 2)
    c.rotate(text_angle)
    for j, line in enumerate(lines):
        c.drawString(-150, 100 - j * 16, line)
    c.restoreState()
    c.setPageRotation(rotation)
    c.showPage()
    c.save()
    return " ".join(lines).split()


def pages_pdf(path: Path, pages: list[list[str]], font: str = FONT, size: float = SIZE) -> None:
    """Pages of plain lines (an empty list gives a blank page)."""
    c = canvas.Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    for lines in pages:
        c.setFont(font, size)
        for j, line in enumerate(lines):
            c.drawString(72, PAGE_H - 100 - j * (size * 1.3), line)
        c.showPage()
    c.save()


ACCENT_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def accent_pdf(path: Path, lines: list[list[tuple[str, str, str]]], size: float = 12.0) -> None:
    """One page of lines typeset as old TeX fonts do accents: per (prefix, accent, rest)
    piece, the prefix is drawn, then the accent glyph moved back over the prefix's last letter
    (no accent when ""), then the rest continues after the prefix. Pieces are separated by a
    space; DejaVu Sans carries every spacing accent.
    """
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    pdfmetrics.registerFont(TTFont("AccentSans", str(ACCENT_FONT)))
    c = canvas.Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    c.setFont("AccentSans", size)
    space = stringWidth(" ", "AccentSans", size)
    for j, line in enumerate(lines):
        y = PAGE_H - 100 - j * 2 * size
        x = 72.0
        for prefix, accent, rest in line:
            c.drawString(x, y, prefix)
            end = x + stringWidth(prefix, "AccentSans", size)
            if accent:
                base = stringWidth(prefix[-1], "AccentSans", size)
                width = stringWidth(accent, "AccentSans", size)
                c.drawString(end - base / 2 - width / 2, y, accent)
            c.drawString(end, y, rest)
            x = end + stringWidth(rest, "AccentSans", size) + space
    c.showPage()
    c.save()


def text_layer_pdf(path: Path, lines: list[str], size: float = 12.0) -> None:
    """One page of lines in DejaVu Sans, drawn code point by code point as given: a
    combining mark after its letter lands in the text layer as a glyph of its own."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    pdfmetrics.registerFont(TTFont("AccentSans", str(ACCENT_FONT)))
    c = canvas.Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    c.setFont("AccentSans", size)
    for j, line in enumerate(lines):
        c.drawString(72, PAGE_H - 100 - j * 2 * size, line)
    c.showPage()
    c.save()
