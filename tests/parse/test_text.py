"""Word text: Korean spacing, accents, line-end hyphens, page indices, multi-page files."""

from __future__ import annotations

from pathlib import Path

import pytest
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from loralay_build.errors import Reason, Reject
from loralay_build.parse import parse_pdf
from tests.helpers.pdfgen import pages_pdf

KOREAN = [
    "피고인의 자백이 고문 폭행 협박으로 임의로 진술한 것이 아니라고 의심할 만한 이유가 있다",
    "군사에 관한 것도 또한 같다",
]


def test_korean_words_keep_their_spaces(tmp_path: Path) -> None:
    pdfmetrics.registerFont(UnicodeCIDFont("HYSMyeongJo-Medium"))
    path = tmp_path / "ko.pdf"
    c = canvas.Canvas(str(path))
    c.setFont("HYSMyeongJo-Medium", 12)
    c.drawString(72, 700, KOREAN[0])
    c.drawString(72, 680, KOREAN[1])
    c.showPage()
    c.save()
    for backend in ("pdfium", "pdfplumber"):
        assert parse_pdf(path, backend).words == " ".join(KOREAN).split()


def test_french_accents_survive(tmp_path: Path) -> None:
    lines = ["Élève très âgé à Noël : façon œuvre naïve", "déjà contrôlé où ça est"]
    path = tmp_path / "fr.pdf"
    pages_pdf(path, [lines])
    for backend in ("pdfium", "pdfplumber"):
        assert parse_pdf(path, backend).words == " ".join(lines).split()


def test_line_end_hyphen_is_a_plain_dash_and_ends_the_line(tmp_path: Path) -> None:
    path = tmp_path / "hy.pdf"
    pages_pdf(path, [["the layout of this docu-", "ment is easy to read again"]])
    doc = parse_pdf(path)
    i = doc.words.index("docu-")
    assert doc.words[i + 1] == "ment"
    assert doc.line_ids[i] != doc.line_ids[i + 1]
    assert not any("\ufffe" in w or "\x02" in w for w in doc.words)


def test_empty_pages_keep_true_indices(tmp_path: Path) -> None:
    path = tmp_path / "blank.pdf"
    line = "some words on this page that are long enough to count as text"
    pages_pdf(path, [[line], [], [line]])
    doc = parse_pdf(path)
    assert [p.index for p in doc.pages] == [0, 1, 2]
    assert sorted(set(doc.word_pages)) == [0, 2]
    assert len(doc.font_sizes) == len(doc.words) == len(doc.boxes) == len(doc.line_ids)
    assert doc.font_sizes[0] == pytest.approx(10.0, abs=0.5)


def test_pages_without_a_word_are_no_text_layer_and_one_word_is_not(tmp_path: Path) -> None:
    blank, one = tmp_path / "blank.pdf", tmp_path / "one.pdf"
    pages_pdf(blank, [[], []])
    pages_pdf(one, [[], ["word"]])
    with pytest.raises(Reject) as info:
        parse_pdf(blank)
    assert (info.value.reason, info.value.detail) == (Reason.NO_TEXT_LAYER, "no words")
    with pytest.raises(Reject) as info:
        parse_pdf(one)
    assert info.value.reason == Reason.NO_TEXT_LAYER
    assert "min_chars_per_page" in info.value.detail


def test_unknown_backend_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown PDF backend"):
        parse_pdf(tmp_path / "x.pdf", "nope")
