"""The scan check's image cover: PDFium measures it for nearly empty pages while it reads
them, so `scanned` loads no page a second time."""

from __future__ import annotations

from pathlib import Path

from loralay_build.parse.ocr import SCAN_CHARS, SCAN_IMAGE_COVER, scanned
from loralay_build.parse.pdfium import PdfiumBackend
from loralay_build.parse.settings import ParseSettings
from loralay_build.sandbox.pdfgen import ArticleSpec, render_article, render_scanned
from loralay_build.sandbox.textgen import ProseGenerator


def _article(seed: int) -> bytes:
    gen = ProseGenerator(seed)
    return render_article(ArticleSpec(
        title=gen.title("en"), authors=gen.authors(),
        abstracts=[("Abstract", gen.paragraph("en", 4))],
        sections=[("1 Part", [gen.paragraph("en", 6) for _ in range(3)])]))


def test_scanned_pages_are_measured_while_read_and_not_opened_again(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(render_scanned(_article(3)))
    pages = list(PdfiumBackend().pages(path, ParseSettings()))
    assert pages and all(p.chars < SCAN_CHARS for p in pages)
    assert all(p.image_cover is not None and p.image_cover >= SCAN_IMAGE_COVER for p in pages)
    path.unlink()  # opening it again would now fail
    everything = list(range(len(pages)))
    assert scanned(path, everything, pages) == everything


def test_pages_with_text_are_not_measured(tmp_path: Path) -> None:
    path = tmp_path / "digital.pdf"
    path.write_bytes(_article(4))
    pages = list(PdfiumBackend().pages(path, ParseSettings()))
    assert pages and all(p.chars >= SCAN_CHARS and p.image_cover is None for p in pages)
