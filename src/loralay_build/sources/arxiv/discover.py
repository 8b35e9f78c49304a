"""arXiv (arXiv-Lay): metadata from the Kaggle snapshot, OAI-PMH `arXivRaw` or the Atom API;
PDFs from the bulk bucket; the original dataset's splits kept.

Discovery yields the same candidates whichever way the metadata comes:
  * `metadata` (path or URL of a snapshot), streamed line by line and filtered by the id
    lists, `categories` and a `from`/`until` window on the v1 date;
  * `oai = true`: ListRecords with `set`, `from` (default: the stored datestamp), `until`;
  * otherwise the ids of `ids` / `split_ids`, looked up 100 at a time in the Atom API.
The PDF version is chosen during discovery (arxiv_files), so the record names the file it
was built from. When that is not the version the metadata describes (the bucket lacks the
newest), the abstract matched is that version's own: from an earlier crawl that saw it as
the newest, else from the Atom API's record of that version; the latest one only when
neither has it.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

import pyarrow as pa

from loralay_build.blobs import BlobStore
from loralay_build.corpus.columns import Column, names
from loralay_build.errors import ConfigError, Reason, Reject
from loralay_build.http import HttpClient, HttpError, HttpStatusError
from loralay_build.identity import Identity
from loralay_build.licences import LicenceMapping, Terms
from loralay_build.parse.clean import Cleaner, MarginStamp
from loralay_build.records import Candidate
from loralay_build.safexml import XmlRejected, children, parse_xml
from loralay_build.source_table import SourceConfig, key, optional_key
from loralay_build.sources.arxiv.files import PdfChoice, PdfLocator
from loralay_build.sources.arxiv.meta import (
    ArxivMeta,
    date_from_id,
    from_arxiv_raw,
    from_atom_entry,
    from_kaggle,
    normalise_id,
)
from loralay_build.sources.base import DiscoveryContext, batched
from loralay_build.sources.checksum import fetch_verified_pdf
from loralay_build.sources.command import Option, SourceCommand, given, id_keys, id_options
from loralay_build.sources.oaipmh import OaiClient, harvest
from loralay_build.sources.presets import configured_ids
from loralay_build.textfile import decode_lines, text_lines
from loralay_build.views.schema import ViewLayout

log = logging.getLogger(__name__)

MARK = "oai_datestamp"
BATCH = 100
SNAPSHOT_CAP = 1 << 40  # a snapshot URL is streamed to disk; the full file is ~5 GB


def no_slash(arxiv_id: str) -> str:
    """The id as Cohan et al.'s files write it (`astro-ph9702020`)."""
    return arxiv_id.replace("/", "")


def to_candidate(meta: ArxivMeta, choice: PdfChoice, dataset: str, language: str,
                 policy: str, preset: str | None, abstract_version: int | None = None) -> Candidate:
    """`meta` holds the title and abstract of `abstract_version` (its own version if None)."""
    extra: dict[str, Any] = {
        "categories": meta.categories,
        "meta_version": meta.version,
        "abstract_version": abstract_version or meta.version,
        "version": choice.version,
        "columns": {"version": choice.version},
        "policy": policy,
        "host": choice.host,
        "md5": choice.md5,
        "size": choice.size,
        "cohan_id": no_slash(meta.id),
        "title_latex": meta.title,
    }
    if preset:
        extra["split"] = preset
    return Candidate(
        id=f"arxiv:{meta.id}",
        source="arxiv",
        source_id=meta.id,
        dataset=dataset,
        title=meta.title,
        language=language,
        abstracts={language: meta.abstract} if meta.abstract else {},
        published=meta.created or date_from_id(meta.id),
        file_url=choice.url,
        landing_url=f"https://arxiv.org/abs/{meta.id}v{choice.version}",
        licence=meta.licence,
        doi=meta.doi,
        extra=extra,
    )


@dataclass(frozen=True, kw_only=True)
class ArxivConfig(SourceConfig):
    """`[source]` of arXiv: where metadata comes from, which records and PDF versions."""

    oai_url: str  # OAI-PMH (with oai = true)
    api_url: str  # Atom API (ids without a snapshot)
    oai: bool  # list records through OAI-PMH arXivRaw instead of a snapshot
    oai_set: str = key("set")  # OAI-PMH set, e.g. "cs" or "physics:hep-th"
    categories: tuple[str, ...]  # keep records with one of these categories (prefixes)
    version: Literal["latest", "metadata"]  # newest PDF in the bucket, or the abstract's
    metadata: str | None = None  # Kaggle-format snapshot: a path or a URL
    start: str | None = optional_key("from")  # YYYY-MM-DD
    until: str | None = None  # last date (YYYY-MM-DD) listed through OAI-PMH
    ids: str | None = None  # file of ids
    split_ids: str | None = None  # folder of train/val/test id files
    paths: ClassVar[tuple[str, ...]] = ("metadata", "ids", "split_ids")
    storage: str | None = None  # bulk bucket endpoints (tests point them elsewhere)
    bucket: str | None = None  # the bulk bucket's name
    export: str | None = None  # the export host, fallback for PDFs the bucket lacks


class _Filter:
    """Which metadata records a run wants: id set, category prefixes, v1-date window."""

    def __init__(self, config: ArxivConfig, wanted: set[str], by_id: bool) -> None:
        self.wanted = wanted if by_id else set()
        self.categories = list(config.categories)
        self.start = config.start or ""
        self.end = config.until or ""

    def __call__(self, meta: ArxivMeta) -> bool:
        if self.wanted and meta.id not in self.wanted:
            return False
        if self.categories and not any(
            c == want or c.startswith(want + ".") for c in meta.categories
            for want in self.categories
        ):
            return False
        day = meta.created
        return not (self.start and day < self.start) and not (self.end and day[:len(self.end)]
                                                               > self.end)


def _keys(values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
    metadata, categories = values["metadata"], values["categories"]
    if metadata and "://" not in metadata:
        metadata = str(Path(metadata).resolve())
    return {**id_keys(values), **given(
        metadata=metadata, oai=values["oai"], set=values["set_"],
        version=values["version_policy"],
        categories=[c.strip() for c in categories.split(",") if c.strip()] if categories
        else None)}


# arXiv's own licences, as its metadata (OAI-PMH arXivRaw `license`, the Kaggle snapshot)
# spells them: shared/sources/arxiv.md, the recorded record of 1412.6980.
_ARXIV_URL = r"(?:https?://)?(?:www\.)?arxiv\.org/licenses/{}/?"
ARXIV_TERMS = (
    Terms("LicenseRef-arXiv-nonexclusive-distrib-1.0",
          "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
          spelling=_ARXIV_URL.format(r"nonexclusive-distrib/1\.0"),
          summary="arXiv's distribution licence"),
    Terms("LicenseRef-arXiv-assumed-1991-2003", "http://arxiv.org/licenses/assumed-1991-2003/",
          spelling=_ARXIV_URL.format("assumed-1991-2003"), summary="arXiv's distribution licence"),
)


# arXiv's vertical identifier stamp: `arXiv:2101.00001v2`, `arXiv:math.GT/0309136v1`.
ARXIV_STAMP = MarginStamp(r"^arXiv:(\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$")


class ArxivSource:
    name = "arxiv"
    config_class: type[SourceConfig] = ArxivConfig
    command = SourceCommand(
        help="Build arXiv-Lay: arXiv papers with layout, the original splits kept.",
        options=(
            *id_options("Start date (YYYY-MM-DD): OAI-PMH `from`, or the earliest v1 date "
                        "kept from a metadata snapshot."),
            Option("--metadata", "Kaggle-format metadata snapshot (path or URL), streamed."),
            Option("--oai", "Harvest OAI-PMH arXivRaw (incremental from the last committed "
                   "datestamp).", kind="flag"),
            Option("--set", "OAI-PMH set, e.g. cs or physics:hep-th.", name="set_"),
            Option("--categories",
                   "Comma-separated categories or prefixes to keep (cs,stat.ML)."),
            Option("--pdf-version", "PDF version: newest in the bucket, or the one the metadata "
                   "abstract is of.", name="version_policy", kind="choice",
                   choices=("latest", "metadata")),
        ),
        keys=_keys,
    )
    declares: tuple[Column, ...] = (
        Column("version", pa.int16(), "the paper version the PDF is (arXiv), the abstract "
               "being that version's when its record was found"),
    )
    columns: tuple[str, ...] = ("doi", *names(declares))
    demos: tuple[str, ...] = ("arxiv",)
    licences = LicenceMapping(terms=ARXIV_TERMS)
    # A version's PDF never changes: the bucket or export host it comes from, and the
    # checksum and size only the bucket lists, say where it is, not what it holds.
    identity = Identity(("file_url", "landing_url", "extra.host", "extra.md5",
                         "extra.size"))
    card_notes = ""
    cleaners: tuple[tuple[str, Cleaner], ...] = (("arxiv_stamp", ARXIV_STAMP),)
    views: tuple[ViewLayout, ...] = ()

    def check_input(self, config: SourceConfig) -> None:
        """The id lists and a local snapshot, before the build creates anything."""
        if not isinstance(config, ArxivConfig):
            raise TypeError(f"[source] is a {type(config).__name__}, not an ArxivConfig")
        configured_ids(config.ids, config.split_ids, normalise_id)
        if config.metadata and "://" not in config.metadata \
                and not Path(config.metadata).is_file():
            raise ConfigError(f"metadata snapshot not found: {config.metadata}")
        if not (config.oai or config.metadata or config.ids or config.split_ids):
            raise ConfigError("arxiv needs --metadata, --oai, --ids or --split-ids")

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        cfg = ctx.settings(ArxivConfig)
        ids, presets = configured_ids(cfg.ids, cfg.split_ids, normalise_id)
        wanted = set(ids) | set(presets)
        locator = PdfLocator(ctx.client, cfg.version, cfg.storage, cfg.bucket, cfg.export)
        language = cfg.language
        if cfg.oai:
            metas = self._oai(ctx, _Filter(cfg, wanted, by_id=False))
        elif cfg.metadata:
            metas = self._snapshot(ctx, cfg.metadata, _Filter(cfg, wanted, bool(wanted)))
        elif wanted:
            metas = self._atom(ctx, [*ids, *(i for i in presets if i not in set(ids))])
        else:
            raise ConfigError("arxiv needs --metadata, --oai, --ids or --split-ids")
        known = {row.candidate.id: row.candidate for row in ctx.state.rows(ctx.dataset)}
        seen = 0
        for batch in metas:
            picked = []
            for meta in batch:
                old = known.get(f"arxiv:{meta.id}")
                choice = _reuse(old, meta, locator.policy) or locator.choose(meta)
                picked.append((meta, choice, old))
            records = self._versions(ctx, [
                (meta.id, choice.version) for meta, choice, old in picked
                if choice.version != meta.version and not _earlier(old, choice.version, language)
            ])
            out = []
            for meta, choice, old in picked:
                shown, version = _abstract_of(meta, choice.version, old, language, records)
                out.append(to_candidate(shown, choice, ctx.dataset, language, locator.policy,
                                        presets.get(meta.id), version))
            seen += len(out)
            if out:
                yield out
        log.info("arXiv discovery: %d records", seen)

    def _snapshot(self, ctx: DiscoveryContext, where: str,
                  keep: _Filter) -> Iterator[list[ArxivMeta]]:
        if where.startswith(("http://", "https://")):
            with tempfile.TemporaryFile() as handle:
                ctx.client.download(where, handle, max_bytes=SNAPSHOT_CAP)
                handle.seek(0)
                lines = (line for _, line in decode_lines(handle, where))
                yield from batched(_kaggle(lines, keep), BATCH)
            return
        path = Path(where)
        if not path.is_file():
            raise ConfigError(f"metadata snapshot not found: {path}")
        yield from batched(_kaggle((line for _, line in text_lines(path)), keep), BATCH)

    def _oai(self, ctx: DiscoveryContext, keep: _Filter) -> Iterator[list[ArxivMeta]]:
        cfg = ctx.settings(ArxivConfig)
        params = {
            "metadataPrefix": "arXivRaw",
            "set": cfg.oai_set,
            "from": ctx.since or cfg.start or ctx.get_mark(MARK) or "",
            "until": cfg.until or "",
        }
        oai = OaiClient(ctx.client, cfg.oai_url)
        for records in harvest(ctx, oai, params, MARK):
            metas = [from_arxiv_raw(r.metadata) for r in records
                     if not r.deleted and r.metadata is not None]
            yield [m for m in metas if m is not None and keep(m)]

    def _atom(self, ctx: DiscoveryContext, ids: list[str]) -> Iterator[list[ArxivMeta]]:
        url = ctx.settings(ArxivConfig).api_url
        for start in range(0, len(ids), BATCH):
            chunk = ids[start:start + BATCH]
            answer = ctx.client.get(url, {"id_list": ",".join(chunk), "start": 0,
                                          "max_results": len(chunk)})
            entries = [from_atom_entry(e) for e in children(parse_xml(answer.body), "entry")]
            found = [m for m in entries if m is not None]
            missing = set(chunk) - {m.id for m in found}
            if missing:
                log.warning("arXiv API knows none of %s", ", ".join(sorted(missing)))
            yield found

    def _versions(self, ctx: DiscoveryContext,
                  wanted: list[tuple[str, int]]) -> dict[tuple[str, int], ArxivMeta]:
        """The Atom API's records of the given (id, version) pairs, one request for all."""
        if not wanted:
            return {}
        url = ctx.settings(ArxivConfig).api_url
        ids = ",".join(f"{arxiv_id}v{version}" for arxiv_id, version in wanted)
        try:
            answer = ctx.client.get(url, {"id_list": ids, "start": 0, "max_results": len(wanted)})
            entries = [from_atom_entry(e) for e in children(parse_xml(answer.body), "entry")]
        except (HttpError, XmlRejected) as exc:  # a transient failure stops discovery
            log.warning("arXiv API: no record of %s (%s)", ids, exc)
            return {}
        return {(m.id, m.version): m for m in entries if m is not None and m.abstract}

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        try:
            return fetch_verified_pdf(candidate.file_url, str(candidate.extra.get("md5", "")),
                                      client, blobs)
        except HttpStatusError as exc:
            if exc.status == 403 and b"<" in exc.body:
                raise Reject(Reason.BLOCKED, f"robot page from {exc.url}") from exc
            raise


def _earlier(old: Candidate | None, version: int, language: str) -> str:
    """The abstract an earlier crawl stored for `version` of the paper; "" if none."""
    if old is None or version != old.extra.get("abstract_version",
                                               old.extra.get("meta_version")):
        return ""
    return old.abstracts.get(language, "")


def _abstract_of(meta: ArxivMeta, version: int, old: Candidate | None, language: str,
                 records: dict[tuple[str, int], ArxivMeta]) -> tuple[ArxivMeta, int]:
    """`meta` with the title and abstract of `version` (the PDF's), and the version they
    belong to: the latest's when no record of `version` could be had."""
    if version == meta.version:
        return meta, version
    if shown := _earlier(old, version, language):
        assert old is not None
        return replace(meta, title=old.title, abstract=shown), version
    found = records.get((meta.id, version))
    if found is None:
        log.warning("%s: the PDF is v%d, its abstract unknown: matched against v%d's",
                    meta.id, version, meta.version)
        return meta, meta.version
    return replace(meta, title=found.title or meta.title, abstract=found.abstract), version


def _reuse(old: Candidate | None, meta: ArxivMeta, policy: str) -> PdfChoice | None:
    """The file chosen by an earlier run for the same metadata version and policy."""
    if old is None or old.extra.get("meta_version") != meta.version \
            or old.extra.get("policy") != policy:
        return None
    return PdfChoice(old.file_url, int(old.extra["version"]), str(old.extra["host"]),
                     str(old.extra.get("md5", "")), int(old.extra.get("size", 0)))


def _kaggle(lines: Iterable[str], keep: _Filter) -> Iterator[ArxivMeta]:
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"metadata snapshot line {lineno}: not JSON ({exc})") from exc
        meta = from_kaggle(record) if isinstance(record, dict) else None
        if meta is not None and keep(meta):
            yield meta
