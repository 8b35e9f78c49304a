"""Korean read by OCR: Tesseract reads it a syllable or a piece at a time, and its text joins
the pieces it puts no space between; the words follow its text. Small Hangul type that its
layout analysis takes for vertical text is looked at again at a finer resolution."""

from __future__ import annotations

from loralay_build.parse.ocr import VERTICAL_TEXT, finer_dpi, page_text
from loralay_build.records import Page

HEADER = ("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight"
          "\tconf\ttext")


def _row(level: int, line: int, word: int, box: tuple[int, int, int, int], text: str) -> str:
    return "\t".join(str(v) for v in (level, 1, 1, 1, line, word, *box, 90, text))


# Two lines: 탄소 나노튜브의 (read as 탄소 / 나 / 노 / 튜브의) and 특성 (read as 특 / 성).
TSV = "\n".join([
    HEADER,
    _row(4, 1, 0, (100, 200, 600, 50), ""),
    _row(5, 1, 1, (100, 205, 90, 40), "탄소"),
    _row(5, 1, 2, (220, 205, 45, 40), "나"),
    _row(5, 1, 3, (268, 205, 45, 40), "노"),
    _row(5, 1, 4, (316, 205, 100, 40), "튜브의"),
    _row(4, 2, 0, (100, 300, 100, 50), ""),
    _row(5, 2, 1, (100, 305, 45, 40), "특"),
    _row(5, 2, 2, (148, 305, 45, 40), "성"),
])


def test_pieces_read_without_a_space_between_them_are_one_word() -> None:
    scale = 72 / 300
    glue = [False, False, True, True, False, True]  # one flag per TSV word
    first, second = page_text(TSV, Page(0, 595.0, 842.0), scale, glue).lines
    assert first.words == ["탄소", "나노튜브의"] and second.words == ["특성"]
    assert first.boxes[1] == (220 * scale, 200 * scale, 416 * scale, 250 * scale)
    assert second.boxes == [(100 * scale, 300 * scale, 193 * scale, 350 * scale)]
    assert first.sizes == [50 * scale] * 2 and len(second.sizes) == 1
    # without flags, Tesseract's words are kept as they are
    plain = page_text(TSV, Page(0, 595.0, 842.0), scale).lines
    assert [line.words for line in plain] == [["탄소", "나", "노", "튜브의"], ["특", "성"]]


def test_a_word_that_starts_a_line_never_joins_the_line_before() -> None:
    glue = [False, False, True, True, True, True]  # a wrong flag on the second line's first word
    _, second = page_text(TSV, Page(0, 595.0, 842.0), 0.24, glue).lines
    assert second.words == ["특성"]


def test_only_vertical_text_among_horizontal_scripts_is_looked_at_closer() -> None:
    assert finer_dpi({1, VERTICAL_TEXT}, 300, ["kor", "eng"]) == 400
    assert finer_dpi({1, 6}, 300, ["kor", "eng"]) == 0
    assert finer_dpi({VERTICAL_TEXT}, 300, ["jpn_vert", "eng"]) == 0


def test_flags_of_another_reading_join_nothing() -> None:
    lines = page_text(TSV, Page(0, 595.0, 842.0), 0.24, [False, True, True]).lines
    assert [line.words for line in lines] == [["탄소", "나", "노", "튜브의"], ["특", "성"]]
