"""Page images: aligned with the boxes on every page frame, removed words painted out, a
`pages` configuration that `datasets` loads, and the text row kept when images cannot be."""

from __future__ import annotations

import io
import json
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pypdfium2 as pdfium
import pytest
from PIL import Image
from reportlab.pdfgen import canvas

from loralay_build.config import ImageSettings
from loralay_build.errors import ConfigError
from loralay_build.gray_png import pack_rows, pack_rows_python
from loralay_build.images import (
    Canvas,
    PageImage,
    background,
    gray_lut,
    page_images,
    pixel_box,
    prepare,
    render,
    render_page,
)
from loralay_build.native import NATIVE_ENV, native_module
from loralay_build.parse import parse_pdf
from tests.helpers.cli import run_cli_in_process, write_toml
from tests.helpers.local import make_corpus, write_manifest
from tests.helpers.pdfgen import columns_pdf, rotated_pdf

PNG = ImageSettings(enabled=True, format="png")


def _ink_share(image: Image.Image, boxes: list[tuple[float, float, float, float]],
               dpi: int) -> float:
    """Share of boxes holding pixels clearly darker or other than the page background."""
    pixels = np.asarray(image.convert("RGB")).astype(int)
    bg = np.array(background(image.convert("RGB")))
    inked = 0
    for box in boxes:
        x0, y0, x1, y1 = pixel_box(box, dpi / 72, image.width, image.height)
        region = pixels[y0:y1, x0:x1]
        inked += bool(region.size and (np.abs(region - bg).sum(axis=2) > 60).any())
    return inked / max(1, len(boxes))


def _frames(tmp_path: Path) -> list[Path]:
    """Pages in every frame a box must follow: /Rotate 0/90/180/270, an offset MediaBox, a
    CropBox smaller than the MediaBox."""
    paths = []
    for rotation in (0, 90, 180, 270):
        path = tmp_path / f"rot{rotation}.pdf"
        rotated_pdf(path, rotation)
        paths.append(path)
    for name, setter in (("media", "set_mediabox"), ("crop", "set_cropbox")):
        source = tmp_path / "cols.pdf"
        columns_pdf(source, 2)
        pdf = pdfium.PdfDocument(str(source))
        page = pdf[0]
        left, bottom, right, top = page.get_mediabox()
        if name == "media":
            page.set_mediabox(left - 40, bottom - 25, right + 10, top + 30)
        else:
            page.set_cropbox(left + 30, bottom + 50, right - 20, top - 40)
        getattr(page, setter)  # both setters exist on this pypdfium2
        path = tmp_path / f"{name}.pdf"
        pdf.save(str(path))
        pdf.close()
        paths.append(path)
    return paths


def test_boxes_land_on_their_ink_in_every_page_frame(tmp_path: Path) -> None:
    for path in _frames(tmp_path):
        doc = parse_pdf(str(path))
        assert doc.words, path.name
        images = page_images(str(path), [p.index for p in doc.pages], {}, PNG)
        for image in images:
            decoded = Image.open(io.BytesIO(image.data))
            assert decoded.size == (image.width_px, image.height_px)
            boxes = [b for b, p in zip(doc.boxes, doc.word_pages, strict=True)
                     if p == image.page]
            assert _ink_share(decoded, boxes, PNG.dpi) >= 0.99, path.name


def test_removed_words_are_painted_with_the_background(tmp_path: Path) -> None:
    path = tmp_path / "cols.pdf"
    columns_pdf(path, 2)
    doc = parse_pdf(str(path))
    removed = {0: doc.boxes[:40]}  # as if these words were an abstract
    [masked] = page_images(str(path), [0], removed, PNG)
    [plain] = page_images(str(path), [0], {}, PNG)
    masked_px = np.asarray(Image.open(io.BytesIO(masked.data)).convert("RGB"))
    plain_image = Image.open(io.BytesIO(plain.data)).convert("RGB")
    assert len(masked.masked_boxes) == 40
    for x0, y0, x1, y1 in masked.masked_boxes:
        region = masked_px[y0:y1, x0:x1].reshape(-1, 3)
        assert (region == region[0]).all()  # one uniform colour: the background
    assert _ink_share(plain_image, doc.boxes[:40], PNG.dpi) == 1.0  # the ink was there
    kept = doc.boxes[60:]
    assert _ink_share(Image.open(io.BytesIO(masked.data)), kept, PNG.dpi) >= 0.99


def _colour_and_gray(path: Path) -> None:
    """Two pages of black words; the first also holds a red rectangle."""
    c = canvas.Canvas(str(path), pagesize=(612, 792))
    for red in (True, False):
        c.setFont("Helvetica", 12)
        for j in range(12):
            c.drawString(72, 700 - 16 * j, f"line {j} of plain black words on the page")
        if red:
            c.setFillColorRGB(0.8, 0.1, 0.1)
            c.rect(72, 300, 200, 100, fill=1, stroke=0)
        c.showPage()
    c.save()


def _decoded(image: PageImage) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(image.data)).convert("RGB")).astype(int)


def _chroma(pixels: np.ndarray) -> int:
    """The largest difference between a pixel's channels: 0 on a gray image."""
    return int(np.abs(pixels - pixels[..., :1]).max())


def test_pages_without_colour_are_stored_losslessly_in_few_grays(tmp_path: Path) -> None:
    path = tmp_path / "two.pdf"
    _colour_and_gray(path)
    doc = parse_pdf(str(path))
    second = [b for b, p in zip(doc.boxes, doc.word_pages, strict=True) if p == 1]
    settings = ImageSettings(enabled=True)  # the defaults: webp, color auto, 16 gray levels
    colour, gray = page_images(str(path), [0, 1], {1: second[:5]}, settings)
    assert _chroma(_decoded(colour)) > 100  # the red rectangle keeps its colour
    assert colour.data[8:16] == b"WEBPVP8 "  # lossy WebP
    assert gray.data[:8] == b"\x89PNG\r\n\x1a\n" and gray.data[24] == 4  # PNG at 4 bits
    pixels = _decoded(gray)
    assert _chroma(pixels) == 0
    assert set(np.unique(pixels)) <= {17 * k for k in range(16)}  # nothing between levels
    assert len(gray.masked_boxes) == 5
    for x0, y0, x1, y1 in gray.masked_boxes:
        assert (pixels[y0:y1, x0:x1] == 255).all()  # the white background, exactly
    assert _ink_share(Image.open(io.BytesIO(gray.data)), second[5:], 100) == 1.0
    again = page_images(str(path), [0, 1], {1: second[:5]}, settings)
    assert [p.data for p in again] == [colour.data, gray.data]


def test_a_gray_png_page_is_the_rendering_at_four_bits(tmp_path: Path) -> None:
    path = tmp_path / "two.pdf"
    _colour_and_gray(path)
    [image] = page_images(str(path), [1], {}, PNG)
    assert image.data[24] == 4  # the IHDR bit depth
    decoded = Image.open(io.BytesIO(image.data))
    pdf = pdfium.PdfDocument(str(path))
    rendered = render_page(pdf, 1, 100, 10**8).convert("L").point(gray_lut(16))
    pdf.close()
    assert decoded.mode == "L" and decoded.tobytes() == rendered.tobytes()


def test_pages_of_other_sizes_in_one_document_render_as_they_do_alone(tmp_path: Path) -> None:
    """A document's pages share one bitmap: a page smaller or wider than the one before must
    come out exactly as rendered on its own."""
    path = tmp_path / "sizes.pdf"
    c = canvas.Canvas(str(path))
    for size in [(612, 792), (200, 150), (842, 595), (300, 400)]:
        c.setPageSize(size)
        c.setFillColorRGB(0.1, 0.2, 0.9)
        c.drawString(20, size[1] - 40, f"a page of {size[0]} by {size[1]} points")
        c.showPage()
    c.save()
    settings = ImageSettings(enabled=True, format="png", color="rgb")
    pages = page_images(str(path), [0, 1, 2, 3], {}, settings)
    pdf = pdfium.PdfDocument(str(path))
    alone = [np.asarray(render_page(pdf, i, settings.dpi, settings.max_pixels)).astype(int)
             for i in range(4)]
    pdf.close()
    for page, expected in zip(pages, alone, strict=True):
        assert (page.height_px, page.width_px) == expected.shape[:2]
        assert np.array_equal(_decoded(page), expected), page.page


@pytest.mark.parametrize("core", ["native", "python"])
@pytest.mark.parametrize("channel", [0, 1, 2])
def test_one_pixel_of_colour_in_any_channel_keeps_a_page_in_colour(
        channel: int, core: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if core == "native" and native_module() is None:
        pytest.skip("the compiled core is not built")
    monkeypatch.setenv(NATIVE_ENV, "1" if core == "native" else "0")
    settings = ImageSettings(enabled=True)
    pixels = np.full((7, 5, 4), 204, np.uint8)
    pixels[..., 3] = 17  # the unused fourth byte never counts
    canvas = Canvas()
    assert prepare(pixels, settings, canvas).mode == "L"
    pixels[6, 4, channel] = 203
    assert prepare(pixels, settings, canvas).mode == "RGBX"
    small = prepare(np.full((3, 3, 4), 9, np.uint8), settings, canvas)  # smaller, same canvas
    assert small.mode == "L" and small.size == (3, 3)


@pytest.mark.skipif(native_module() is None, reason="the compiled core is not built")
def test_the_compiled_core_prepares_and_packs_pages_as_python_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real renderings (a colour and a gray page, at every gray setting) and odd widths:
    the same stored pixels and PNG scanlines on both paths."""
    path = tmp_path / "two.pdf"
    _colour_and_gray(path)
    pdf = pdfium.PdfDocument(str(path))
    pages = [render(pdf, i, 100, 10**8, False, Canvas()).copy() for i in (0, 1)]
    pdf.close()
    rng = np.random.default_rng(7)
    pages += [np.repeat(rng.integers(0, 256, (9, width, 1), np.uint8), 4, axis=2)
              for width in (1, 5, 13)]
    for levels in (2, 4, 16, 256, 0):
        settings = ImageSettings(enabled=True, gray_levels=levels)
        out = {}
        for core in ("1", "0"):
            monkeypatch.setenv(NATIVE_ENV, core)
            out[core] = [(image.mode, image.tobytes())
                         for image in (prepare(p, settings, Canvas()) for p in pages)]
        assert out["1"] == out["0"], levels
        assert [mode for mode, _ in out["1"]] == ["RGBX", "L", "L", "L", "L"]
    monkeypatch.setenv(NATIVE_ENV, "1")
    for bits in (1, 2, 4, 8):
        for page in pages:
            plane = np.ascontiguousarray(page[..., 0])
            assert pack_rows(plane, bits) == pack_rows_python(plane, bits).tobytes()


def test_gray_pages_can_be_stored_as_lossless_webp(tmp_path: Path) -> None:
    path = tmp_path / "two.pdf"
    _colour_and_gray(path)
    settings = ImageSettings(enabled=True, gray_format="webp")
    [webp] = page_images(str(path), [1], {}, settings)
    [png] = page_images(str(path), [1], {}, ImageSettings(enabled=True))
    assert webp.data[8:16] == b"WEBPVP8L"  # lossless WebP
    assert settings.encoder(gray=True)["lossless"] is True
    assert np.array_equal(_decoded(webp), _decoded(png))  # the same pixels either way


def test_the_color_setting_forces_gray_or_colour(tmp_path: Path) -> None:
    path = tmp_path / "two.pdf"
    _colour_and_gray(path)
    gray = page_images(str(path), [0, 1], {}, ImageSettings(enabled=True, color="gray"))
    assert [_chroma(_decoded(p)) for p in gray] == [0, 0]
    assert len(np.unique(_decoded(gray[0]))) <= 16
    rgb = page_images(str(path), [1], {}, ImageSettings(enabled=True, color="rgb"))
    assert len(np.unique(_decoded(rgb[0]))) > 16  # lossy WebP in colour, as asked


@pytest.mark.parametrize("table", [{"color": "grey"}, {"gray_levels": 8}, {"method": 7},
                                   {"gray_format": "jpeg"}])
def test_bad_image_settings_are_refused(table: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=r"\[images\]"):
        ImageSettings(**table)  # type: ignore[arg-type]


def test_over_budget_pages_cost_the_images_not_the_text(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "m.jsonl", make_corpus(docs, 2))
    config = write_toml(tmp_path / "c.toml", {"images": {"max_pixels": 1000}})
    out = tmp_path / "out"
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1", "--no-filter", "--page-images", "--config", str(config))
    assert result.returncode == 0, result.stderr
    build = json.loads((out / "local" / "build.json").read_text())
    assert build["pages"]["documents_without_images"] == ["local:doc0", "local:doc1"]
    assert sum(f["rows"] for f in build["files"]) == 2


@pytest.mark.parametrize("mask", [True, False])
def test_pages_configuration_loads_and_hides_the_abstract(tmp_path: Path, mask: bool) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 3)
    manifest = write_manifest(docs / "m.jsonl", entries)
    out = tmp_path / "out"
    config = write_toml(tmp_path / "c.toml", {"images": {"format": "png"}})
    flags = ["--page-images", "--config", str(config)] + ([] if mask else ["--no-mask"])
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1", "--no-filter", *flags)
    assert result.returncode == 0, result.stderr
    folder = out / "local"
    pages = datasets.load_dataset(str(folder), "pages")
    text = datasets.load_dataset(str(folder))
    by_doc = {row["article_id"]: row for split in text for row in text[split]}
    total_pages = sum(len(row["page_sizes"]) for row in by_doc.values())
    assert sum(len(pages[s]) for s in pages) == total_pages
    card = (folder / "README.md").read_text()
    assert ("--no-mask" in card) != mask
    assert "reduced to 16 gray levels and stored losslessly" in card
    build = json.loads((folder / "build.json").read_text())["pages"]
    assert (build["color"], build["gray_levels"]) == ("auto", 16)
    assert build["encoder"]["gray"]["bits"] == 4 and "bits" not in build["encoder"]["colour"]
    for split in pages:
        assert set(pages[split]["article_id"]) <= {k for k, r in by_doc.items()
                                                    if k in set(text[split]["article_id"])}
        for row in pages[split]:
            image = row["image"]
            assert image.size == (row["width_px"], row["height_px"]) and row["dpi"] == 100
            doc = by_doc[row["article_id"]]
            boxes = [tuple(b) for b, p in zip(doc["article_bboxes"], doc["word_pages"],
                                              strict=True) if p == row["page"]]
            assert _ink_share(image, boxes, 100) >= 0.99
            if not mask:
                assert row["masked_boxes"] == []
            elif row["page"] == 0:  # both abstracts are on the first page
                removed = sum(len(a["text"].split()) for a in doc["abstracts"])
                assert len(row["masked_boxes"]) >= 0.9 * removed
            if mask:
                pixels = np.asarray(image.convert("RGB"))
                for x0, y0, x1, y1 in row["masked_boxes"]:
                    region = pixels[y0:y1, x0:x1].reshape(-1, 3)
                    assert (region == region[0]).all()
    # The same input and settings give the same bytes.
    shards = {p.name: p.read_bytes() for p in (folder / "pages").glob("*.parquet")}
    assert run_cli_in_process("local", "--input", str(manifest), "--out", str(tmp_path / "again"),
                              "--workers", "1", "--no-filter", *flags).returncode == 0
    assert {p.name: p.read_bytes()
            for p in (tmp_path / "again" / "local" / "pages").glob("*.parquet")} == shards
    assert pq.read_schema(next(iter((folder / "pages").glob("*.parquet")))).names[2] == "image"


def test_a_grown_build_keeps_the_page_shards_it_has(tmp_path: Path) -> None:
    """One more document: its pages go to a new shard, and every page shard in place keeps
    its bytes (the pages are planned like the text shards)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 4)
    out = tmp_path / "out"
    flags = ["--out", str(out), "--workers", "1", "--no-filter", "--page-images"]
    manifest = write_manifest(docs / "m.jsonl", entries[:3])
    assert run_cli_in_process("local", "--input", str(manifest), *flags).returncode == 0
    before = {p.read_bytes() for p in (out / "local" / "pages").glob("*.parquet")}
    manifest = write_manifest(docs / "m.jsonl", entries)
    assert run_cli_in_process("local", "--input", str(manifest), *flags).returncode == 0
    after = {p.read_bytes() for p in (out / "local" / "pages").glob("*.parquet")}
    assert before and before <= after  # kept byte for byte, under the new generation's names
    assert len(after) == len(before) + 1
    pages = datasets.load_dataset(str(out / "local"), "pages")
    assert "local:doc3" in {a for split in pages for a in pages[split]["article_id"]}


def test_a_rerun_with_nothing_new_keeps_the_page_shards_the_card_names(tmp_path: Path) -> None:
    """The text set is up to date: its card and build.json stay, and so must every page
    shard they name (none replaced by a copy under a name the card does not match)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "m.jsonl", make_corpus(docs, 2))
    out = tmp_path / "out"
    flags = ["--input", str(manifest), "--out", str(out), "--workers", "1", "--no-filter",
             "--page-images"]
    assert run_cli_in_process("local", *flags).returncode == 0
    folder = out / "local"
    before = sorted(p.name for p in (folder / "pages").iterdir())
    assert run_cli_in_process("local", *flags).returncode == 0
    assert sorted(p.name for p in (folder / "pages").iterdir()) == before
    listed = json.loads((folder / "build.json").read_text())["pages"]["files"]
    assert all((folder / f["name"]).is_file() for f in listed)
    pages = datasets.load_dataset(str(folder), "pages", cache_dir=str(tmp_path / "cache"))
    assert sum(len(pages[split]) for split in pages) > 0
