"""Real PDFs for the sandbox and the tests: articles in one or two columns, with abstracts in
several languages, an optional repository cover page and running headers; the same articles scanned
(pages as pictures, no text layer) or set in a font whose ToUnicode map is scrambled (the text
renders, its extraction is symbols), the two cases OCR reads; or pictures of no text at all.
"""

from __future__ import annotations

import io
import random
import re
import unicodedata
from dataclasses import dataclass, field

from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import cm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    BaseDocTemplate,
    Flowable,
    Frame,
    FrameBreak,
    NextPageTemplate,
    PageBreak,
    PageTemplate,
    Paragraph,
    Spacer,
)

PAGE_W, PAGE_H = A4
MARGIN = 2 * cm
GUTTER = 0.8 * cm
TITLE_BLOCK_H = 5 * cm


@dataclass
class CoverPage:
    """The page a repository adds in front of every deposited file: its lines, each a
    paragraph (reportlab markup) in the `cover` or `cover_title` style."""

    lines: list[tuple[str, str]]


@dataclass
class ArticleSpec:
    title: str
    authors: list[str]
    abstracts: list[tuple[str, str]]  # (heading, text) in print order
    sections: list[tuple[str, list[str]]]  # (heading, paragraphs)
    columns: int = 1
    running_header: str = ""
    cover: CoverPage | None = None
    keywords: list[str] = field(default_factory=list)
    font: str = ""  # a reportlab CID font name (e.g. for Hangul); "" = standard fonts
    side_stamp: str = ""  # drawn bottom-to-top in the left margin of page 1 (arXiv)


def _styles() -> dict[str, ParagraphStyle]:
    base = getSampleStyleSheet()
    body = ParagraphStyle("body", parent=base["BodyText"], fontName="Times-Roman", fontSize=10,
                          leading=12.5, alignment=4)
    return {
        "title": ParagraphStyle("title", parent=base["Title"], fontName="Helvetica-Bold",
                                fontSize=16, leading=20),
        "authors": ParagraphStyle("authors", parent=body, alignment=1, fontSize=11),
        "heading": ParagraphStyle("heading", parent=base["Heading2"], fontName="Helvetica-Bold",
                                  fontSize=11, leading=14, spaceBefore=6, spaceAfter=3),
        "body": body,
        "cover": ParagraphStyle("cover", parent=body, fontName="Helvetica", fontSize=9,
                                alignment=0),
        "cover_title": ParagraphStyle("cover_title", parent=body, fontName="Helvetica-Bold",
                                      fontSize=13, leading=16, alignment=0),
    }


def escape(text: str) -> str:
    """Text as reportlab paragraph markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cover_flowables(cover: CoverPage, styles: dict[str, ParagraphStyle]) -> list[Flowable]:
    out: list[Flowable] = []
    for text, style in cover.lines:
        out += [Paragraph(text, styles[style]), Spacer(1, 10)]
    return out


def _use_cid_font(styles: dict[str, ParagraphStyle], name: str) -> None:
    """Set every style to a built-in CID font: the standard 14 fonts have no Hangul glyphs."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    if name not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(name))
    for style in styles.values():
        style.fontName = name


def _use_embedded_font(styles: dict[str, ParagraphStyle]) -> None:
    """Set every style to reportlab's own embedded TrueType font, which carries a ToUnicode
    map (written uncompressed with `pageCompression=0`)."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    for name, file in (("Vera", "Vera.ttf"), ("VeraBd", "VeraBd.ttf")):
        if name not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(TTFont(name, file))
    for key, style in styles.items():
        style.fontName = "VeraBd" if key in ("title", "heading") else "Vera"


def render_article(spec: ArticleSpec, embedded_font: bool = False) -> bytes:
    """Lay the article out with reportlab and return the PDF bytes."""
    styles = _styles()
    if spec.font:
        _use_cid_font(styles, spec.font)
    elif embedded_font:
        _use_embedded_font(styles)
    buffer = io.BytesIO()
    doc = BaseDocTemplate(buffer, pagesize=A4, title=spec.title, author=", ".join(spec.authors),
                          invariant=1, pageCompression=0 if embedded_font else None)
    width = PAGE_W - 2 * MARGIN
    height = PAGE_H - 2 * MARGIN
    col_w = (width - GUTTER * (spec.columns - 1)) / spec.columns

    def columns(top: float) -> list[Frame]:
        return [
            Frame(MARGIN + i * (col_w + GUTTER), MARGIN, col_w, top - MARGIN,
                  id=f"col{i}", showBoundary=0)
            for i in range(spec.columns)
        ]

    def decorate(canvas: Canvas, document: BaseDocTemplate) -> None:
        if spec.running_header:
            canvas.setFont("Helvetica", 8)
            canvas.drawString(MARGIN, PAGE_H - MARGIN + 14, spec.running_header)
        canvas.setFont("Helvetica", 8)
        canvas.drawCentredString(PAGE_W / 2, MARGIN - 20, str(document.page))
        if spec.side_stamp and document.page == 1:
            canvas.saveState()
            canvas.setFont("Times-Roman", 20)
            canvas.translate(MARGIN / 2 + 6, PAGE_H / 3)
            canvas.rotate(90)
            canvas.drawString(0, 0, spec.side_stamp)
            canvas.restoreState()

    title_frame = Frame(MARGIN, PAGE_H - MARGIN - TITLE_BLOCK_H, width, TITLE_BLOCK_H, id="title")
    templates = [
        PageTemplate("first", [title_frame, *columns(PAGE_H - MARGIN - TITLE_BLOCK_H)],
                     onPage=decorate),
        PageTemplate("later", columns(PAGE_H - MARGIN), onPage=decorate),
    ]
    story: list[Flowable] = []
    if spec.cover is not None:
        templates.insert(0, PageTemplate("cover", [Frame(MARGIN, MARGIN, width, height)]))
        story += _cover_flowables(spec.cover, styles)
        story += [NextPageTemplate("first"), PageBreak()]
    doc.addPageTemplates(templates)
    story += [
        Paragraph(escape(spec.title), styles["title"]),
        Paragraph(escape(", ".join(spec.authors)), styles["authors"]),
        NextPageTemplate("later"),
        FrameBreak(),
    ]
    for heading, text in spec.abstracts:
        story += [Paragraph(escape(heading), styles["heading"]),
                  Paragraph(escape(text), styles["body"])]
    if spec.keywords:
        story.append(Paragraph("Mots-clés : " + escape(", ".join(spec.keywords)), styles["body"]))
    for heading, paragraphs in spec.sections:
        story.append(Paragraph(escape(heading), styles["heading"]))
        story += [Paragraph(escape(p), styles["body"]) for p in paragraphs]
    doc.build(story)
    return buffer.getvalue()


def render_scan(pages: int, seed: int) -> bytes:
    """A PDF whose pages are only pictures of text lines: no text layer at all."""
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=1)
    for _ in range(pages):
        image = Image.new("L", (620, 877), 255)
        draw = ImageDraw.Draw(image)
        y = 60
        while y < 820:
            x = 60
            while x < 560:
                w = rng.randint(15, 60)
                draw.rectangle([x, y, min(x + w, 560), y + 8], fill=30)
                x += w + 6
            y += 16
        png = io.BytesIO()
        image.save(png, format="PNG")
        png.seek(0)
        from reportlab.lib.utils import ImageReader

        canvas.drawImage(ImageReader(png), 0, 0, PAGE_W, PAGE_H)
        canvas.showPage()
    canvas.save()
    return buffer.getvalue()


# What a scrambled ToUnicode map gives for letters and digits: symbols only, so each word of
# the font extracts as a run of marks without a letter, as from a real broken font.
_SYMBOLS = "!#$%&()*+/:;<=>?@[]^_{|}~"
_BFCHAR = re.compile(rb"beginbfchar(.*?)endbfchar", re.S)
_TARGET = re.compile(rb"(<[0-9A-F]{2}> )<([0-9A-F]{4})>")


def _scrambled(block: re.Match[bytes]) -> bytes:
    def one(pair: re.Match[bytes]) -> bytes:
        char = chr(int(pair.group(2), 16))
        if not char.isalnum():
            return pair.group(0)
        symbol = _SYMBOLS[ord(char) % len(_SYMBOLS)]
        return pair.group(1) + b"<%04X>" % ord(symbol)

    return b"beginbfchar" + _TARGET.sub(one, block.group(1)) + b"endbfchar"


def render_broken_font(spec: ArticleSpec) -> bytes:
    """The article set in an embedded font whose ToUnicode map sends every letter and digit
    to a symbol: it prints as the article, its text layer is garbage. The map's entries keep
    their length, so every offset of the file stays valid."""
    return _BFCHAR.sub(_scrambled, render_article(spec, embedded_font=True))


# What a font whose ToUnicode map is a substitution cipher over ASCII gives: each letter
# becomes a punctuation mark or a digit, so every character is printable, and many words
# hold a digit (`$.&)(2.)*3&1$`), as in real papers set in such fonts.
_CIPHER = dict(zip("abcdefghijklmnopqrstuvwxyz", "$%.&)+/*(;:#<2.=>)3&1-!?~@", strict=True))


def _enciphered(block: re.Match[bytes]) -> bytes:
    def one(pair: re.Match[bytes]) -> bytes:
        char = chr(int(pair.group(2), 16))
        if not char.isalpha():
            return pair.group(0)
        plain = unicodedata.normalize("NFD", char.lower())[0]  # é as e
        symbol = _CIPHER.get(plain, "?")
        return pair.group(1) + b"<%04X>" % ord(symbol)

    return b"beginbfchar" + _TARGET.sub(one, block.group(1)) + b"endbfchar"


def render_cipher_font(spec: ArticleSpec) -> bytes:
    """The article set in an embedded font whose ToUnicode map sends every letter to an
    ASCII punctuation mark or digit (digits and punctuation stay): it prints as the
    article, its text layer is printable nonsense. The map's entries keep their length."""
    return _BFCHAR.sub(_enciphered, render_article(spec, embedded_font=True))


def with_cover_picture(pdf: bytes, seed: int = 0) -> bytes:
    """`pdf` behind a full-page picture without text (a photograph-like cover, as a word
    processor exports one): the cover has no text layer and holds nothing to read."""
    import numpy as np
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw, ImageFilter
    from reportlab.lib.utils import ImageReader

    rng = np.random.default_rng(seed)
    field = rng.normal(0.0, 1.0, (14, 10))
    shades = ((field - field.min()) / np.ptp(field) * 255).astype(np.uint8)
    image = Image.fromarray(shades).resize((620, 877), Image.Resampling.BICUBIC).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x, y, r = (int(v) for v in rng.integers(0, 600, 3))
        draw.ellipse((x, y, x + r // 2 + 40, y + r // 2 + 40),
                     fill=tuple(int(c) for c in rng.integers(0, 255, 3)))
    png = io.BytesIO()
    image.filter(ImageFilter.GaussianBlur(2)).save(png, format="PNG")
    png.seek(0)
    cover = io.BytesIO()
    canvas = Canvas(cover, pagesize=A4, invariant=1)
    canvas.drawImage(ImageReader(png), 0, 0, PAGE_W, PAGE_H)
    canvas.showPage()
    canvas.save()
    joined = pdfium.PdfDocument.new()
    front, body = pdfium.PdfDocument(cover.getvalue()), pdfium.PdfDocument(pdf)
    try:
        joined.import_pages(front)
        joined.import_pages(body)
        out = io.BytesIO()
        joined.save(out)
    finally:
        for doc in (joined, front, body):
            doc.close()
    return out.getvalue()


def render_scanned(pdf: bytes, dpi: int = 200) -> bytes:
    """`pdf` as a scanner would give it back: each page a gray picture at `dpi`, no text."""
    import pypdfium2 as pdfium
    from reportlab.lib.utils import ImageReader

    source = pdfium.PdfDocument(pdf)
    buffer = io.BytesIO()
    try:
        canvas = Canvas(buffer, pagesize=A4, invariant=1)
        for page in source:
            width, height = page.get_size()
            image = page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
            png = io.BytesIO()
            image.save(png, format="PNG")
            png.seek(0)
            canvas.setPageSize((width, height))
            canvas.drawImage(ImageReader(png), 0, 0, width, height)
            canvas.showPage()
            page.close()
        canvas.save()
    finally:
        source.close()
    return buffer.getvalue()
