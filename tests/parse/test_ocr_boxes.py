"""OCR word boxes follow the PDF words' convention: a word's horizontal extent is its own,
its vertical extent its line's (Tesseract's word boxes hug the ink: `a` is shorter than `d`,
`g` reaches lower), so the words of one line share their top and bottom as a PDF's do."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from loralay_build.errors import ConfigError
from loralay_build.parse.ocr import OcrSettings, Reader, page_text, tessdata_dir
from loralay_build.records import Page
from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.textgen import ProseGenerator

HEADER = ("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight"
          "\tconf\ttext")


def _row(level: int, line: int, word: int, box: tuple[int, int, int, int], text: str) -> str:
    return "\t".join(str(v) for v in (level, 1, 1, 1, line, word, *box, 90, text))


def test_each_word_takes_its_lines_top_and_bottom_and_its_own_left_and_right() -> None:
    # two lines; the words' ink boxes are each shorter than their line, some far inside it
    tsv = "\n".join([
        HEADER,
        _row(4, 1, 0, (100, 200, 900, 60), ""),
        _row(5, 1, 1, (100, 215, 120, 30), "ace"),  # x-height only
        _row(5, 1, 2, (240, 200, 150, 45), "bold"),  # ascenders
        _row(5, 1, 3, (420, 215, 160, 45), "gray"),  # descenders
        _row(4, 2, 0, (100, 300, 500, 50), ""),
        _row(5, 2, 1, (100, 320, 80, 22), "one"),
    ])
    scale = 72 / 300
    result = page_text(tsv, Page(0, 595.0, 842.0), scale)
    first, second = result.lines
    assert first.words == ["ace", "bold", "gray"] and second.words == ["one"]
    assert first.boxes == [(100 * scale, 200 * scale, 220 * scale, 260 * scale),
                           (240 * scale, 200 * scale, 390 * scale, 260 * scale),
                           (420 * scale, 200 * scale, 580 * scale, 260 * scale)]
    assert second.boxes == [(100 * scale, 300 * scale, 180 * scale, 350 * scale)]
    assert first.sizes == [60 * scale] * 3 and second.sizes == [50 * scale]


def _settings() -> OcrSettings:
    return OcrSettings(enabled=True)


@pytest.mark.skipif(tessdata_dir(_settings()) is None and not os.environ.get("CI"),
                    reason="no Tesseract language data")
def test_on_a_real_reading_every_word_spans_exactly_its_lines_height(tmp_path: Path) -> None:
    gen = ProseGenerator(7)
    path = tmp_path / "article.pdf"
    path.write_bytes(render_article(ArticleSpec(
        title=gen.title("en"), authors=gen.authors(),
        abstracts=[("Abstract", gen.paragraph("en", 4))],
        sections=[("1 Part", [gen.paragraph("en", 5)])])))
    reader = Reader(_settings())
    pdf = pdfium.PdfDocument(str(path))
    try:
        read = reader.read(pdf, Page(0, *pdf[0].get_size()), ["eng"])
        tsv = reader.engine(["eng"]).GetTSVText(0)  # the reading page_text turned into lines
    except ConfigError as exc:  # pragma: no cover - the engine is missing
        pytest.skip(str(exc))
    finally:
        pdf.close()
        reader.close()
    scale = 72 / 300
    spans: dict[tuple[int, ...], tuple[float, float]] = {}
    inks: dict[tuple[int, ...], list[tuple[float, float]]] = {}
    for row in csv.reader(tsv.splitlines()[1:], delimiter="\t", quoting=csv.QUOTE_NONE):
        key, top, height = tuple(int(v) for v in row[2:5]), int(row[7]), int(row[9])
        if row[0] == "4":
            spans[key] = (top * scale, (top + height) * scale)
        elif row[0] == "5" and row[11].strip():
            inks.setdefault(key, []).append((top * scale, (top + height) * scale))
    keys = sorted(inks)
    assert len(read.lines) == len(keys) > 5
    words = moved = 0
    for key, line in zip(keys, read.lines, strict=True):
        assert len(line.boxes) == len(inks[key])
        for (_, y0, _, y1), (upper, lower) in zip(line.boxes, inks[key], strict=True):
            assert (y0, y1) == spans[key]  # exactly the line's extent
            words += 1
            moved += abs(upper - y0) + abs(lower - y1) > 1.0
    # most words' ink lies over a point inside their line: a box taken from the ink fails
    assert words > 100 and moved > 0.5 * words, (moved, words)
