"""A folder of real generated PDFs with their `local` manifest, and shard bookkeeping."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq

from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.textgen import ProseGenerator


@functools.cache
def _article(i: int) -> tuple[bytes, dict[str, object]]:
    """Document i of every corpus: its PDF and manifest entry. Rendering is deterministic,
    so each is rendered once per test process and written wherever a test asks."""
    gen = ProseGenerator(500 + i)
    abstract_fr = gen.paragraph("fr", 4)
    abstract_en = gen.paragraph("en", 3)
    spec = ArticleSpec(
        title=gen.title("fr"), authors=gen.authors(),
        abstracts=[("Résumé", abstract_fr), ("Abstract", abstract_en)],
        sections=[(f"{k} Partie", [gen.paragraph("fr", 7) for _ in range(3)])
                  for k in range(1, 4)],
        columns=1 + i % 2,
    )
    entry: dict[str, object] = {
        "id": f"doc{i}", "pdf": f"doc{i}.pdf", "language": "fr",
        "abstracts": {"fr": abstract_fr, "en": abstract_en},
        "published": f"20{10 + i:02d}-0{1 + i % 9}", "title": spec.title,
    }
    return render_article(spec), entry


def make_corpus(folder: Path, n: int) -> list[dict[str, object]]:
    """n generated articles written into `folder`, with their `local` manifest entries (fresh
    copies: a test may change them)."""
    entries: list[dict[str, object]] = []
    for i in range(n):
        pdf, entry = _article(i)
        (folder / f"doc{i}.pdf").write_bytes(pdf)
        entries.append(copy.deepcopy(entry))
    return entries


def write_manifest(path: Path, entries: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
    return path


def relist(folder: Path) -> None:
    """Make build.json describe the shards as they now are (as a publish would)."""
    build = json.loads((folder / "build.json").read_text())
    for entry in build["files"]:
        path = folder / entry["name"]
        entry["bytes"] = path.stat().st_size
        entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        entry["rows"] = pq.ParquetFile(path).metadata.num_rows
    (folder / "build.json").write_text(json.dumps(build))
