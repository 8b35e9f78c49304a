"""A font whose ToUnicode map sends letters to ASCII punctuation and digits extracts as
printable nonsense (`$.&)(2.)*3&1$`): the page does not read as language, so it needs OCR
like a page of unmapped glyphs, while prose in any script, tables of figures and tables of
contents still read as language."""

from __future__ import annotations

from pathlib import Path

import pytest

from loralay_build.errors import Reason, Reject
from loralay_build.parse import ParseSettings, parse_pdf
from loralay_build.parse.backend import get_backend
from loralay_build.parse.legible import reads_as_language
from loralay_build.sandbox.pdfgen import ArticleSpec, render_article, render_cipher_font
from loralay_build.sandbox.textgen import ProseGenerator


def _spec(seed: int, lang: str = "fr") -> ArticleSpec:
    gen = ProseGenerator(seed)
    return ArticleSpec(
        title=gen.title(lang), authors=gen.authors(),
        abstracts=[("Résumé", gen.paragraph(lang, 4))],
        sections=[(f"{k} Partie", [gen.paragraph(lang, 6) for _ in range(3)])
                  for k in (1, 2)],
    )


@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber", "poppler"])
def test_a_font_mapping_letters_to_ascii_marks_and_digits_needs_ocr(
        tmp_path: Path, backend: str) -> None:
    path = tmp_path / "cipher.pdf"
    path.write_bytes(render_cipher_font(_spec(41)))
    pages = list(get_backend(backend).pages(path, ParseSettings()))
    words = [word for page in pages for line in page.lines for word in line.words]
    # what the garbage count alone let through: printable words, most holding a digit
    assert all(word.isprintable() for word in words)
    assert sum(any(c.isdigit() for c in word) for word in words) > 0.4 * len(words)
    with pytest.raises(Reject) as info:
        parse_pdf(path, backend, ParseSettings())
    assert info.value.reason == Reason.NEEDS_OCR
    assert info.value.stats == {"ocr_pages": len(pages)}


def test_the_same_article_in_a_sound_embedded_font_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "sound.pdf"
    path.write_bytes(render_article(_spec(41), embedded_font=True))
    document = parse_pdf(path)
    assert not any(page.without_text for page in document.pages)
    assert "Résumé" in document.words


def test_what_reads_as_language() -> None:
    gen = ProseGenerator(5)
    for lang in ("fr", "en", "pt"):
        assert reads_as_language(gen.paragraph(lang, 8).split())
    korean = "한국어 논문의 초록은 본문 앞에 실린다 그리고 결론"
    assert reads_as_language(korean.split(" ") * 20)
    # a table of results: few letters, its tokens numbers
    figures = "Table 3 0.71 0.68 (2.3) 12.5% 1,024 -0.3 ±0.02 [4] 3/5 1999–2004"
    assert reads_as_language(figures.split(" ") * 30)
    # a table of contents: dot leaders and page numbers
    assert reads_as_language(["1", "Introduction", "." * 80, "3", "2.1", "Méthode",
                              "." * 70, "5"] * 10)
    cipher = "$.&)(2.)*3&1$ &)3 #)3 =.1) ;1#)3 ))31<) 2.13 (3313 &.22))3 )2"
    assert not reads_as_language(cipher.split(" ") * 20)
