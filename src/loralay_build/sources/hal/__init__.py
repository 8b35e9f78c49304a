"""HAL (api.archives-ouvertes.fr): Solr search with cursorMark paging, every abstract kept."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from loralay_build.blobs import BlobStore
from loralay_build.corpus.columns import Column
from loralay_build.dates import PARTIAL_DATE
from loralay_build.errors import ConfigError
from loralay_build.fetch import fetch_pdf
from loralay_build.http import HttpClient
from loralay_build.identity import Identity
from loralay_build.licences import ALL_RIGHTS_RESERVED, LicenceMapping, Terms, recognise
from loralay_build.parse.clean import Cleaner, CoverPage
from loralay_build.records import Candidate
from loralay_build.source_table import SourceConfig
from loralay_build.sources.base import DiscoveryContext
from loralay_build.sources.command import SourceCommand, since_option
from loralay_build.tables import check_ranges
from loralay_build.views.schema import ViewLayout

log = logging.getLogger(__name__)

FIELDS = (
    "docid,halId_s,uri_s,version_i,docType_s,language_s,title_s,fr_title_s,abstract_s,"
    "*_abstract_s,fileMain_s,files_s,openAccess_bool,doiId_s,licence_s,producedDate_s,"
    "publicationDate_s,submittedDate_tdate,modifiedDate_tdate"
)
ABSTRACT_FIELD = re.compile(r"^([a-z]{2,3})_abstract_s$")
WATERMARK = "modifiedDate_tdate"


def _first(value: Any) -> str:
    """HAL returns most text fields as lists; some clients report scalars. Accept both."""
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return "" if value is None else str(value)


def _date(doc: dict[str, Any]) -> str:
    for name in ("producedDate_s", "publicationDate_s", "submittedDate_tdate"):
        value = _first(doc.get(name))[:10]
        if PARTIAL_DATE.match(value):
            return value
    return ""


def to_candidate(doc: dict[str, Any], dataset: str) -> Candidate:
    """Map one Solr document to a Candidate (field table in the HAL source notes)."""
    docid = _first(doc.get("docid"))
    abstracts = {}
    for name, value in sorted(doc.items()):
        found = ABSTRACT_FIELD.match(name)
        text = _first(value).strip()
        if found and text:
            abstracts[found.group(1)] = text
    files = doc.get("files_s") or []
    return Candidate(
        id=f"hal:{docid}",
        source="hal",
        source_id=docid,
        dataset=dataset,
        title=_first(doc.get("fr_title_s")) or _first(doc.get("title_s")),
        language=_first(doc.get("language_s")),
        abstracts=abstracts,
        published=_date(doc),
        file_url=_first(doc.get("fileMain_s")) or _first(files),
        landing_url=_first(doc.get("uri_s")),
        licence=_first(doc.get("licence_s")),
        doi=_first(doc.get("doiId_s")),
        extra={
            "halId": _first(doc.get("halId_s")),
            "version": doc.get("version_i"),
            "docType": _first(doc.get("docType_s")),
            "modified": _first(doc.get(WATERMARK)),
        },
    )


def solr_date(value: str) -> str:
    """`2024`, `2024-03` or `2024-03-05` (or a full timestamp) as a Solr date literal."""
    if "T" in value:
        return value if value.endswith("Z") else value + "Z"
    parts = ([*value.split("-"), "01", "01"])[:3]
    if not PARTIAL_DATE.match(value):
        raise ConfigError(f"--since expects YYYY, YYYY-MM or YYYY-MM-DD, got {value!r}")
    return f"{parts[0]}-{parts[1]}-{parts[2]}T00:00:00Z"


@dataclass(frozen=True, kw_only=True)
class HalConfig(SourceConfig):
    """`[source]` of HAL."""

    search_url: str  # HAL's Solr search API
    filters: tuple[str, ...]  # Solr `fq` clauses
    rows: int  # records per page

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ranges(self, "source", at_least={"rows": 1})


HAL_PUBLIC_DOMAIN = Terms("LicenseRef-HAL-public-domain",
                          "http://hal.archives-ouvertes.fr/licences/publicDomain/", free=True)
# HAL's own licence pages and labels, as HAL's licence referential offers them for
# `licence_s` (the `licence` menu of a HAL deposit client lists these values and labels;
# HAL's other values are the Creative Commons URLs the recogniser reads, unversioned
# `…/licenses/by/` and `http://creativecommons.org/choose/mark/` among them).
_HAL_OWN = {
    "publicdomain": HAL_PUBLIC_DOMAIN.spdx,  # ".../licences/publicDomain/": "Domaine public"
    "etalab": "etalab-2.0",  # ".../licences/etalab/": "ETALAB - Licence Ouverte"
    "copyright": ALL_RIGHTS_RESERVED,  # ".../licences/copyright/": "Copyright (Tous droits…)"
}
_HAL_NAMES = {
    "domaine public": HAL_PUBLIC_DOMAIN.spdx,
    "etalab - licence ouverte": "etalab-2.0",
    "copyright (tous droits réservés)": ALL_RIGHTS_RESERVED,
}


def licence_id(raw: str) -> str | None:
    """HAL's own licence pages and labels, then the shared recogniser."""
    own = re.fullmatch(r"(?:https?://)?[a-z.-]*(?:archives-ouvertes\.fr|hal\.science)"
                       r"/licen[cs]es/([A-Za-z]+)/?", raw.strip())
    if own:
        return _HAL_OWN.get(own.group(1).lower())
    return _HAL_NAMES.get(raw.strip().lower()) or recognise(raw)


# HAL's generated cover page: its id line and its banner in English or French.
HAL_COVER = CoverPage("HAL Id", ("HAL is a multi-disciplinary open access archive",
                                 "L'archive ouverte pluridisciplinaire HAL"))


class HalSource:
    name = "hal"
    config_class: type[SourceConfig] = HalConfig
    command = SourceCommand(
        help="Crawl HAL: French articles and conference papers with a file.",
        options=(since_option("Only records modified since this date (YYYY[-MM[-DD]])."),),
    )
    declares: tuple[Column, ...] = ()
    demos: tuple[str, ...] = ("hal",)
    licences = LicenceMapping(read=licence_id, terms=(HAL_PUBLIC_DOMAIN,))
    # A new file is a new `version`; the modification date moves with any re-indexing (a new
    # URL scheme) and only says when to list the record again.
    identity = Identity(("file_url", "landing_url", "extra.modified"))
    columns: tuple[str, ...] = ("doi",)
    card_notes = ""
    cleaners: tuple[tuple[str, Cleaner], ...] = (("hal_cover", HAL_COVER),)
    views: tuple[ViewLayout, ...] = ()

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        cfg = ctx.settings(HalConfig)
        params: list[tuple[str, Any]] = [("q", "*:*")]
        params += [("fq", clause) for clause in cfg.filters]
        since = solr_date(ctx.since) if ctx.since else ctx.get_mark(WATERMARK)
        if since:
            params.append(("fq", f"{WATERMARK}:[{since} TO NOW]"))
        params += [
            ("fl", FIELDS), ("sort", "docid asc"), ("rows", cfg.rows),
            ("wt", "json"),
        ]
        mark, seen, newest = "*", 0, since or ""
        while True:
            answer = ctx.client.get_json(cfg.search_url, [*params, ("cursorMark", mark)])
            docs = answer.get("response", {}).get("docs", [])
            batch = [to_candidate(doc, ctx.dataset) for doc in docs]
            seen += len(batch)
            newest = max([newest, *(str(c.extra["modified"]) for c in batch)])
            if batch:
                yield batch
            next_mark = str(answer.get("nextCursorMark", mark))
            if next_mark == mark or not docs:
                break
            mark = next_mark
        if newest:
            ctx.set_mark(WATERMARK, newest)
        log.info("HAL discovery: %d records, high-water mark %s", seen, newest or "-")

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        return fetch_pdf(candidate.file_url, client, blobs)
