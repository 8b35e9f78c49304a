"""What a run without `--ocr` leaves for OCR, and what a later run with `--ocr` alone does
with it: a digital paper behind a cover picture is published from its text page (the cover
`none`), a scan waits as `needs_ocr`; `--ocr` then publishes the scan and re-reads the
cover, rewriting that row only."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from pathlib import Path
from typing import Any

from loralay_build.sandbox.pdfgen import (
    ArticleSpec,
    render_article,
    render_scanned,
    with_cover_picture,
)
from loralay_build.sandbox.textgen import ProseGenerator
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess
from tests.helpers.ocr import needs_tesseract

pytestmark = needs_tesseract("en")


def _spec(seed: int) -> ArticleSpec:
    gen = ProseGenerator(seed)
    return ArticleSpec(title=gen.title("en"), authors=gen.authors(),
                       abstracts=[("Abstract", gen.paragraph("en", 4))],
                       sections=[("1 Part", [gen.paragraph("en", 5) for _ in range(2)])])


def _manifest(folder: Path, pdfs: dict[str, tuple[bytes, ArticleSpec]]) -> Path:
    lines = []
    for name, (data, spec) in pdfs.items():
        (folder / f"{name}.pdf").write_bytes(data)
        lines.append(json.dumps({"id": name, "pdf": f"{name}.pdf", "language": "en",
                                 "abstracts": {"en": spec.abstracts[0][1]},
                                 "published": "2003-04", "title": spec.title}))
    path = folder / "docs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rows(folder: Path, tmp: Path) -> dict[str, dict[str, Any]]:
    """Every row, as `datasets` reads the published folder, by document name."""
    import datasets

    loaded = datasets.load_dataset(str(folder), "default", cache_dir=str(tmp / "cache"))
    datasets.disable_caching()
    return {row["article_id"].removeprefix("local:"): row
            for split in loaded.values() for row in split}


def _shards(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.parquet"))}


def _build(tmp_path: Path, names: tuple[str, ...]) -> tuple[tuple[str, ...], Path]:
    """The documents `names` (of digital, cover, scan) in a manifest, and the command line
    that builds them into `tmp_path/data/mine`."""
    specs = {name: _spec(50 + i) for i, name in enumerate(("digital", "cover", "scan"))}
    made = {"digital": render_article(specs["digital"])}
    if "cover" in names:
        made["cover"] = with_cover_picture(render_article(specs["cover"]))
    if "scan" in names:
        made["scan"] = render_scanned(render_article(specs["scan"]))
    manifest = _manifest(tmp_path, {name: (made[name], specs[name]) for name in names})
    out = tmp_path / "data"
    return ("local", "--input", str(manifest), "--out", str(out), "--name", "mine"), out / "mine"


def test_a_cover_picture_does_not_reject_a_paper_and_ocr_alone_reads_it_later(
        tmp_path: Path) -> None:
    build, folder = _build(tmp_path, ("digital", "cover"))
    first = run_cli_subprocess(*build)  # its end-of-run hint is read
    assert first.returncode == 0, first.stderr
    rows = _rows(folder, tmp_path / "1")
    assert set(rows) == {"digital", "cover"}
    cover = rows["cover"]
    assert cover["page_text_origin"] == ["none", "pdf"]
    assert cover["page_ocr_confidence"] == [None, None]
    assert set(cover["word_pages"]) == {1}
    (match,) = cover["matches"]
    assert match["found"] and match["page"] == 1
    assert not (folder / "rejects.jsonl").read_text().strip()
    hint = re.search(r"1 documents have 1 pages without text \(about 2 CPU-s to read them\): "
                     r"run `([^`]+)`", first.stderr)
    assert hint is not None, first.stderr
    hinted = shlex.split(hint.group(1))
    assert hinted == ["build-corpus", *build, "--ocr"]
    stats = json.loads(run_cli_in_process("stats", str(folder), "--json").stdout)
    textless = [split["without_text"] for split in stats["splits"].values()]
    assert sum(n["documents"] for n in textless) == 1 and sum(n["pages"] for n in textless) == 1
    assert "pages without text" in run_cli_in_process("stats", str(folder)).stdout
    report = run_cli_in_process("report", str(folder.parent), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert "1 documents have 1 pages without text" in (
        tmp_path / "report" / "report.md").read_text()
    assert "`none`" in (folder / "README.md").read_text(encoding="utf-8")

    # nothing changed but --ocr: the cover is read (a picture only: no words) and its row
    # replaced; the digital paper's stays
    second = run_cli_subprocess(*hinted[1:])
    assert second.returncode == 0, second.stderr
    again = _rows(folder, tmp_path / "2")
    assert again["cover"]["page_text_origin"] == ["ocr", "pdf"]
    assert again["cover"]["article_words"] == cover["article_words"]
    assert again["digital"] == rows["digital"]
    assert "pages without text" not in second.stderr

    # and a further run with --ocr reads nothing again
    before = _shards(folder)
    third = run_cli_in_process(*build, "--ocr")
    assert third.returncode == 0, third.stderr
    assert _shards(folder) == before


def test_a_run_with_ocr_alone_publishes_the_earlier_needs_ocr_rejects(tmp_path: Path) -> None:
    build, folder = _build(tmp_path, ("digital", "scan"))
    first = run_cli_in_process(*build)
    assert first.returncode == 0, first.stderr
    rejects = [json.loads(line) for line in (folder / "rejects.jsonl").read_text()
               .splitlines()]
    assert {r["id"]: r["reason"] for r in rejects} == {"local:scan": "needs_ocr"}
    second = run_cli_in_process(*build, "--ocr")
    assert second.returncode == 0, second.stderr
    rows = _rows(folder, tmp_path / "2")
    assert set(rows) == {"digital", "scan"}
    assert set(rows["scan"]["page_text_origin"]) == {"ocr"}
    assert rows["scan"]["matches"][0]["found"]
    assert not (folder / "rejects.jsonl").read_text().strip()
