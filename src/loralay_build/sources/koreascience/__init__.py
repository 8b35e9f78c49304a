"""KoreaScience (koreascience.kr): a Scrapy crawl in a subprocess, resumable from the state DB.

Each item the spider emits is committed as a candidate when it arrives; on the next run the
ids already in the database are handed to the spider, which skips their article pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from loralay_build.blobs import BlobStore
from loralay_build.corpus.columns import Column
from loralay_build.fetch import fetch_pdf
from loralay_build.http import HttpClient
from loralay_build.identity import Identity
from loralay_build.licences import LicenceMapping
from loralay_build.parse.clean import Cleaner
from loralay_build.records import Candidate
from loralay_build.source_table import SourceConfig
from loralay_build.sources.base import DiscoveryContext, batched
from loralay_build.sources.command import SourceCommand
from loralay_build.sources.crawl import CrawlConfig, spider_items
from loralay_build.tables import check_ranges
from loralay_build.views.schema import ViewLayout

# The spider `spiders.run` imports in its subprocess (this one does not import Scrapy).
SPIDER = "loralay_build.sources.koreascience.spider:KoreaScienceSpider"


@dataclass(frozen=True, kw_only=True)
class KoreaScienceConfig(CrawlConfig):
    """`[source]` of KoreaScience: the advanced search, one pass per publication year."""

    search_url: str  # the advanced search page
    publisher: str  # publishers whose name contains this word
    first_year: int  # first publication year crawled
    last_year: int  # last publication year crawled
    page_size: int  # results per search page

    def ocr_languages(self) -> tuple[str, ...]:
        return ("ko",)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ranges(self, "source", at_least={"page_size": 1, "last_year": self.first_year})


def abstracts_by_language(pairs: list[list[str]]) -> dict[str, str]:
    """Keep every box: a second box in the same language gets `<lang>-2`, never overwrites."""
    out: dict[str, str] = {}
    for lang, text in pairs:
        key, n = lang, 1
        while key in out:
            n += 1
            key = f"{lang}-{n}"
        out[key] = text
    return out


def to_candidate(item: dict[str, Any], dataset: str) -> Candidate:
    return Candidate(
        id=f"koreascience:{item['id']}",
        source="koreascience",
        source_id=str(item["id"]),
        dataset=dataset,
        title=str(item.get("title", "")),
        language="ko",
        abstracts=abstracts_by_language(item.get("abstracts", [])),
        published=str(item.get("published", "")),
        file_url=str(item.get("pdf_url", "")),
        landing_url=str(item.get("url", "")),
        doi=str(item.get("doi", "")),
        licence=str(item.get("licence", "")),
        extra={"journal": item.get("journal", ""), "keywords": item.get("keywords", []),
               "pubYr": item.get("year")},
    )


class KoreaScienceSource:
    name = "koreascience"
    config_class: type[SourceConfig] = KoreaScienceConfig
    command = SourceCommand(
        help="Crawl KoreaScience (Scrapy, resumable): Korean articles with a Korean abstract.")
    declares: tuple[Column, ...] = ()
    columns: tuple[str, ...] = ("doi",)
    card_notes = ""
    cleaners: tuple[tuple[str, Cleaner], ...] = ()
    views: tuple[ViewLayout, ...] = ()
    demos: tuple[str, ...] = ("koreascience",)
    licences = LicenceMapping()
    identity = Identity()

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        cfg = ctx.settings(KoreaScienceConfig)
        config = {**cfg.spider_config(ctx.client), "search_url": cfg.search_url,
                  "publisher": cfg.publisher, "first_year": cfg.first_year,
                  "last_year": cfg.last_year, "page_size": cfg.page_size,
                  "skip": sorted(r.candidate.source_id for r in ctx.state.rows(ctx.dataset))}
        items = spider_items(SPIDER, config, "KoreaScience")
        try:
            yield from batched((to_candidate(item, ctx.dataset) for item in items),
                               cfg.batch_size)
        finally:
            items.close()

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        return fetch_pdf(candidate.file_url, client, blobs)

