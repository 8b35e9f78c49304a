"""A generated SciELO article: what the ArticleMeta fake and the collection sites serve."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from loralay_build.sandbox.pdfgen import ArticleSpec, render_article


@dataclass
class SciELOArticle:
    pid: str
    collection: str
    lang: str
    processed: str  # processing_date, YYYY-MM-DD
    record: dict[str, Any]
    spec: ArticleSpec
    variant: str = "plain"
    events: list[tuple[str, int, str]] = field(default_factory=list)  # (day, seq, event)
    abstracts: dict[str, str] = field(default_factory=dict)  # plain text, as the sites show it
    translations: dict[str, str] = field(default_factory=dict)  # PDF file name -> language

    @cached_property
    def pdf(self) -> bytes:
        return render_article(self.spec)
