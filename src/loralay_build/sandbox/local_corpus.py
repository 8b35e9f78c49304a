"""Large `local` corpora made cheaply: a few generated one-page articles, each written many
times with bytes after its %%EOF, so that every copy is a new document (another hash) with
the same content. For the memory benchmarks and the tests that bound memory."""

from __future__ import annotations

import json
from pathlib import Path

from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.textgen import ProseGenerator


def distinct_copy(data: bytes, k: int) -> bytes:
    """The PDF made distinct: bytes after its %%EOF change the hash, not the content."""
    return data + f"\n% copy {k}\n".encode()


def synthetic_corpus(folder: Path, n: int, templates: int = 8) -> Path:
    """N one-page generated articles (from `templates` distinct ones) and their manifest,
    `folder/docs.jsonl`."""
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for t in range(templates):
        gen = ProseGenerator(900 + t)
        abstract = gen.paragraph("en", 3)
        spec = ArticleSpec(title=gen.title("en"), authors=gen.authors(),
                           abstracts=[("Abstract", abstract)],
                           sections=[("1 Introduction", [gen.paragraph("en", 6)])])
        made.append((render_article(spec), abstract, spec.title))
    entries: list[dict[str, object]] = []
    for k in range(n):
        data, abstract, title = made[k % templates]
        (folder / f"s{k}.pdf").write_bytes(distinct_copy(data, k))
        entries.append({"id": f"s{k}", "pdf": f"s{k}.pdf", "language": "en",
                        "abstracts": {"en": abstract}, "title": title,
                        "published": f"{2000 + k % 24}-{1 + k % 12:02d}"})
    path = folder / "docs.jsonl"
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
    return path
