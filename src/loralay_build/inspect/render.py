"""Render a PDF page with pdfium and draw the word layers over it, with a legend below."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pypdfium2 as pdfium
from PIL import Image, ImageDraw, ImageFont

from loralay_build.blobs import atomic_path
from loralay_build.images import render_page as render_pdf_page
from loralay_build.inspect.layers import (
    ABSTRACT,
    COPY,
    DROPPED,
    KEPT,
    OCR,
    DocumentLayers,
    PageLayers,
)
from loralay_build.inspect.roles import draw_roles, role_legend

DPI = 110
SCALE = DPI / 72  # pixels per point: boxes in points map to the bitmap by this factor alone
COLOURS: dict[str, tuple[int, int, int]] = {
    KEPT: (31, 119, 180),
    ABSTRACT: (214, 39, 40),
    DROPPED: (44, 160, 44),
    OCR: (188, 189, 34),
    "order": (255, 127, 14),
}
# One colour per abstract language, in the document's sorted order of languages: two
# abstracts side by side must not look like one.
ABSTRACT_COLOURS: tuple[tuple[int, int, int], ...] = (
    COLOURS[ABSTRACT], (148, 103, 189), (227, 119, 194), (140, 86, 75), (23, 190, 207),
)
FILL_ALPHA = 70
LEGEND_LINE = 18


def _render(pdf_path: Path, index: int) -> Image.Image:
    """The page as displayed (its /Rotate applied), at `SCALE` pixels per point: the
    rendering `--page-images` publishes, so what is inspected is what the dataset holds."""
    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        return render_pdf_page(pdf, index, DPI, max_pixels=1 << 40)
    finally:
        pdf.close()


def _px(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    return (box[0] * SCALE, box[1] * SCALE, box[2] * SCALE, box[3] * SCALE)


def mark_colours(layers: DocumentLayers) -> dict[tuple[str, str], tuple[int, int, int]]:
    """Colour of each (kind, label) drawn anywhere in the document: abstracts by language,
    the same on every page."""
    found = {(m.kind, m.label) for page in layers.pages.values() for m in page.marks}
    languages = sorted(label for kind, label in found if kind == ABSTRACT)
    colours = {key: COLOURS[key[0]] for key in found}
    for k, language in enumerate(languages):
        colours[(ABSTRACT, language)] = ABSTRACT_COLOURS[k % len(ABSTRACT_COLOURS)]
    return colours


def _draw_marks(image: Image.Image, layer: PageLayers,
                colours: dict[tuple[str, str], tuple[int, int, int]]) -> None:
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for mark in layer.marks:
        colour = colours[(mark.kind, mark.label)]
        draw.rectangle(_px(mark.box), fill=(*colour, FILL_ALPHA), outline=(*colour, 255))
    image.paste(Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB"))


def _draw_order(image: Image.Image, layer: PageLayers) -> None:
    draw = ImageDraw.Draw(image)
    colour = COLOURS["order"]
    centres = [((b[0] + b[2]) / 2 * SCALE, (b[1] + b[3]) / 2 * SCALE) for _, b in layer.order]
    if len(centres) > 1:
        draw.line(centres, fill=colour, width=1)
    seen: set[int] = set()
    for (number, box), _ in zip(layer.order, centres, strict=True):
        if number not in seen:
            seen.add(number)
            draw.text((box[0] * SCALE - 14, box[1] * SCALE), str(number), fill=colour)


Legend = list[tuple[tuple[int, int, int] | None, str]]


def _legend(layer: PageLayers, reading_order: bool, header: list[str],
            colours: dict[tuple[str, str], tuple[int, int, int]]) -> Legend:
    """(colour, text) lines; no colour for plain text."""
    lines: Legend = [(None, text) for text in header]
    counts = Counter((m.kind, m.label) for m in layer.marks)
    names = {KEPT: "kept words", ABSTRACT: "removed abstract", DROPPED: "dropped by cleaner",
             OCR: "kept words read by OCR"}
    for (kind, label), n in sorted(counts.items()):
        suffix = f" ({'language ' if kind == ABSTRACT and label != COPY else ''}{label})" \
            if label else ""
        lines.append((colours[(kind, label)], f"{names[kind]}{suffix}: {n} words"))
    lines += role_legend(layer.roles)
    if reading_order and layer.order:
        lines.append((COLOURS["order"], "reading order (block numbers)"))
    return lines


def render_page(layers: DocumentLayers, index: int, reading_order: bool = False) -> Image.Image:
    """Page `index` (0-based true page index) with its layers and a legend strip below it."""
    if layers.pdf_path is None:
        raise ValueError("no PDF to render")
    page = _render(layers.pdf_path, index)
    layer = layers.pages.get(index, PageLayers())
    colours = mark_colours(layers)
    _draw_marks(page, layer, colours)
    draw_roles(page, layer.roles, SCALE)
    if reading_order:
        _draw_order(page, layer)
    header = [f"{layers.article_id}, page {index + 1}"]
    if layers.rejected:
        header.append(f"not published: {layers.rejected}")
    header += layers.notes
    legend = _legend(layer, reading_order, header, colours)
    out = Image.new("RGB", (page.width, page.height + LEGEND_LINE * len(legend) + 8), "white")
    out.paste(page, (0, 0))
    draw = ImageDraw.Draw(out)
    font = ImageFont.load_default()
    y = page.height + 4
    for colour, text in legend:
        x = 6
        if colour is not None:
            draw.rectangle((x, y + 3, x + 10, y + 13), fill=colour, outline=(0, 0, 0))
            x += 16
        draw.text((x, y + 2), text[:160], fill=(0, 0, 0), font=font)
        y += LEGEND_LINE
    return out


def write_pngs(layers: DocumentLayers, out: Path, all_pages: bool = False,
               reading_order: bool = False) -> list[Path]:
    """Write the pages the layers were made for; with `all_pages` page N goes to OUT's
    stem + "-pN"."""
    if layers.pdf_path is None:
        raise ValueError("no PDF to render")
    written = []
    for index in layers.drawn:
        path = out.with_name(f"{out.stem}-p{index + 1}{out.suffix}") if all_pages else out
        image = render_page(layers, index, reading_order)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            image.save(tmp, format="PNG", optimize=True)
        written.append(path)
    return written
