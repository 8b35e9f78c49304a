"""The PubMed views (`[source] views`), published after the layout dataset.

Each published article's full JATS is fetched once into the blob store (the blob's hash is
kept in `views.sqlite` next to the state), so views are rebuilt offline and a killed run
resumes where it stopped. Every row takes the split the layout dataset stored for its
article, so both views of one article always land in the same split as its layout row.
"""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lxml import etree

from loralay_build.corpus.split import SPLITS
from loralay_build.errors import LoralayError, TransientError
from loralay_build.licences import to_spdx
from loralay_build.progress import progress
from loralay_build.safexml import child, parse_xml, text_of
from loralay_build.sources.base import PublishedDataset
from loralay_build.sources.oaipmh import OaiClient
from loralay_build.sources.pubmed.body import Body, read_body
from loralay_build.sources.pubmed.citations import CitationOptions, citation_records
from loralay_build.sources.pubmed.cleantext import TextOptions, clean_view
from loralay_build.sources.pubmed.discover import PubmedConfig, fetch_jats, pmcids_for_pmids
from loralay_build.sources.pubmed.resolve import AbstractCache, Found, Resolver
from loralay_build.sources.pubmed.view_schema import CITATIONS, SUMPUBMED
from loralay_build.sources.views.write import write_view
from loralay_build.state import PUBLISHED, Row

log = logging.getLogger(__name__)

VIEWS = ("sumpubmed", "citations")
SUMMARIES = {
    "sumpubmed": "SumPubMed-style clean text of PMC articles: the abstract (labelled parts "
    "kept) as the summary, the body by section with sentence boundaries, citations and "
    "numbers replaced by `<cit>` and `<dig>` when enabled. Figures, tables, captions, "
    "formulas, footnotes, acknowledgements, declarations and references are removed by "
    "JATS element.",
    "citations": "CiteBench-style citation-text records from the JATS of PMC articles: the "
    "citation text, its paragraph and context, the citing paper, and every cited paper "
    "in marker order with its abstract when it could be resolved (unresolved ones are "
    "flagged, never guessed).",
}


class JatsIndex:
    """Candidate id -> sha256 of its stored JATS."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS jats (id TEXT PRIMARY KEY, sha TEXT)")

    def get(self, cid: str) -> str | None:
        row = self.db.execute("SELECT sha FROM jats WHERE id = ?", (cid,)).fetchone()
        return str(row[0]) if row else None

    def put(self, cid: str, sha: str) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO jats VALUES (?, ?)", (cid, sha))

    def close(self) -> None:
        self.db.close()


def publish_views(ctx: PublishedDataset, source: str) -> None:
    """Build and write every configured view of the dataset just published (of `source`,
    which the views' build records name)."""
    cfg = ctx.settings.source
    if not isinstance(cfg, PubmedConfig):
        return
    views = [view for view in dict.fromkeys(cfg.views) if view in VIEWS]  # cohan: views.publish
    if not views:
        return
    rows = [r for r in ctx.state.rows(ctx.dataset, [PUBLISHED]) if r.split]
    index = JatsIndex(ctx.state.layout.views_index)
    cache = AbstractCache(ctx.state.layout.views_abstracts)
    try:
        known = [r.candidate for ds in ctx.state.datasets() for r in ctx.state.rows(ds)]
        oai = OaiClient(ctx.client, cfg.oai_url)
        idconv = cfg.idconv_url
        resolver = Resolver(known, oai, cache,
                            lambda pmids: pmcids_for_pmids(ctx.client, idconv, pmids))
        builds = [_ViewBuild(view, cfg, resolver) for view in views]
        articles = 0
        # One tree in memory at once.
        for row, article, body in _articles(ctx, rows, index, cfg.oai_url):
            articles += 1
            for build in builds:
                build.add(row, article, body)
        for build in builds:
            build.counts["articles"] = articles
            build.counts["articles_without_full_text"] = len(rows) - articles
            build.finish(ctx, source)
            if rows and not build.counts["rows"]:  # not a success: the run says why
                log.error("view %s has no rows although %s has %d: %d of them without full "
                          "text, %d waiting for it (exit 3)", build.view, ctx.dataset,
                          len(rows), ctx.counts["views_no_full_text"],
                          ctx.counts["views_full_text_waiting"])
                ctx.counts["views_empty"] += 1
    finally:
        index.close()
        cache.close()


def _articles(ctx: PublishedDataset, rows: list[Row], index: JatsIndex,
              oai_url: str) -> Iterator[tuple[Row, etree._Element, Body]]:
    for row in progress(rows, len(rows), "full text"):
        cid = row.candidate.id
        try:
            sha = index.get(cid)
            if sha is None or not ctx.blobs.has(sha):
                sha = fetch_jats(row.candidate, ctx.client, ctx.blobs, oai_url)
                index.put(cid, sha)
            article = parse_xml(ctx.blobs.path(sha).read_bytes())
        except TransientError as exc:  # fetched again on the next run; the run is partial
            log.warning("%s: full text not fetched for the views yet (%s)", cid, exc)
            ctx.counts["views_full_text_waiting"] += 1
            continue
        except LoralayError as exc:
            log.warning("%s: no full text for the views (%s)", cid, exc)
            ctx.counts["views_no_full_text"] += 1
            continue
        yield row, article, read_body(article)


def _meta(row: Row, article: etree._Element) -> dict[str, Any]:
    cand = row.candidate
    journal = child(child(article, "front"), "journal-meta")
    return {
        "article_id": cand.id, "pmcid": cand.source_id, "doi": cand.doi, "title": cand.title,
        "published": cand.published, "licence": to_spdx(cand.source, cand.licence),
        "licence_source": cand.licence or None,
        "journal": text_of(child(journal, "journal-title-group"), "journal-title"),
    }


class _ViewBuild:
    """Rows of one view, by split, gathered article by article."""

    def __init__(self, view: str, cfg: PubmedConfig, resolver: Resolver) -> None:
        self.view = view
        self.resolver = resolver
        self.text_options = TextOptions(cit=cfg.view_cit, dig=cfg.view_dig,
                                        lowercase=cfg.view_lowercase)
        self.cite_options = CitationOptions(unit=cfg.citation_unit, context=cfg.citation_context,
                                            min_resolved=cfg.min_resolved,
                                            lowercase=cfg.view_lowercase)
        self.options = asdict(self.text_options if view == "sumpubmed" else self.cite_options)
        self.columns = SUMPUBMED if view == "sumpubmed" else CITATIONS
        self.by_split: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
        self.counts: Counter[str] = Counter()

    def add(self, row: Row, article: etree._Element, body: Body) -> None:
        rows = self.by_split[str(row.split)]
        if self.view == "sumpubmed":
            rows.append({**_meta(row, article), **clean_view(article, body, self.text_options)})
            return
        meta = _meta(row, article)
        cand = row.candidate
        self.resolver.prepare(list(body.references.values()))
        memo: dict[str, Found] = {}

        def find(ref_id: str) -> Found:  # only cited references are looked up
            if ref_id not in memo:
                memo[ref_id] = self.resolver.find(body.references[ref_id])
            return memo[ref_id]

        records = citation_records(body, self.cite_options, find)
        for n, record in enumerate(records, 1):
            rows.append({"citation_id": f"{cand.id}#{n}",
                         **{name: meta[name] for name, _, _ in CITATIONS[1:7]},
                         "abstract": cand.abstracts.get(cand.language, ""), **record})
            self.counts["cited"] += record["n_cited"]
            self.counts["cited_resolved"] += record["n_resolved"]
            self.counts.update(f"resolved_from_{c['resolved_from'] or 'none'}"
                               for c in record["cited"])

    def finish(self, ctx: PublishedDataset, source: str) -> None:
        if self.view == "citations":
            self.counts["resolved_share_pct"] = round(
                100 * self.counts["cited_resolved"] / max(1, self.counts["cited"]))
            self.counts["lookup_failures"] = self.resolver.transient
        self.counts["rows"] = sum(len(v) for v in self.by_split.values())
        write_view(self.view, SUMMARIES[self.view], self.by_split, self.columns, self.counts,
                   self.options, ctx, source)
        ctx.counts[f"view_{self.view}_rows"] += self.counts["rows"]
