"""OCR of pages without a usable text layer: scans and broken fonts become words and boxes
in the frame and convention of the PDF words, only on the pages that need it."""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest

from loralay_build.errors import ConfigError, Reason, Reject
from loralay_build.inspect.layers import ABSTRACT, KEPT, document_layers
from loralay_build.inspect.layers import OCR as OCR_WORDS
from loralay_build.parse import parse_pdf
from loralay_build.parse.ocr import OcrSettings, check_ocr
from loralay_build.records import Document
from loralay_build.sandbox.pdfgen import (
    ArticleSpec,
    render_article,
    render_broken_font,
    render_scanned,
)
from loralay_build.sandbox.textgen import ProseGenerator
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess, write_toml
from tests.helpers.ocr import needs_tesseract

OCR = OcrSettings(enabled=True)



pytestmark = needs_tesseract("fr")


def _spec(seed: int, sections: int = 2, lang: str = "fr") -> ArticleSpec:
    gen = ProseGenerator(seed)
    return ArticleSpec(
        title=gen.title(lang), authors=gen.authors(),
        abstracts=[("Résumé", gen.paragraph(lang, 4))],
        sections=[(f"{k} Partie", [gen.paragraph(lang, 6) for _ in range(3)])
                  for k in range(1, sections + 1)],
    )


def _tokens(words: list[str]) -> Counter[str]:
    return Counter(w.strip(".,;:()«»'’").lower() for w in words if w.strip(".,;:()«»'’"))


def _recall(found: list[str], truth: list[str]) -> float:
    want = _tokens(truth)
    return sum((want & _tokens(found)).values()) / sum(want.values())


def _page_words(doc: Document, page: int) -> list[tuple[str, tuple[float, ...]]]:
    return [(w, b) for w, b, p in zip(doc.words, doc.boxes, doc.word_pages, strict=True)
            if p == page]


def test_an_image_only_pdf_is_read_with_boxes_where_the_words_were(tmp_path: Path) -> None:
    digital = render_article(_spec(11))
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(render_scanned(digital))
    (tmp_path / "digital.pdf").write_bytes(digital)
    with pytest.raises(Reject) as info:
        parse_pdf(scan)
    assert info.value.reason == Reason.NEEDS_OCR
    truth = parse_pdf(tmp_path / "digital.pdf")
    read = parse_pdf(scan, ocr=OCR, languages=["fr"])
    assert [p.ocr_confidence is not None for p in read.pages] == [True] * len(truth.pages)
    assert min(p.ocr_confidence or 0 for p in read.pages) > 0.8
    assert _recall(read.words, truth.words) >= 0.95
    # each word found once on a page of both lies where the PDF put it, within a few points
    for page in range(len(truth.pages)):
        mine = {w: b for w, b in _page_words(read, page)}
        theirs = Counter(w for w, _ in _page_words(truth, page))
        close = total = 0
        for word, box in _page_words(truth, page):
            if theirs[word] == 1 and word in mine and len(word) > 3:
                total += 1
                close += all(abs(a - b) <= 3.0 for a, b in zip(box, mine[word], strict=True))
        assert total > 20 and close / total >= 0.9, (page, close, total)


def test_a_font_with_a_scrambled_tounicode_map_is_detected_and_read(tmp_path: Path) -> None:
    spec = _spec(12)
    path = tmp_path / "broken.pdf"
    path.write_bytes(render_broken_font(spec))
    with pytest.raises(Reject) as info:
        parse_pdf(path)
    assert info.value.reason == Reason.NEEDS_OCR
    read = parse_pdf(path, ocr=OCR, languages=["fr"])
    assert _recall(read.words, spec.abstracts[0][1].split()) >= 0.95


def test_only_the_scanned_page_is_read_by_ocr(tmp_path: Path) -> None:
    digital = render_article(_spec(13, sections=7))
    scanned = render_scanned(digital)
    mixed = pdfium.PdfDocument.new()
    source, images = pdfium.PdfDocument(digital), pdfium.PdfDocument(scanned)
    assert len(source) >= 3
    mixed.import_pages(source, [0])
    mixed.import_pages(images, [1])
    mixed.import_pages(source, list(range(2, len(source))))
    path = tmp_path / "mixed.pdf"
    mixed.save(str(path))
    for pdf in (mixed, source, images):
        pdf.close()
    (tmp_path / "digital.pdf").write_bytes(digital)
    truth = parse_pdf(tmp_path / "digital.pdf")
    read = parse_pdf(path, ocr=OCR, languages=["fr"])
    assert [p.ocr_confidence is not None for p in read.pages] == [
        i == 1 for i in range(len(truth.pages))]
    for page in (0, *range(2, len(truth.pages))):
        assert _page_words(read, page) == _page_words(truth, page)
    assert _recall([w for w, _ in _page_words(read, 1)],
                   [w for w, _ in _page_words(truth, 1)]) >= 0.95


def test_a_missing_language_model_or_engine_is_named_with_its_install_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_english = tmp_path / "tessdata"
    only_english.mkdir()
    with pytest.raises(ConfigError, match="no Tesseract language data"):
        check_ocr(OcrSettings(enabled=True, tessdata=str(only_english)), ["fr"])
    found = check_ocr.__globals__["tessdata_dir"](OCR)
    (only_english / "eng.traineddata").symlink_to(found / "eng.traineddata")
    with pytest.raises(ConfigError, match=r"mlt.*apt-get install tesseract-ocr "
                                          r"tesseract-ocr-mlt tesseract-ocr-fra$"):
        check_ocr(OcrSettings(enabled=True, tessdata=str(only_english)), ["mt", "fr"])
    monkeypatch.setitem(sys.modules, "tesserocr", None)  # the engine not installed
    with pytest.raises(ConfigError, match=r"pip install 'loralay-build\[ocr\]'"):
        check_ocr(OCR, ["fr"])


def _manifest(folder: Path, pdfs: dict[str, tuple[bytes, ArticleSpec]]) -> Path:
    lines = []
    for name, (data, spec) in pdfs.items():
        (folder / f"{name}.pdf").write_bytes(data)
        lines.append(json.dumps({"id": name, "pdf": f"{name}.pdf", "language": "fr",
                                 "abstracts": {"fr": spec.abstracts[0][1]},
                                 "published": "2001-02", "title": spec.title}))
    path = folder / "docs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _load(folder: Path, config: str, tmp: Path) -> list[dict[str, Any]]:
    """Every row of every split, as `datasets` reads the published folder."""
    import datasets

    loaded = datasets.load_dataset(str(folder), config, cache_dir=str(tmp / "cache"))
    return [row for split in loaded.values() for row in split]


def _shards(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.parquet"))}


def test_needs_ocr_then_a_run_with_ocr_publishes_and_one_without_changes_nothing(
        tmp_path: Path) -> None:
    specs = {name: _spec(20 + i) for i, name in enumerate(("digital", "scan", "broken"))}
    pdfs = {
        "digital": (render_article(specs["digital"]), specs["digital"]),
        "scan": (render_scanned(render_article(specs["scan"])), specs["scan"]),
        "broken": (render_broken_font(specs["broken"]), specs["broken"]),
    }
    manifest = _manifest(tmp_path, pdfs)
    out = tmp_path / "data"
    first = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out), "--name",
                               "mine")
    assert first.returncode == 0, first.stderr
    assert "2 document(s) need OCR" in first.stderr and "--ocr" in first.stderr
    status = run_cli_in_process("status", str(out / "mine"))
    assert "2 document(s) need OCR (" in status.stdout, status.stdout
    report = run_cli_in_process("report", str(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert "2 document(s) need OCR" in (tmp_path / "report" / "report.md").read_text()
    rejects = [json.loads(line) for line in (out / "mine" / "rejects.jsonl").read_text()
               .splitlines()]
    assert {r["id"]: r["reason"] for r in rejects} == {"local:scan": "needs_ocr",
                                                        "local:broken": "needs_ocr"}

    config = write_toml(tmp_path / "pages.toml", {"images": {"dpi": 50}})
    second = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--name",
                                "mine", "--ocr", "--page-images", "--config", str(config))
    assert second.returncode == 0, second.stderr
    rows = {r["article_id"].removeprefix("local:"): r
            for r in _load(out / "mine", "default", tmp_path)}
    assert set(rows) == {"digital", "scan", "broken"}
    for name in ("scan", "broken"):
        row = rows[name]
        assert set(row["page_text_origin"]) == {"ocr"}
        assert all(c is not None and c > 0.5 for c in row["page_ocr_confidence"])
        # the abstract was found through the OCR's errors and removed from the body
        (match,) = row["matches"]
        abstract = specs[name].abstracts[0][1].split()
        assert match["found"] and match["word_end"] - match["word_start"] >= 0.95 * len(abstract)
    assert set(rows["digital"]["page_text_origin"]) == {"pdf"}
    assert set(rows["digital"]["page_ocr_confidence"]) == {None}
    pages = _load(out / "mine", "pages", tmp_path)
    masked = {p["article_id"]: p for p in pages if p["page"] == 0}  # the abstract's page
    assert masked["local:scan"]["masked_boxes"], "the OCRed abstract is painted over"
    card = (out / "mine" / "README.md").read_text(encoding="utf-8")
    assert "page_text_origin" in card and "page_ocr_confidence" in card

    stats = run_cli_in_process("stats", str(out / "mine"), "--json")
    ocr = [split["ocr"] for split in json.loads(stats.stdout)["splits"].values()]
    assert sum(n["documents"] for n in ocr) == 2 and sum(n["pages"] for n in ocr) >= 2
    assert "pages read by OCR" in run_cli_in_process("stats", str(out / "mine")).stdout
    layers = document_layers(out / "mine", "local:scan")  # what `inspect` draws
    kinds = Counter(mark.kind for page in layers.pages.values() for mark in page.marks)
    assert kinds[OCR_WORDS] > 100 and kinds[KEPT] == 0 and kinds[ABSTRACT] > 40, kinds

    before = _shards(out / "mine")
    third = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out), "--name",
                               "mine", "--page-images", "--config", str(config))
    assert third.returncode == 0, third.stderr
    assert _shards(out / "mine") == before
    assert "need OCR" not in third.stderr


def test_ocr_without_its_language_model_is_refused_before_any_work(tmp_path: Path) -> None:
    config = write_toml(tmp_path / "ocr.toml", {"ocr": {"tessdata": str(tmp_path / "none")}})
    out = tmp_path / "data"
    result = run_cli_in_process("hal", "--out", str(out), "--config", str(config), "--ocr",
                                "--limit", "1")
    assert result.returncode == 2, result.stderr
    assert "apt-get install tesseract-ocr tesseract-ocr-fra" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


def _picture_pdf(path: Path, size: tuple[float, float], ink: bool) -> None:
    """One page covered by a picture: a white one, or one with a bar of ink."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    image = Image.new("L", (200, 200), 255)
    if ink:
        ImageDraw.Draw(image).rectangle((20, 90, 180, 110), fill=0)
    canvas = Canvas(str(path), pagesize=size, invariant=1)
    canvas.drawImage(ImageReader(image), 0, 0, size[0], size[1])
    canvas.showPage()
    canvas.save()


def test_a_page_too_large_to_render_is_too_large_and_an_empty_reading_no_text_layer(
        tmp_path: Path) -> None:
    huge, blank = tmp_path / "huge.pdf", tmp_path / "blank.pdf"
    _picture_pdf(huge, (14_000.0, 14_000.0), ink=True)
    _picture_pdf(blank, (595.0, 842.0), ink=False)
    with pytest.raises(Reject) as info:
        parse_pdf(huge, ocr=OCR, languages=["en"])
    assert info.value.reason == Reason.TOO_LARGE and "pixels" in info.value.detail
    with pytest.raises(Reject) as info:
        parse_pdf(blank, ocr=OCR, languages=["en"])
    assert info.value.reason == Reason.NO_TEXT_LAYER


def test_a_page_read_too_slowly_is_an_ocr_timeout(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(render_scanned(render_article(_spec(30))))
    with pytest.raises(Reject) as info:
        parse_pdf(path, ocr=OcrSettings(enabled=True, page_seconds=0.001), languages=["fr"])
    assert info.value.reason == Reason.OCR_TIMEOUT
