"""KoreaScience (koreascience.kr): a Scrapy crawl in a subprocess, resumable from the state DB.

Each item the spider emits is committed as a candidate when it arrives; on the next run the
ids already in the database are handed to the spider, which skips their article pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from loralay_build.blobs import BlobStore
from loralay_build.fetch import fetch_pdf
from loralay_build.http import HttpClient
from loralay_build.records import Candidate
from loralay_build.sources.base import DiscoveryContext, batched
from loralay_build.sources.crawl import crawl_policy, spider_items

SPIDER_KEYS = ("search_url", "publisher", "first_year", "last_year", "page_size",
               "download_delay", "timeout", "retries", "retry_after_max", "log_level")


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
    abstract_format = "plain"
    columns: tuple[str, ...] = ("doi",)

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        config = {k: ctx.config[k] for k in SPIDER_KEYS if k in ctx.config}
        config["user_agent"] = ctx.client.settings.user_agent
        config["policy"] = crawl_policy(ctx.client)
        config["skip"] = sorted(r.candidate.source_id for r in ctx.state.rows(ctx.dataset))
        batch_size = int(ctx.config.get("batch_size", 10))
        items = spider_items("koreascience", config, "KoreaScience")
        try:
            yield from batched((to_candidate(item, ctx.dataset) for item in items), batch_size)
        finally:
            items.close()

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        return fetch_pdf(candidate.file_url, client, blobs)

