"""SciELO's second route (`via = "site"`): a Scrapy crawl of the collection websites for
what the ArticleMeta API lacks. Ids are the API route's (`scielo:<collection>:<PID>`), so
both routes feed the same candidates; items are committed as they arrive, and a later run
hands the ids already in the database to the spider, which skips their article pages.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any

from loralay_build.errors import ConfigError
from loralay_build.records import Candidate
from loralay_build.sources.base import DiscoveryContext, batched
from loralay_build.sources.crawl import CrawlConfig, spider_items
from loralay_build.sources.scielo.text import candidate_id, clean_abstract, partial_date

# The spider `spiders.run` imports in its subprocess (this one does not import Scrapy).
SPIDER = "loralay_build.sources.scielo.spider:SciELOSiteSpider"


def to_candidates(item: dict[str, Any], datasets: dict[str, str]) -> list[Candidate]:
    """Map a crawled article to one candidate per dataset it feeds, as the API route does
    (`scielo.to_candidates`): its own language, and any dataset language with a PDF and an
    abstract (a translation). Abstracts are re-escaped: SciELO abstracts are HTML fragments
    on both routes."""
    original = str(item.get("language", ""))
    abstracts: dict[str, str] = {}
    for code, raw in item.get("abstracts", []):
        text = html.escape(clean_abstract(str(raw)), quote=False)
        if text and len(text) > len(abstracts.get(code, "")):
            abstracts[code] = text
    pdfs: dict[str, str] = dict(item.get("pdf_urls", {}))
    pid, collection = str(item["pid"]), str(item["collection"])
    return [
        Candidate(
            id=candidate_id(collection, pid, lang, original),
            source="scielo",
            source_id=pid,
            dataset=dataset,
            title=str(item.get("title", "")),
            language=lang,
            abstracts=abstracts,
            published=partial_date(str(item.get("published", ""))),
            file_url=pdfs.get(lang, ""),
            landing_url=str(item.get("url", "")),
            doi=str(item.get("doi", "")),
            extra={"collection": collection, "pdf_language": lang, "pdf_languages": sorted(pdfs),
                   "original_language": original, "route": "site",
                   "new_site": bool(item.get("new_site"))},
        )
        for lang, dataset in datasets.items()
        if lang == original or (lang in pdfs and abstracts.get(lang))
    ]


def discover_site(ctx: DiscoveryContext, cfg: CrawlConfig, datasets: dict[str, str],
                  listings: dict[str, tuple[str, ...]],
                  hosts: dict[str, str]) -> Iterator[list[Candidate]]:
    """Crawl the listing pages of every configured collection (`site_listings`)."""
    unknown = sorted(set(listings) - set(hosts))
    if unknown or not listings:
        raise ConfigError(f"[source] site_listings needs collection -> listing URLs "
                          f"(unknown: {unknown})")
    config = {
        **cfg.spider_config(ctx.client),
        "listings": {c: list(urls) for c, urls in listings.items()},
        "hosts": {c: hosts[c] for c in listings},
        "url_rewrite": dict(ctx.client.settings.url_rewrite),
        "skip": sorted(r.candidate.id for name in datasets.values()
                       for r in ctx.state.rows(name)),
    }
    items = spider_items(SPIDER, config, "SciELO site")
    try:
        candidates = (c for item in items for c in to_candidates(item, datasets))
        yield from batched(candidates, cfg.batch_size)
    finally:
        items.close()
