"""A text layer that is garbage on a whole page (a font without a usable encoding) needs OCR
(`needs_ocr` without it beyond half the pages, a page without words below, `no_text_layer`
when OCR finds nothing either), never garbage words in a published row."""

from __future__ import annotations

from pathlib import Path

import pytest

from loralay_build.errors import Reason, Reject
from loralay_build.parse import ParseSettings, parse_pdf
from tests.helpers.pdfgen import words

# A Type3 font whose glyphs are named /g1../g40 with no ToUnicode: every engine extracts
# U+FFFD or (cid:N) for them, as for a broken font encoding in a real file.
TYPE3 = (b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 750 750] "
         b"/FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << "
         + b" ".join(b"/g%d 9 0 R" % i for i in range(1, 41))
         + b" >> /Encoding << /Type /Encoding /Differences [1 "
         + b" ".join(b"/g%d" % i for i in range(1, 41))
         + b"] >> /FirstChar 1 /LastChar 40 /Widths [" + b"500 " * 40 + b"] /Resources << >> >>")
HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _text_page(lines: list[str]) -> bytes:
    ops = [b"BT /F2 10 Tf 12 TL 56 760 Td"]
    ops += [b"(" + line.encode("latin-1") + b") Tj T*" for line in lines]
    return b"\n".join([*ops, b"ET"])


def _garbage_page(n_lines: int) -> bytes:
    ops = [b"BT /F1 10 Tf 12 TL 56 760 Td"]
    for i in range(n_lines):
        codes = bytes((i * 7 + j) % 40 + 1 for j in range(70))
        ops.append(b"<" + codes.hex().encode() + b"> Tj T*")
    return b"\n".join([*ops, b"ET"])


def broken_font_pdf(path: Path, garbage_pages: list[int], n_pages: int = 4) -> None:
    """`n_pages` pages of prose; those in `garbage_pages` set in the encoding-less font."""
    contents = []
    for page in range(n_pages):
        if page in garbage_pages:
            contents.append(_garbage_page(55))
        else:
            tokens = words(420, seed=page)
            contents.append(_text_page([" ".join(tokens[i:i + 12])
                                        for i in range(0, len(tokens), 12)]))
    # 1 catalog, 2 pages, 3 F1, 4 F2, 9 the glyph procedure, then page + content pairs
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: TYPE3, 4: HELVETICA,
        9: _stream(b"500 0 0 0 750 750 d1 0 0 500 750 re f"),
    }
    kids = []
    for i, content in enumerate(contents):
        page, stream = 10 + 2 * i, 11 + 2 * i
        kids.append(b"%d 0 R" % page)
        objects[page] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                         b"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> "
                         b"/Contents %d 0 R >>" % stream)
        objects[stream] = _stream(content)
    objects[2] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % len(kids)
    out, offsets = bytearray(b"%PDF-1.4\n"), {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    size = max(objects) + 1
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        out += (b"%010d 00000 n \n" % offsets[number] if number in offsets
                else b"0000000000 65535 f \n")
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    path.write_bytes(bytes(out))


@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber", "poppler"])
def test_a_whole_page_of_unmapped_glyphs_needs_ocr(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "broken.pdf"
    broken_font_pdf(path, garbage_pages=[0, 1, 2])  # over half the pages: not published
    with pytest.raises(Reject) as info:
        parse_pdf(path, backend, ParseSettings())
    assert info.value.reason == Reason.NEEDS_OCR
    assert info.value.stats == {"ocr_pages": 3}
    broken_font_pdf(path, garbage_pages=[0])  # one of four: read from the others
    document = parse_pdf(path, backend, ParseSettings())
    assert [page.without_text for page in document.pages] == [True, False, False, False]
    assert set(document.word_pages) == {1, 2, 3}


@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber", "poppler"])
def test_the_same_document_with_a_sound_font_is_kept(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "sound.pdf"
    broken_font_pdf(path, garbage_pages=[])
    document = parse_pdf(path, backend, ParseSettings())
    assert len(document.pages) == 4
