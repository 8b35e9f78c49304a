"""`inspect` of scanned documents: it reads by OCR only the page it draws (the row holds
what the build read of the others), and draws a `needs_ocr` reject of a dataset that has
nothing published."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from loralay_build.inspect.layers import ABSTRACT, OCR, document_layers
from loralay_build.inspect.locate import find_row
from loralay_build.parse.ocr import Reader
from loralay_build.records import Page
from loralay_build.sandbox.pdfgen import ArticleSpec, render_article, render_scanned
from loralay_build.sandbox.textgen import ProseGenerator
from tests.helpers.cli import run_cli_in_process
from tests.helpers.ocr import needs_tesseract

pytestmark = needs_tesseract("fr")


def scanned_manifest(folder: Path, sections: int) -> Path:
    gen = ProseGenerator(31)
    abstract = gen.paragraph("fr", 4)
    spec = ArticleSpec(title=gen.title("fr"), authors=gen.authors(),
                       abstracts=[("Résumé", abstract)],
                       sections=[(f"{k} Partie", [gen.paragraph("fr", 6) for _ in range(3)])
                                 for k in range(1, sections + 1)])
    (folder / "scan.pdf").write_bytes(render_scanned(render_article(spec)))
    manifest = folder / "docs.jsonl"
    manifest.write_text(json.dumps({"id": "scan", "pdf": "scan.pdf", "language": "fr",
                                    "abstracts": {"fr": abstract}}) + "\n")
    return manifest


def test_only_the_drawn_page_is_read_by_ocr(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = scanned_manifest(tmp_path, 3)
    out = tmp_path / "out"
    built = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--ocr",
                               "--no-filter", "--executor", "serial", "-q")
    assert built.returncode == 0, built.stderr
    row = find_row(out / "local", "local:scan")
    assert row is not None and len(row["page_sizes"]) >= 2
    assert set(row["page_text_origin"]) == {"ocr"}

    read: list[int] = []
    real_read = Reader.read

    def counted(self: Reader, pdf: Any, page: Page, models: list[str]) -> Any:
        read.append(page.index)
        return real_read(self, pdf, page, models)

    monkeypatch.setattr(Reader, "read", counted)
    layers = document_layers(out / "local", "scan", page=2)
    assert read == [1]
    kept = [(m.text, m.box) for m in layers.pages[1].marks if m.kind == OCR]
    assert kept == [(w, tuple(b)) for w, b, p in zip(row["article_words"], row["article_bboxes"],
                                                     row["word_pages"], strict=True) if p == 1]
    read.clear()
    first = document_layers(out / "local", "scan")  # the abstract's page
    assert read == [0] and first.drawn == [0]
    assert [m for m in first.pages[0].marks if m.kind == ABSTRACT]


def test_a_needs_ocr_reject_of_a_dataset_with_nothing_published_is_drawn(
        tmp_path: Path) -> None:
    manifest = scanned_manifest(tmp_path, 1)
    out = tmp_path / "out"
    built = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--no-filter",
                               "--executor", "serial")
    assert built.returncode == 1  # nothing published
    assert not (out / "local").exists()
    png = tmp_path / "scan.png"
    result = run_cli_in_process("inspect", str(out / "local"), "scan", "--out", str(png))
    assert result.returncode == 0, result.stderr
    assert "local:scan: not published: rejected as needs_ocr" in result.stderr
    assert Image.open(png).size[0] > 500
