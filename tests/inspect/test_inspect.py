"""`build-corpus inspect`: boxes drawn on the rendered page line up with the words, rotated pages
included; rejected documents are drawn with their reason; an unknown id is a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from reportlab.pdfgen import canvas

from loralay_build.inspect.locate import find_row
from loralay_build.inspect.render import ABSTRACT_COLOURS, COLOURS, SCALE
from tests.helpers.cli import run_cli_in_process

ABSTRACT = ("We measure how layout changes the reading of long scientific documents "
            "and report what the boxes show")
MARKER = "Zanzibarword"
ROTATIONS = (0, 90, 180, 270)


def article_pdf(path: Path, rotation: int) -> None:
    """One page: a title, an abstract, body text holding MARKER; /Rotate `rotation`."""
    c = canvas.Canvas(str(path), pagesize=(612, 792))
    c.setFont("Helvetica-Bold", 16)
    c.drawString(72, 720, f"Layout check at {rotation} degrees")
    c.setFont("Helvetica", 11)
    c.drawString(72, 690, "Abstract")
    words = ABSTRACT.split()
    c.drawString(72, 674, " ".join(words[:9]))
    c.drawString(72, 660, " ".join(words[9:]))
    body = [f"body line {k} of the article text with plain words" for k in range(12)]
    body[5] = f"the marker {MARKER} sits in the middle of this line"
    for k, line in enumerate(body):
        c.drawString(72, 620 - 16 * k, line)
    c.setPageRotation(rotation)
    c.showPage()
    c.save()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inspect")
    entries = []
    for rotation in ROTATIONS:
        article_pdf(root / f"r{rotation}.pdf", rotation)
        entries.append({"id": f"r{rotation}", "pdf": f"r{rotation}.pdf", "language": "en",
                        "abstracts": {"en": ABSTRACT}, "published": "2020-01"})
    entries.append({"id": "lost", "pdf": "r0.pdf", "language": "en",
                    "abstracts": {"en": "an abstract printed nowhere in this file at all"},
                    "published": "2020-02"})
    manifest = root / "docs.jsonl"
    manifest.write_text("".join(json.dumps(e) + "\n" for e in entries))
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(root / "data"),
                                "--executor", "serial", "--no-filter")
    assert result.returncode == 0, result.stderr
    return root / "data" / "local"


def ink_and_tint(image: Image.Image, box: list[int]) -> tuple[int, int]:
    """Dark (glyph) pixels and kept-colour-tinted background pixels inside a box."""
    x0, y0, x1, y1 = (round(v * SCALE) for v in box)
    ink = tint = 0
    for x in range(x0 + 2, x1 - 1):
        for y in range(y0 + 2, y1 - 1):
            pixel = image.getpixel((x, y))
            assert isinstance(pixel, tuple)
            r, g, b = pixel[:3]
            if r + g + b < 250:
                ink += 1
            elif b > r + 25 and r < 230:
                tint += 1
    return ink, tint


@pytest.mark.parametrize("rotation", ROTATIONS)
def test_boxes_cover_the_rendered_words(dataset: Path, tmp_path: Path, rotation: int) -> None:
    out = tmp_path / "page.png"
    result = run_cli_in_process("inspect", str(dataset), f"local:r{rotation}", "--out", str(out))
    assert result.returncode == 0, result.stderr
    row = find_row(dataset, f"local:r{rotation}")
    assert row is not None
    box = row["article_bboxes"][row["article_words"].index(MARKER)]
    image = Image.open(out).convert("RGB")
    ink, tint = ink_and_tint(image, box)
    assert ink >= 20, f"no glyphs inside the box of {MARKER} at /Rotate {rotation}"
    assert tint >= 20
    # The same box moved into the empty right-hand margin holds neither glyphs nor a tint.
    width = row["page_sizes"][0]["width"]
    shifted = [round(width - 6 - (box[2] - box[0])), box[1], round(width - 6), box[3]]
    if rotation % 180:
        shifted = [box[0], 4, box[2], 4 + box[3] - box[1]]
    assert ink_and_tint(image, shifted) == (0, 0)


def test_abstract_drawn_in_its_own_colour(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "abstract.png"
    result = run_cli_in_process("inspect", str(dataset), "local:r0", "--out", str(out), "--order")
    assert result.returncode == 0, result.stderr
    image = Image.open(out).convert("RGB")
    colours = {image.getpixel((x, y)) for x in range(image.width) for y in range(image.height)}
    assert COLOURS["abstract"] in colours and COLOURS["order"] in colours


def test_rejected_document_is_drawn_with_its_reason(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "lost.png"
    result = run_cli_in_process("inspect", str(dataset), "local:lost", "--out", str(out),
                                "--all-pages")
    assert result.returncode == 0, result.stderr
    assert "abstract_not_found" in result.stderr
    page = tmp_path / "lost-p1.png"
    assert page.is_file() and Image.open(page).size[0] > 500


def test_unknown_id_is_a_usage_error(dataset: Path, tmp_path: Path) -> None:
    result = run_cli_in_process("inspect", str(dataset), "local:nope", "--out",
                                str(tmp_path / "x.png"))
    assert result.returncode == 2
    assert "local:nope" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.png").exists()


def test_page_out_of_range_is_a_usage_error(dataset: Path, tmp_path: Path) -> None:
    result = run_cli_in_process("inspect", str(dataset), "local:r0", "--page", "7", "--out",
                                str(tmp_path / "x.png"))
    assert result.returncode == 2 and "pages 1 to 1" in result.stderr


RESUME = ("Nous mesurons comment la mise en page change la lecture des longs documents "
          "scientifiques et nous montrons ce que les boites disent")


def test_abstracts_in_two_languages_get_two_colours(tmp_path: Path) -> None:
    """A French and an English abstract on one page are told apart in the picture and the
    legend shows each language with its own colour."""
    c = canvas.Canvas(str(tmp_path / "two.pdf"), pagesize=(612, 792))
    c.setFont("Helvetica", 11)
    y = 720
    for heading, text in (("Résumé", RESUME), ("Abstract", ABSTRACT)):
        c.drawString(72, y, heading)
        words = text.split()
        for k in range(0, len(words), 9):
            y -= 14
            c.drawString(72, y, " ".join(words[k:k + 9]))
        y -= 30
    for k in range(14):
        c.drawString(72, y - 14 * k, f"body line {k} of the article text with plain words")
    c.showPage()
    c.save()
    manifest = tmp_path / "docs.jsonl"
    manifest.write_text(json.dumps({"id": "two", "pdf": "two.pdf", "language": "en",
                                    "abstracts": {"fr": RESUME, "en": ABSTRACT},
                                    "published": "2020-01"}) + "\n")
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(tmp_path / "data"),
                                "--executor", "serial", "--no-filter")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "two.png"
    result = run_cli_in_process("inspect", str(tmp_path / "data" / "local"), "local:two", "--out",
                                str(out))
    assert result.returncode == 0, result.stderr
    image = Image.open(out).convert("RGB")
    pixels = {rgb: n for n, rgb in image.getcolors(maxcolors=1 << 24) or []}
    english, french = ABSTRACT_COLOURS[0], ABSTRACT_COLOURS[1]  # languages in sorted order
    assert english != french
    # each colour outlines one abstract's words (dozens of boxes) and marks its legend line
    assert pixels.get(english, 0) > 500 and pixels.get(french, 0) > 500
