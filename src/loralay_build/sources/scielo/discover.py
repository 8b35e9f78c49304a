"""SciELO through the ArticleMeta API: stable PID ids, every abstract, one crawl for two datasets.
(`via = "site"` crawls the collection websites instead: `scielo_site`.)

The first pass lists identifiers by processing date; later passes read the change history
(`add`/`update`/`delete`) from a high-water mark. The mark belongs to the crawl, not to one
dataset: one pass yields the Spanish and the Portuguese candidates together (each with its
own `dataset`), so building the second dataset right after the first re-crawls nothing.
ArticleMeta parses `from`/`until` with `strptime("%Y-%m-%d")` and answers 500 to anything
else, so a mark is a calendar day, with the number of that day's events already taken (the
next pass reads that day again and skips them).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lxml import html as lxml_html

from loralay_build.blobs import BlobStore
from loralay_build.corpus.columns import Column
from loralay_build.errors import ConfigError, Reason, Reject
from loralay_build.fetch import fetch_pdf
from loralay_build.http import HttpClient
from loralay_build.identity import Identity
from loralay_build.licences import LicenceMapping, recognise
from loralay_build.parse.clean import Cleaner
from loralay_build.records import Candidate
from loralay_build.source_table import SourceConfig, key
from loralay_build.sources.base import DiscoveryContext
from loralay_build.sources.command import (
    DatasetPlan,
    Option,
    SourceCommand,
    given,
    since_option,
)
from loralay_build.sources.crawl import CrawlConfig
from loralay_build.sources.scielo.site import discover_site
from loralay_build.sources.scielo.text import candidate_id, clean_abstract, partial_date
from loralay_build.tables import check_ranges
from loralay_build.views.schema import ViewLayout

log = logging.getLogger(__name__)

HOSTS = {
    "ecu": "scielo.senescyt.gob.ec", "col": "www.scielo.org.co", "pry": "scielo.iics.una.py",
    "ury": "www.scielo.edu.uy", "bol": "www.scielo.org.bo", "per": "www.scielo.org.pe",
    "prt": "www.scielo.pt", "esp": "scielo.isciii.es", "scl": "www.scielo.br",
    "spa": "www.scielosp.org", "ven": "www.scielo.org.ve", "cub": "scielo.sld.cu",
    "arg": "www.scielo.org.ar", "chl": "www.scielo.cl", "mex": "www.scielo.org.mx",
}
MARK_SCOPE = "scielo"  # marks are shared by every dataset the crawl feeds


@dataclass(frozen=True, kw_only=True)
class SciELOConfig(CrawlConfig):
    """`[source]` of SciELO: one crawl feeding one dataset per article language."""

    via: Literal["api", "site"]  # ArticleMeta, or a Scrapy crawl of the collection websites
    articlemeta_url: str  # the ArticleMeta API
    collections: tuple[str, ...]  # SciELO collection codes crawled
    datasets: dict[str, str]  # article language -> dataset folder
    start: str = key("from")  # first pass: identifiers processed since this date
    until: str | None = None  # last date (YYYY-MM-DD) of the identifiers listed
    page_size: int  # identifiers per ArticleMeta page
    site_listings: dict[str, tuple[str, ...]] | None = None  # collection -> listing URLs

    def ocr_languages(self) -> tuple[str, ...]:
        return tuple(sorted(self.datasets))

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ranges(self, "source", at_least={"page_size": 1})
        unknown = sorted(set(self.collections) - set(HOSTS))
        if unknown:
            raise ConfigError(f"[source] collections: unknown SciELO collection(s) "
                              f"{', '.join(unknown)}; known: {', '.join(HOSTS)}")
        if not self.datasets:
            raise ConfigError("[source] datasets: give at least one language -> dataset")


_LICENCE_LINK = re.compile(r'href="([^"]*creativecommons\.org/[^"]*)"')


def _licence_link(statements: Any) -> str:
    """The Creative Commons link of a `v540` licence statement (it carries the version)."""
    for entry in statements or []:
        found = _LICENCE_LINK.search(str(entry.get("t", "")) if isinstance(entry, dict) else "")
        if found:
            return found.group(1)
    return ""


# A licence that comes from the journal rather than the article (`licence_of`) is recorded
# with this prefix, so `licence_source` says where it was read.
SCIELO_JOURNAL = "journal: "


def licence_of(record: dict[str, Any], article: dict[str, Any]) -> str:
    """The article's licence: the link of its `v540`, else its `license` code ("by",
    "by-nc") or `v541`; else its journal's (`title` `v540`, then `v541`, where "nd" means
    none), as SciELO's own client (xylose `Article.permissions`) falls back to it, marked
    `journal: ` so `licence_source` says where it was read."""
    own = (_licence_link(article.get("v540")) or str(record.get("license") or "")
           or _first(article.get("v541")))
    if own:
        return own
    journal = record.get("title") or {}
    code = _first(journal.get("v541"))
    found = _licence_link(journal.get("v540")) or ("" if code.lower() == "nd" else code)
    return f"{SCIELO_JOURNAL}{found}" if found else ""


def _first(field: Any, key: str = "_") -> str:
    if isinstance(field, list) and field and isinstance(field[0], dict):
        return str(field[0].get(key, "")).strip()
    return ""


def pdf_url(record: dict[str, Any], lang: str, host: str) -> str:
    """The PDF in `lang`: fulltexts.pdf, then old v720 links, then the path built from v4+v702."""
    article = record.get("article") or {}
    listed = ((record.get("fulltexts") or {}).get("pdf") or {}).get(lang)
    if listed:
        return str(listed)
    for link in article.get("v720") or []:
        if link.get("f") == "pdf" and link.get("l") == lang and link.get("u"):
            return str(link["u"])
    issue, markup = _first(article.get("v4")), _first(article.get("v702"))
    parts = re.split(r"[\\/]", markup)
    if issue and len(parts) >= 4 and parts[-1]:
        acronym = parts[parts.index("markup") - 2] if "markup" in parts else parts[-4]
        stem = parts[-1].rsplit(".", 1)[0]
        return f"http://{host}/pdf/{acronym.lower()}/{issue}/{stem}.pdf"
    return ""


def published(record: dict[str, Any]) -> str:
    article = record.get("article") or {}
    for value in (_first(article.get("v223")), _first(article.get("v65")),
                  str(record.get("publication_year") or "")):
        if (found := partial_date(value)):
            return found
    return ""


def pdf_languages(record: dict[str, Any]) -> set[str]:
    """Languages with a listed PDF (`fulltexts.pdf`, or the old `v720` links)."""
    listed = ((record.get("fulltexts") or {}).get("pdf") or {}).keys()
    old = (link.get("l") for link in (record.get("article") or {}).get("v720") or []
           if link.get("f") == "pdf" and link.get("u"))
    return {str(lang).lower() for lang in (*listed, *old) if lang}


def to_candidates(record: dict[str, Any], datasets: dict[str, str]) -> list[Candidate]:
    """Map an ArticleMeta record to one candidate per dataset it feeds.

    The target is the abstract in the PDF's language (spec (f)9): the original language
    (`v40`) always makes a candidate (a missing abstract or PDF is then a recorded reject);
    another dataset language makes one when the record lists a PDF and an abstract in it,
    as for the Portuguese translation of an English article.
    """
    article = record.get("article") or {}
    original = _first(article.get("v40")).lower()
    abstracts: dict[str, str] = {}
    for entry in article.get("v83") or []:
        text = clean_abstract(str(entry.get("a") or ""))
        code = str(entry.get("l") or "").lower()
        if code and len(text) > len(abstracts.get(code, "")):
            abstracts[code] = text
    listed = pdf_languages(record)
    return [_candidate(record, lang, original, abstracts, dataset)
            for lang, dataset in datasets.items()
            if lang == original or (lang in listed and abstracts.get(lang))]


def _candidate(record: dict[str, Any], lang: str, original: str, abstracts: dict[str, str],
               dataset: str) -> Candidate:
    article = record.get("article") or {}
    pid = str(record.get("code") or _first(article.get("v880")))
    collection = str(record.get("collection") or _first(article.get("v992")))
    host = HOSTS.get(collection, "")
    titles = {str(t.get("l", "")): str(t.get("_") or t.get("t") or "")
              for t in article.get("v12") or []}
    pdfs = sorted(((record.get("fulltexts") or {}).get("pdf") or {}).keys())
    return Candidate(
        id=candidate_id(collection, pid, lang, original),
        source="scielo",
        source_id=pid,
        dataset=dataset,
        title=titles.get(lang) or next(iter(titles.values()), ""),
        language=lang,
        abstracts=abstracts,
        published=published(record),
        file_url=pdf_url(record, lang, host),
        landing_url=(f"http://{host}/scielo.php?script=sci_arttext&pid={pid}&lng={lang}"
                     f"&nrm=iso&tlng={lang}") if host else "",
        licence=licence_of(record, article),
        doi=str(record.get("doi") or _first(article.get("v237"))),
        extra={"collection": collection, "pdf_language": lang, "pdf_languages": pdfs,
               "original_language": original, "doc_type": _first(article.get("v71"))},
    )


def _keys(values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
    return given(via=values["via"])


def _fan_out(config: SourceConfig, name: str | None, since: str | None) -> list[DatasetPlan]:
    """One dataset per article language (NAME-<lang> with --name), all from one crawl: the
    first build lists it for every dataset, the next ones do not list again."""
    assert isinstance(config, SciELOConfig)
    datasets = {lang: f"{name}-{lang}" for lang in config.datasets} if name \
        else config.datasets
    keys = {"datasets": datasets} if name else {}
    return [DatasetPlan(dataset, keys, since) for dataset in datasets.values()]


def licence_id(raw: str) -> str | None:
    """A journal's licence (`licence_of`) is read without its prefix."""
    text = raw.strip()
    return recognise(text[len(SCIELO_JOURNAL):] if text.startswith(SCIELO_JOURNAL) else text)


class SciELOSource:
    name = "scielo"
    config_class: type[SourceConfig] = SciELOConfig
    command = SourceCommand(
        help="""Crawl SciELO (ArticleMeta, or the websites with --via site): one crawl, one dataset
    per article language (scielo-es, scielo-pt; --name NAME gives NAME-es, NAME-pt).""",
        options=(
            since_option("Re-list articles processed since this date (YYYY[-MM[-DD]])."),
            Option("--via", "Discovery route: the ArticleMeta API or a crawl of the "
                   "collection websites (default: [source] via).", kind="choice",
                   choices=("api", "site")),
        ),
        keys=_keys,
        fan_out=_fan_out,
    )
    declares: tuple[Column, ...] = ()
    demos: tuple[str, ...] = ("scielo-es", "scielo-pt")
    licences = LicenceMapping(read=licence_id)
    identity = Identity()
    columns: tuple[str, ...] = ("doi",)
    card_notes = ""
    cleaners: tuple[tuple[str, Cleaner], ...] = ()
    views: tuple[ViewLayout, ...] = ()

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        cfg = ctx.settings(SciELOConfig)
        datasets = cfg.datasets
        if ctx.dataset not in datasets.values():
            raise ConfigError(f"dataset {ctx.dataset!r} is none of the SciELO datasets "
                              f"{sorted(datasets.values())}")
        if ctx.listed:  # the first language's build listed every language
            return
        if cfg.via == "site":
            yield from discover_site(ctx, cfg, datasets, cfg.site_listings or {}, HOSTS)
            return
        for collection in cfg.collections:
            with ctx.isolated(f"collection {collection}"):
                yield from self._collection(ctx, cfg.articlemeta_url, collection,
                                            cfg.page_size, datasets)

    def _collection(self, ctx: DiscoveryContext, api: str, collection: str, page: int,
                    datasets: dict[str, str]) -> Iterator[list[Candidate]]:
        """One collection's pass; its marks move only once every batch has been taken.

        Marks: `changes` = the day the history is read from; `seen` = how many of that
        day's events an earlier pass took (the history is a log: they come first again);
        `since` = the --since date of the last listing.
        """
        key, seen_key, since_key = (f"{k}:{collection}" for k in ("changes", "seen", "since"))
        mark = _day(ctx.state.get_mark(MARK_SCOPE, key))
        listed_since = _day(ctx.state.get_mark(MARK_SCOPE, since_key))
        if ctx.since and not (mark and listed_since and listed_since <= ctx.since):
            mark = None  # re-list from --since, unless a pass already listed from there
        if mark is None:
            # Changes made while the listing runs are in the history from the day it started.
            newest, on_newest = dt.datetime.now(dt.UTC).date().isoformat(), 0
            events = self._listing(ctx, api, collection, page)
        else:
            seen = int(ctx.state.get_mark(MARK_SCOPE, seen_key) or 0)
            events, newest, on_newest = self._history(ctx, api, collection, page, mark, seen)
        batch: list[Candidate] = []
        for pid, event in events.items():
            if event == "delete":  # the article and any translation of it, in every dataset
                base = f"scielo:{collection}:{pid}"
                for dataset in datasets.values():
                    for cid in (base, *(f"{base}:{lang}" for lang in datasets)):
                        ctx.state.reject(dataset, cid, Reason.UNAVAILABLE,
                                     "deleted from SciELO (change history)")
                continue
            record = ctx.client.get_json(f"{api}article/",
                                         {"code": pid, "collection": collection})
            if not isinstance(record, dict):
                log.warning("ArticleMeta has no record for %s in %s", pid, collection)
                continue
            batch += to_candidates(record, datasets)
            if len(batch) >= page:
                yield batch
                batch = []
        if batch:
            yield batch
        ctx.state.set_mark(MARK_SCOPE, key, newest)
        ctx.state.set_mark(MARK_SCOPE, seen_key, str(on_newest))
        if ctx.since and mark is None:
            ctx.state.set_mark(MARK_SCOPE, since_key, ctx.since)

    def _listing(self, ctx: DiscoveryContext, api: str, collection: str,
                 page: int) -> dict[str, str]:
        """Every PID processed since --since (or `from`), as an `add`."""
        cfg = ctx.settings(SciELOConfig)
        params = {"collection": collection, "from": ctx.since or cfg.start,
                  "until": cfg.until or dt.date.today().isoformat()}
        rows = self._paged(ctx, f"{api}article/identifiers/", params, page)
        return {str(r["code"]): "add" for r in sorted(rows, key=lambda r: str(r["code"]))}

    def _history(self, ctx: DiscoveryContext, api: str, collection: str, page: int,
                 mark: str, seen: int) -> tuple[dict[str, str], str, int]:
        """PID -> last event from the day `mark` on, without the first `seen` events of that
        day; with the newest day and how many events it has."""
        rows = self._paged(ctx, f"{api}article/history/",
                           {"collection": collection, "from": mark}, page)
        days = [str(r.get("date", ""))[:10] for r in rows]
        order = sorted(range(len(rows)), key=lambda i: days[i])  # stable: log order in a day
        events: dict[str, str] = {}
        for i in order:
            if days[i] == mark and seen > 0:
                seen -= 1
                continue
            events[str(rows[i]["code"])] = str(rows[i].get("event", ""))
        newest = max([mark, *days])
        return events, newest, days.count(newest)

    @staticmethod
    def _paged(ctx: DiscoveryContext, url: str, params: dict[str, str],
               page: int) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        offset = 0
        while True:
            answer = ctx.client.get_json(url, {**params, "limit": page, "offset": offset})
            objects = answer.get("objects") or [] if isinstance(answer, dict) else []
            if not objects:
                return rows
            rows += [o for o in objects if isinstance(o, dict) and o.get("code")]
            offset += page

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        """The PDF; when the link gives HTML (the sci_pdf interstitial), the article page's
        `citation_pdf_url` in the candidate's language."""
        try:
            return fetch_pdf(candidate.file_url, client, blobs)
        except Reject as exc:
            if exc.reason != Reason.NOT_PDF or not candidate.landing_url:
                raise
            page = client.get(candidate.landing_url, headers={"Accept": "text/html"})
            url = citation_pdf_url(page.body, candidate.language)
            if not url or url == candidate.file_url:
                raise
            return fetch_pdf(url, client, blobs)


def _day(mark: str | None) -> str | None:
    """A stored mark as YYYY-MM-DD (marks written before were ISO timestamps)."""
    return mark[:10] if mark else None


def citation_pdf_url(page: bytes, lang: str) -> str:
    """`meta[name=citation_pdf_url]` in `lang` (else the default one) of a classic page."""
    if not page.strip():
        return ""
    tree = lxml_html.fromstring(page)
    metas = tree.xpath('//meta[@name="citation_pdf_url"]')
    for attribute, value in (("language", lang), ("default", "true")):
        for meta in metas:
            if meta.get(attribute) == value and meta.get("content"):
                return str(meta.get("content"))
    return ""
