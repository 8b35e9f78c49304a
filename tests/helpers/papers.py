"""Generated papers with the structure a layout shows: numbered headings, a caption and a
reference list (the `cohan` view and `inspect` role layers read them back)."""

from __future__ import annotations

from pathlib import Path

from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.textgen import ProseGenerator

CAPTION_WORD = "Zyxcaption"
REFERENCE_WORD = "Qwrefauthor"


def structured_papers(folder: Path, n: int) -> list[dict[str, object]]:
    """`n` PDFs in `folder` and their `local` manifest entries: numbered headings, a figure
    caption holding CAPTION_WORD, a reference list whose entries hold REFERENCE_WORD; one
    column, then two."""
    entries: list[dict[str, object]] = []
    for i in range(n):
        gen = ProseGenerator(900 + i)
        abstract = gen.paragraph("en", 4)
        spec = ArticleSpec(
            title=gen.title("en"), authors=gen.authors(),
            abstracts=[("Abstract", abstract)],
            sections=[
                ("1 Introduction", [gen.paragraph("en", 6),
                                    f"Figure 1: {CAPTION_WORD} of the corpus by year.",
                                    gen.paragraph("en", 5)]),
                ("2 Method", [gen.paragraph("en", 6) for _ in range(2)]),
                ("3 Conclusion", [gen.paragraph("en", 5)]),
                ("References", [f"[{k}] {REFERENCE_WORD}, J. and Martin, C. (201{k}). "
                                f"{gen.title('en')}. Journal of Studies, {k}(2), 1-20."
                                for k in range(1, 5)]),
            ],
            columns=1 + i % 2,
        )
        (folder / f"paper{i}.pdf").write_bytes(render_article(spec))
        entries.append({"id": f"paper{i}", "pdf": f"paper{i}.pdf", "language": "en",
                        "abstracts": {"en": abstract}, "title": spec.title,
                        "published": f"202{i}"})
    return entries
