"""EUR-Lex-Sum through Cellar: LEGISSUM summaries and the acts they summarise, per language.

Discovery starts from the summary side (a SPARQL listing of every summary -> act link, paged),
so repealed acts are found too. One pass feeds every language dataset (`eurlex-en`, ...): the
marks belong to the crawl, as for SciELO. The summary (the target) is fetched during discovery;
the act (the document) is fetched as its Official Journal PDF plus its XHTML, both by Cellar
content negotiation, and stored as a bundle (`loralay_build.bundle`).

Pairing rule: one row per (act, language). Of the act's summaries available in that language,
the current (non-obsolete) one covering the fewest acts wins, ties by LEGISSUM id; every link
is kept in `extra`. Under the eurlex-sum split preset, acts linked through shared summaries
form a group that always lands in one split (`eurlex_links`).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from loralay_build.blobs import BlobStore
from loralay_build.bundle import Bundle, store_bundle, store_bytes, store_text
from loralay_build.corpus.columns import Column, names
from loralay_build.errors import ConfigError, Reason, Reject
from loralay_build.http import HttpClient
from loralay_build.identity import Identity
from loralay_build.licences import LicenceMapping
from loralay_build.parse.clean import Cleaner
from loralay_build.records import Candidate
from loralay_build.source_table import SourceConfig
from loralay_build.sources.base import DiscoveryContext, batched
from loralay_build.sources.command import (
    DatasetPlan,
    Option,
    SourceCommand,
    given,
    since_option,
)
from loralay_build.sources.eurlex.cellar import (
    LANGUAGES,
    PDF_TYPE,
    SUMMARY_TYPE,
    XHTML_TYPE,
    CellarConfig,
    ChallengeGuard,
    HostChallenged,
    eurlex_page,
    negotiate,
    negotiate_parts,
    store_pdf,
)
from loralay_build.sources.eurlex.links import (
    Act,
    Groups,
    Link,
    changed_links,
    choose_summary,
    collect_acts,
    fingerprints,
    link_groups,
    preset_splits,
    sparql_filter,
    to_link,
)
from loralay_build.sources.eurlex.text import (
    Summary,
    act_text,
    is_missing_page,
    parse_summary,
)
from loralay_build.tables import check_ranges
from loralay_build.views.schema import ViewLayout

log = logging.getLogger(__name__)

MARK_SCOPE = "eurlex"  # marks are shared by every language dataset the crawl feeds

QUERY = """PREFIX cdm: <http://publications.europa.eu/ontology/cdm#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
SELECT ?summary ?legissum ?celex ?date ?type ?obsolete ?modified
  (GROUP_CONCAT(DISTINCT STR(?alang); separator=",") AS ?act_languages)
  (GROUP_CONCAT(DISTINCT STR(?slang); separator=",") AS ?summary_languages)
WHERE {
  ?summary cdm:summary_legislation_eu_summarizes_resource_legal ?act ;
           cdm:summary_legislation_eu_id_legissum ?legissum .
  OPTIONAL { ?summary cdm:summary_legislation_eu_obsolete ?obsolete }
  OPTIONAL { ?summary cdm:work_date_lastmodification ?modified }
  ?act cdm:resource_legal_id_celex ?celex .
  OPTIONAL { ?act cdm:work_date_document ?date }
  OPTIONAL { ?act cdm:work_has_resource-type ?type }
  ?aexpr cdm:expression_belongs_to_work ?act ; cdm:expression_uses_language ?alang .
  ?sexpr cdm:expression_belongs_to_work ?summary ; cdm:expression_uses_language ?slang .
  %(filter)s
}
GROUP BY ?summary ?legissum ?celex ?date ?type ?obsolete ?modified
ORDER BY ?date ?celex ?legissum
LIMIT %(limit)d OFFSET %(offset)d"""


def language_codes(value: Any) -> list[str]:
    """`all`, `en,fr` or a list -> ISO 639-1 codes in the configured order; unknown ones refused."""
    if value in (None, "", "all"):
        return list(LANGUAGES)
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    codes = [item.strip().lower() for item in items if item.strip()]
    unknown = [c for c in codes if c not in LANGUAGES]
    if unknown or not codes:
        raise ConfigError(f"unknown EUR-Lex language(s) {unknown or value!r}; use ISO 639-1 "
                          f"codes among {','.join(LANGUAGES)} or 'all'")
    return list(dict.fromkeys(codes))


@dataclass(frozen=True, kw_only=True)
class EurlexConfig(CellarConfig):
    """`[source]` of EUR-Lex: the SPARQL listing, the languages and what is fetched per act."""

    sparql_url: str  # Cellar's SPARQL endpoint (JSON results)
    cellar_url: str  # celex/<id>, legissum/<id>
    eurlex_fallback: bool  # ask the website when Cellar has no XHTML
    languages: str | tuple[str, ...]  # "all", "en,fr" or a list of ISO 639-1 codes
    dataset_prefix: str  # datasets are <prefix>-<ISO 639-1 code>
    sparql_page: int  # rows per SPARQL page
    page_size: int  # candidates committed to the state DB together
    formats: tuple[Literal["pdf", "xhtml"], ...]  # what is fetched per act
    summary_recheck_days: float  # a full pass reads every summary again this often
    summary_relist_hours: float  # otherwise summary ids are listed at most this often
    include_obsolete: bool  # obsolete summaries are paired too (else recorded and skipped)
    # eurlex-sum: acts in every requested language go to validation or test by a hash of
    # their CELEX id, the rest to train
    split_preset: Literal["chronological", "eurlex-sum"]

    def ocr_languages(self) -> tuple[str, ...]:
        return tuple(language_codes(self.languages))

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ranges(self, "source", at_least={"sparql_page": 1, "page_size": 1,
                                               "summary_recheck_days": 0,
                                               "summary_relist_hours": 0})
        language_codes(self.languages)
        if not self.formats:
            raise ConfigError("[source] formats = []: give pdf, xhtml or both")


def datasets_for(cfg: EurlexConfig) -> dict[str, str]:
    """Language -> dataset folder (`eurlex-en`...)."""
    return {lang: f"{cfg.dataset_prefix}-{lang}" for lang in language_codes(cfg.languages)}


def _keys(values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
    return given(languages=values["languages"], split_preset=values["split_preset"],
                 dataset_prefix=name)


def _fan_out(config: SourceConfig, name: str | None, since: str | None) -> list[DatasetPlan]:
    """One dataset per language, all from one crawl: the first build lists it (from --since)
    for every language; the next ones do not list again."""
    assert isinstance(config, EurlexConfig)
    return [DatasetPlan(dataset, since=since if i == 0 else None)
            for i, dataset in enumerate(datasets_for(config).values())]


class EurlexSource:
    name = "eurlex"
    config_class: type[SourceConfig] = EurlexConfig
    command = SourceCommand(
        help="""Build EUR-Lex-Sum through Cellar: one crawl, one dataset per language (eurlex-en,
    eurlex-fr, ...; --name NAME gives NAME-en, ...), the act's OJ PDF with its XHTML text.""",
        options=(
            since_option("Only acts dated, or summaries updated, since this date "
                         "(YYYY[-MM[-DD]])."),
            Option("--languages", "Comma-separated ISO 639-1 codes (en,fr,de) or 'all' "
                   "(default: [source] languages, all 24)."),
            Option("--split-preset", "chronological (default) or eurlex-sum: acts in every "
                   "requested language go to validation/test by a hash of their CELEX id.",
                   kind="choice", choices=("chronological", "eurlex-sum")),
        ),
        keys=_keys,
        fan_out=_fan_out,
    )
    declares: tuple[Column, ...] = (
        Column("reference_text", pa.string(), "the document's text from its HTML (EUR-Lex acts)"),
    )
    columns: tuple[str, ...] = names(declares)
    # Commission Decision 2011/833/EU: reuse of EU documents under CC BY 4.0.
    demos: tuple[str, ...] = ("eurlex-en", "eurlex-fr", "eurlex-el")
    licences = LicenceMapping(fixed="CC-BY-4.0")
    identity = Identity(("file_url", "landing_url", "extra.summary_url"))
    cleaners: tuple[tuple[str, Cleaner], ...] = ()
    views: tuple[ViewLayout, ...] = ()
    card_notes = (
        "EUR-Lex-Sum rebuilt through Cellar. A row is one (act, language): the act is the "
        "document (words and boxes from its Official Journal PDF, its XHTML text in "
        "`reference_text`; either may be missing) and its LEGISSUM summary is the target "
        "(`abstract`), a separate document, so nothing is removed from the act (match method "
        "`separate`, with the summary's leakage into the act). Pairing rule: of the act's "
        "summaries in that language, the current (non-obsolete) one covering the fewest acts, "
        "ties by LEGISSUM id; every summary-act link is kept in the state database. Obsolete "
        "summaries are skipped. With `--split-preset eurlex-sum`, acts linked by a shared "
        "summary form one group, and groups present (act and summary) in every requested "
        "language go to validation or test by a hash of their smallest CELEX id, the rest to "
        "train: a summary never spans two splits and an act has the same split in every "
        "language. The default chronological split orders acts by their own date. "
        "Acts not longer than their summary (in words) are dropped as `reference_too_short`. "
        "Licence: EUR-Lex content, CC BY 4.0 (Commission Decision 2011/833/EU)."
    )

    def __init__(self) -> None:
        # Discovery always runs before downloads in a build; it hands the configuration
        # (formats, WAF back-off) to `fetch`, whose signature carries none.
        self.config: EurlexConfig | None = None
        self.guard: ChallengeGuard | None = None  # bound to the state by `discover`

    def _config(self) -> EurlexConfig:
        if self.config is None:
            raise ConfigError("EUR-Lex: a download was asked before discovery")
        return self.config

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        cfg = self.config = ctx.settings(EurlexConfig)
        self.guard = ChallengeGuard(ctx.state, cfg)
        datasets = datasets_for(cfg)
        if ctx.dataset not in datasets.values():
            raise ConfigError(f"dataset {ctx.dataset!r} is none of the EUR-Lex datasets "
                              f"{sorted(datasets.values())}")
        if ctx.listed:  # the first language's build listed every language
            return
        marks = (None, None) if ctx.since else (
            ctx.state.get_mark(MARK_SCOPE, "act_date"),
            ctx.state.get_mark(MARK_SCOPE, "summary_modified"))
        if ctx.since:
            day = _day_before(ctx.since)
            marks = (day, day)
        failures = len(ctx.failures)
        links: list[Link] = []
        relist = self._relist(ctx, marks)
        # A failed page keeps the pages before it.
        with ctx.isolated("EUR-Lex summaries and their acts (Cellar SPARQL listing)"):
            for link in self._list(ctx, "" if relist else sparql_filter(*marks)):
                links.append(link)
        listed = links
        if relist == "changed":
            links = changed_links(links, marks[0] or "", self._fingerprints(ctx))
        include_obsolete = cfg.include_obsolete
        acts, covered = collect_acts(links, include_obsolete)
        obsolete = sorted({link.legissum for link in links if link.obsolete})
        if obsolete and not include_obsolete:
            log.info("EUR-Lex: %d obsolete summaries skipped", len(obsolete))
            ctx.state.set_mark(MARK_SCOPE, "obsolete_skipped", ",".join(obsolete))
        groups = link_groups(acts, covered)
        splits: dict[str, str] = {}
        if cfg.split_preset == "eurlex-sum":
            stored = {c: s for c in acts if (s := ctx.state.get_mark(MARK_SCOPE, f"split:{c}"))}
            splits = preset_splits(acts, groups, list(datasets), stored)
            for celex, split in splits.items():
                if stored.get(celex) != split:
                    ctx.state.set_mark(MARK_SCOPE, f"split:{celex}", split)
        summaries: dict[tuple[str, str], tuple[Summary, str] | None] = {}
        page = cfg.page_size
        todo = [(act, lang) for act in sorted(acts.values(), key=lambda a: (a.date, a.celex))
                for lang in datasets]
        for chunk in batched(todo, page):
            batch = []
            for act, lang in chunk:
                cand = self._candidate(ctx, act, lang, datasets[lang], covered, groups,
                                       splits, summaries)
                if cand is not None:
                    batch.append(cand)
            if batch:
                yield batch
        if len(ctx.failures) == failures and listed:
            ctx.state.set_mark(MARK_SCOPE, "act_date", max(link.date for link in listed))
            newest = max(link.modified for link in listed)
            if newest:
                ctx.state.set_mark(MARK_SCOPE, "summary_modified", newest)
            known = {**self._fingerprints(ctx), **fingerprints(listed)}
            ctx.state.set_mark(MARK_SCOPE, "summary_ids", json.dumps(known, sort_keys=True))
            if relist or marks == (None, None):
                ctx.state.set_mark(MARK_SCOPE, "summary_ids_listed", repr(time.time()))
            if relist == "all" or marks == (None, None):  # every summary was read again
                ctx.state.set_mark(MARK_SCOPE, "summaries_checked", dt.date.today().isoformat())
        log.info("EUR-Lex discovery: %d links, %d acts", len(links), len(acts))

    # -- listing ------------------------------------------------------------------------------

    @staticmethod
    def _relist(ctx: DiscoveryContext, marks: tuple[str | None, str | None]) -> str:
        """How much to list: "" (the filtered listing, or a first pass), "all" (a full pass
        that reads every summary again: due every `summary_recheck_days`), or "changed"
        (everything is listed but only new acts and summaries whose ids, acts or languages
        changed are read: Cellar leaves `cdm:work_date_lastmodification` unbound, so the
        filter alone would never see a new or updated summary of an older act). The ids are
        listed at most every `summary_relist_hours`, so the other language builds of one
        command do not list them again."""
        if marks == (None, None) or ctx.since:
            return ""
        checked = ctx.state.get_mark(MARK_SCOPE, "summaries_checked")
        every = ctx.settings(EurlexConfig).summary_recheck_days
        if checked is None or (
                dt.date.today() - dt.date.fromisoformat(checked)).days >= every:
            return "all"
        if marks[1] is not None:
            return ""
        listed = ctx.state.get_mark(MARK_SCOPE, "summary_ids_listed")
        hours = ctx.settings(EurlexConfig).summary_relist_hours
        return "" if listed and time.time() - float(listed) < hours * 3600 else "changed"

    @staticmethod
    def _fingerprints(ctx: DiscoveryContext) -> dict[str, str]:
        stored = ctx.state.get_mark(MARK_SCOPE, "summary_ids")
        return dict(json.loads(stored)) if stored else {}

    def _list(self, ctx: DiscoveryContext, where: str) -> Iterator[Link]:
        cfg = ctx.settings(EurlexConfig)
        url, limit = cfg.sparql_url, cfg.sparql_page
        offset = 0
        if self.guard is not None:  # a host that challenges Cellar's resources serves SPARQL too
            self.guard.check(url)
        while True:
            query = QUERY % {"filter": where, "limit": limit, "offset": offset}
            answer = ctx.client.get_json(
                url, {"query": query, "format": "application/sparql-results+json"})
            bindings = ((answer or {}).get("results") or {}).get("bindings") or []
            for binding in bindings:
                if (link := to_link(binding)) is not None:
                    yield link
            if len(bindings) < limit:
                return
            offset += limit

    # -- candidates ---------------------------------------------------------------------------

    def _candidate(self, ctx: DiscoveryContext, act: Act, lang: str, dataset: str,
                   covered: dict[str, list[str]], groups: Groups, splits: dict[str, str],
                   cache: dict[tuple[str, str], tuple[Summary, str] | None],
                   ) -> Candidate | None:
        if lang not in act.languages:
            return None
        cfg = ctx.settings(EurlexConfig)
        link = choose_summary(act.links, lang, covered, cfg.include_obsolete)
        if link is None:
            return None
        key = (link.legissum, lang)
        if self.guard is not None and ChallengeGuard.host(cfg.cellar_url) in self.guard.stopped:
            return None  # one discovery failure says why; no request
        if key not in cache:
            cache[key] = None
            with ctx.isolated(f"summary {link.legissum} ({lang})"):
                cache[key] = self._summary(ctx, link, lang)
        found = cache[key]
        if found is None:
            return None
        summary, summary_url = found
        cellar = cfg.cellar_url
        extra: dict[str, Any] = {
            "celex": act.celex,
            "legissum": link.legissum,
            "summary_url": summary_url,
            "summary_format": summary.format,
            "summary_last_modified": summary.last_modified or link.modified,
            "summary_meta": summary.meta,
            "summary_acts": covered.get(link.legissum, [act.celex]),
            "summaries": [
                {"legissum": s.legissum, "uri": s.summary_uri, "obsolete": s.obsolete,
                 "modified": s.modified, "acts": covered.get(s.legissum, [])}
                for s in sorted(act.links, key=lambda s: s.legissum)
            ],
            "act_type": act.act_type,
            "act_languages": sorted(act.languages),
            "summary_languages": sorted(link.summary_languages),
            "group": groups.find(act.celex),
        }
        if act.celex in splits:
            extra["split"] = splits[act.celex]
        title = (summary.meta.get("summary_of") or [""])[0] or summary.title
        return Candidate(
            id=f"eurlex:{lang}:{act.celex}",
            source="eurlex",
            source_id=act.celex,
            dataset=dataset,
            title=title,
            language=lang,
            abstracts={lang: summary.text},
            published=act.date or _celex_year(act.celex),
            file_url=f"{cellar}celex/{act.celex}",
            landing_url=(f"https://eur-lex.europa.eu/legal-content/{lang.upper()}/TXT/"
                         f"?uri=CELEX:{act.celex}"),
            licence="CC-BY-4.0",
            extra=extra,
        )

    def _summary(self, ctx: DiscoveryContext, link: Link,
                 lang: str) -> tuple[Summary, str] | None:
        """(Summary, url) in `lang`, or None when Cellar has no such expression (404)."""
        cfg = ctx.settings(EurlexConfig)
        url = f"{cfg.cellar_url}legissum/{link.legissum}"
        body = negotiate(ctx.client, url, SUMMARY_TYPE, lang, cfg, self.guard)
        if body is None or is_missing_page(body):
            log.info("EUR-Lex: no %s summary %s", lang, link.legissum)
            return None
        summary = parse_summary(body)
        if not summary.text.strip():
            return None
        return summary, url

    # -- documents ----------------------------------------------------------------------------

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        """The OJ PDF and the act's XHTML, stored as one bundle; either may be missing."""
        cfg = self._config()
        self.guard = self.guard or ChallengeGuard(None, cfg)  # one streak across downloads
        lang = candidate.language
        pdf_sha: str | None = None
        info: dict[str, str] = {}
        if "pdf" in cfg.formats:
            parts = negotiate_parts(client, candidate.file_url, PDF_TYPE, lang, cfg, self.guard)
            if parts:
                pdf_sha = store_pdf(parts, blobs, candidate.file_url)
                info["pdf_parts"] = str(len(parts))
        reference: str | None = None
        raw: list[str] = []
        if "xhtml" in cfg.formats:
            parts = negotiate_parts(client, candidate.file_url, XHTML_TYPE, lang, cfg,
                                    self.guard)
            if not parts and cfg.eurlex_fallback:
                parts = self._fallback(client, candidate, info)
            texts = []
            for part in parts:
                raw.append(store_bytes(blobs, part))
                parsed = act_text(part)
                info["html_family"] = parsed.family
                texts.append(parsed.text)
            if (text := "\n".join(t for t in texts if t).strip()):
                reference = store_text(blobs, text)
        if pdf_sha is None and reference is None:
            if info.get("html_fallback") == "blocked":
                raise Reject(Reason.BLOCKED, f"no PDF in {lang}; EUR-Lex page behind a challenge")
            raise Reject(Reason.UNAVAILABLE, f"Cellar has neither PDF nor XHTML text in {lang}")
        info["formats"] = "+".join(n for n, v in (("pdf", pdf_sha), ("html", reference)) if v)
        return store_bundle(blobs, Bundle(pdf_sha, reference, raw, info))

    def _fallback(self, client: HttpClient, candidate: Candidate,
                  info: dict[str, str]) -> list[bytes]:
        """The EUR-Lex page when Cellar has no XHTML; a challenge there costs only the text."""
        try:
            page = eurlex_page(client, candidate.source_id, candidate.language, self._config(),
                               self.guard)
        except HostChallenged:
            info["html_fallback"] = "blocked"
            return []
        except Reject as exc:
            if exc.reason != Reason.BLOCKED:
                raise
            info["html_fallback"] = "blocked"
            return []
        info["html_fallback"] = "eur-lex" if page else "missing"
        return [page] if page else []


def _day_before(since: str) -> str:
    """`--since` (YYYY, YYYY-MM or YYYY-MM-DD) as the day before it: the filters are strict."""
    parts = since.strip().split("-")
    try:
        day = dt.date(int(parts[0]), int(parts[1]) if len(parts) > 1 else 1,
                      int(parts[2]) if len(parts) > 2 else 1)
    except (ValueError, IndexError):
        raise ConfigError(f"--since expects YYYY, YYYY-MM or YYYY-MM-DD, got {since!r}") from None
    if len(parts) > 3:
        raise ConfigError(f"--since expects YYYY, YYYY-MM or YYYY-MM-DD, got {since!r}")
    return (day - dt.timedelta(days=1)).isoformat()


def _celex_year(celex: str) -> str:
    return celex[1:5] if len(celex) > 5 and celex[1:5].isdigit() else ""
