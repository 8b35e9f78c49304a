"""PubMed Central (PubMed-Lay): front matter from PMC's OAI-PMH (`pmc_fm`), PDFs from the PMC
Cloud Service, the original dataset's splits kept.

PMC retired `oa.fcgi` and the FTP packages in 2026; the Cloud Service publishes, per article
version, a metadata JSON with the licence, the retraction flag and an MD5-tagged `pdf_url`.
The version and its metadata are read during discovery, so each record carries its licence
and names the file it was built from. Retracted and non-open-access records are rejected
at download time, with their reason.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from lxml import etree

from loralay_build.blobs import BlobStore
from loralay_build.corpus.columns import Column
from loralay_build.errors import ConfigError, Reason, Reject, TransientError
from loralay_build.http import HttpClient, HttpStatusError
from loralay_build.identity import Identity
from loralay_build.licences import NOASSERTION, LicenceMapping, Terms, recognise
from loralay_build.parse.clean import Cleaner
from loralay_build.records import Candidate
from loralay_build.safexml import child, children, parse_xml, text_of
from loralay_build.source_table import SourceConfig, key, optional_key
from loralay_build.sources.base import DiscoveryContext
from loralay_build.sources.checksum import fetch_verified_pdf
from loralay_build.sources.command import Option, SourceCommand, given, id_keys, id_options
from loralay_build.sources.oaipmh import OaiClient, OaiRecord, harvest
from loralay_build.sources.presets import configured_ids
from loralay_build.sources.pubmed.jats import normalise_pmcid, read_front
from loralay_build.tables import check_ranges

log = logging.getLogger(__name__)

IDCONV_BATCH = 200  # the converter's limit per request
CLOUD = "https://pmc-oa-opendata.s3.amazonaws.com"
OAI_ID = "oai:pubmedcentral.nih.gov:"
MARK = "oai_datestamp"
BATCH = 20
_S3_URL = re.compile(r"^s3://([^/]+)/([^?]+)(?:\?md5=([0-9a-fA-F]{32}))?$")


class Cloud:
    """The PMC Cloud Service bucket: version listing and per-version metadata."""

    def __init__(self, client: HttpClient, base: str) -> None:
        self.client = client
        self.base = base.rstrip("/")

    def versions(self, pmcid: str) -> list[int]:
        """Version numbers of an article (S3 ListObjectsV2 with a delimiter, paged)."""
        params = {"list-type": "2", "prefix": f"{pmcid}.", "delimiter": "/"}
        out: list[int] = []
        while True:
            root = parse_xml(self.client.get(f"{self.base}/", params).body)
            for group in children(root, "CommonPrefixes"):
                tail = text_of(group, "Prefix").rstrip("/").rsplit(".", 1)[-1]
                if tail.isdigit():
                    out.append(int(tail))
            token = text_of(root, "NextContinuationToken")
            if text_of(root, "IsTruncated") != "true" or not token:
                return sorted(out)
            params = {**params, "continuation-token": token}

    def metadata(self, pmcid: str, version: int) -> dict[str, Any]:
        answer = self.client.get_json(f"{self.base}/metadata/{pmcid}.{version}.json")
        return answer if isinstance(answer, dict) else {}

    def https(self, s3_url: str) -> tuple[str, str]:
        """`s3://bucket/KEY?md5=H` -> (the bucket's HTTPS URL of KEY, H)."""
        found = _S3_URL.match(s3_url or "")
        if not found:
            return "", ""
        return f"{self.base}/{found.group(2)}", (found.group(3) or "").lower()


def _cloud_extra(cloud: Cloud, pmcid: str) -> tuple[str, str, dict[str, Any]]:
    """(pdf URL, licence, extra) of the newest version in the cloud; no URL when absent."""
    try:
        versions = cloud.versions(pmcid)
        if not versions:
            return "", "", {"cloud": "absent"}
        meta = cloud.metadata(pmcid, versions[-1])
    except HttpStatusError as exc:
        return "", "", {"cloud": f"HTTP {exc.status}"}
    url, md5 = cloud.https(str(meta.get("pdf_url") or ""))
    xml_url, xml_md5 = cloud.https(str(meta.get("xml_url") or ""))
    return url, str(meta.get("license_code") or ""), {
        "xml_url": xml_url,
        "xml_md5": xml_md5,
        "pmc_version": versions[-1],
        "md5": md5,
        "is_retracted": bool(meta.get("is_retracted")),
        "is_pmc_openaccess": bool(meta.get("is_pmc_openaccess")),
        "is_manuscript": bool(meta.get("is_manuscript")),
    }


def selected(article: etree._Element, selection: dict[str, Any]) -> bool:
    """Whether the record's journal passes the publisher / journal filters (empty = all)."""
    publishers = {p.lower() for p in selection.get("publishers", [])}
    journals = {j.lower() for j in selection.get("journals", [])}
    if not publishers and not journals:
        return True
    meta = child(child(article, "front"), "journal-meta")
    publisher = text_of(child(meta, "publisher"), "publisher-name").lower()
    names = {text_of(child(meta, "journal-title-group"), "journal-title").lower()}
    names |= {" ".join("".join(j.itertext()).split()).lower()
              for j in (children(meta, "journal-id") if meta is not None else [])}
    return publisher in publishers or bool(names & journals)


@dataclass(frozen=True, kw_only=True)
class PubmedConfig(SourceConfig):
    """`[source]` of PubMed Central: the harvest, the journal filter and the derived views."""

    oai_url: str  # PMC's OAI-PMH endpoint
    idconv_url: str  # PMID -> PMCID
    oai_set: str = key("set")  # OAI-PMH set harvested
    metadata_prefix: str  # OAI-PMH format of the front matter
    selection: str  # one of `selections`, or "" for the explicit lists alone
    selections: dict[str, dict[str, tuple[str, ...]]]  # name -> publishers / journals
    publishers: tuple[str, ...]  # keep articles of these publishers (empty: any)
    journals: tuple[str, ...]  # keep articles of these journals (empty: any)
    VIEWS: ClassVar[tuple[str, ...]] = ("sumpubmed", "citations", "cohan")
    view_cit: bool  # citation markers -> <cit> in the clean text
    view_dig: bool  # numbers -> <dig> in the clean text
    view_lowercase: bool  # lowercase the clean text, as SumPubMed did
    citation_unit: Literal["sentence", "paragraph"]  # one citation record per sentence or paragraph
    citation_context: int  # sentences of context on each side, within the section
    min_resolved: float  # share of a record's cited papers that need an abstract
    cloud: str | None = None  # the PMC Cloud Service bucket (tests point it elsewhere)
    start: str | None = optional_key("from")  # YYYY-MM-DD
    until: str | None = None  # last date (YYYY-MM-DD) harvested
    ids: str | None = None  # file of PMCIDs
    split_ids: str | None = None  # folder of train/val/test id files
    paths: ClassVar[tuple[str, ...]] = ("ids", "split_ids")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.selection and self.selection not in self.selections:
            raise ConfigError(f"[source] selection = {self.selection!r}: unknown selection; known: "
                              f"{', '.join(sorted(self.selections))}")
        for name, table in self.selections.items():
            unknown = sorted(set(table) - {"publishers", "journals"})
            if unknown:
                raise ConfigError(f"[source] selections.{name}: unknown key(s) "
                                  f"{', '.join(unknown)}; valid: journals, publishers")
        check_ranges(self, "source", at_least={"citation_context": 0, "min_resolved": 0},
                     at_most={"min_resolved": 1})

    def selection_filter(self) -> dict[str, list[str]]:
        """The journal filter: a named selection (`selection = "bmc"`) and explicit lists."""
        chosen = self.selections.get(self.selection, {}) if self.selection else {}
        return {"publishers": [*chosen.get("publishers", ()), *self.publishers],
                "journals": [*chosen.get("journals", ()), *self.journals]}


def to_candidate(record: OaiRecord, cloud: Cloud, dataset: str, default_lang: str,
                 presets: dict[str, str],
                 selection: dict[str, Any] | None = None) -> Candidate | None:
    if record.deleted or record.metadata is None:
        return None
    front = read_front(record.metadata, default_lang)
    if selection and not selected(record.metadata, selection):
        return None
    pmcid = front.pmcid or normalise_pmcid(record.identifier)
    if not pmcid:
        return None
    url, licence, extra = _cloud_extra(cloud, pmcid)
    extra["datestamp"] = record.datestamp
    if pmcid in presets:
        extra["split"] = presets[pmcid]
    return Candidate(
        id=f"pubmed:{pmcid}",
        source="pubmed",
        source_id=pmcid,
        dataset=dataset,
        title=front.title,
        language=front.language,
        abstracts=front.abstracts,
        published=front.published,
        file_url=url,
        landing_url=f"https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/",
        licence=licence,
        doi=front.doi,
        extra=extra,
    )


def _keys(values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
    switches = {"view_cit": False if values["no_cit"] else None,
                "view_dig": False if values["no_dig"] else None,
                "min_resolved": values["min_resolved"]}
    return {**id_keys(values),
            **given(set=values["set_"], selection=values["selection"],
                    view_lowercase=values["lowercase"],
                    citation_unit=values["citation_unit"]),
            **{k: v for k, v in switches.items() if v is not None}}


# PMC's `license_code`, which has no version: the PMC Cloud Service's metadata JSON
# (shared/sources/pubmed.md: `CC BY`… `CC0` read by the recogniser, plus these) and the
# legacy oa.fcgi `license` attribute ("none").
PMC_TDM = Terms("LicenseRef-PMC-TDM", summary="text mining only")  # author manuscripts
_PMC_CODES = {"tdm": PMC_TDM.spdx, "none": NOASSERTION, "no-cc code": NOASSERTION}


def licence_id(raw: str) -> str | None:
    """PMC's own licence codes, then the shared recogniser."""
    return _PMC_CODES.get(raw.strip().lower()) or recognise(raw)


class PubmedSource:
    name = "pubmed"
    config_class: type[SourceConfig] = PubmedConfig
    command = SourceCommand(
        help="Build PubMed-Lay: PMC open-access articles with layout, the original splits kept.",
        options=(
            *id_options("Start date (YYYY-MM-DD): harvest PMC OAI-PMH records from this "
                        "datestamp (default: the last committed one)."),
            Option("--set", "OAI-PMH set (default pmc-open).", name="set_"),
            Option("--selection", "Named journal selection from the config (bmc: BMC "
                   "journals, SumPubMed's original selection)."),
            Option("--lowercase", "Views: lowercase the text.", kind="flag"),
            Option("--no-cit", "Clean text: keep citation markers.", kind="flag"),
            Option("--no-dig", "Clean text: keep numbers.", kind="flag"),
            Option("--min-resolved", "Citations: share of cited papers that must have an "
                   "abstract (1 = all).", kind="fraction"),
            Option("--citation-unit", "Citations: one record per citing sentence or per "
                   "paragraph.", kind="choice", choices=("sentence", "paragraph")),
        ),
        keys=_keys,
    )
    declares: tuple[Column, ...] = ()
    demos: tuple[str, ...] = ("pubmed",)
    licences = LicenceMapping(read=licence_id, terms=(PMC_TDM,))
    identity = Identity(("file_url", "landing_url", "extra.xml_url"))
    columns: tuple[str, ...] = ("doi",)
    card_notes = ""
    cleaners: tuple[tuple[str, Cleaner], ...] = ()

    def check_input(self, config: SourceConfig) -> None:
        """The id lists, before the build creates anything."""
        if not isinstance(config, PubmedConfig):
            raise TypeError(f"[source] is a {type(config).__name__}, not a PubmedConfig")
        configured_ids(config.ids, config.split_ids, normalise_pmcid)

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        cfg = ctx.settings(PubmedConfig)
        ids, presets = configured_ids(cfg.ids, cfg.split_ids, normalise_pmcid)
        oai = OaiClient(ctx.client, cfg.oai_url)
        cloud = Cloud(ctx.client, cfg.cloud or CLOUD)
        prefix = cfg.metadata_prefix
        wanted = [*ids, *(i for i in presets if i not in set(ids))]
        if wanted:
            pages: Iterator[list[OaiRecord]] = self._get_records(oai, wanted, prefix)
        else:
            params = {
                "metadataPrefix": prefix,
                "set": cfg.oai_set,
                "from": ctx.since or cfg.start or ctx.get_mark(MARK) or "",
                "until": cfg.until or "",
            }
            pages = harvest(ctx, oai, params, MARK)
        language = cfg.language
        selection = cfg.selection_filter()
        seen = 0
        for records in pages:
            batch = [c for r in records
                     if (c := to_candidate(r, cloud, ctx.dataset, language, presets, selection))]
            seen += len(batch)
            if batch:
                yield batch
        log.info("PMC discovery: %d records", seen)

    def _get_records(self, oai: OaiClient, pmcids: list[str],
                     prefix: str) -> Iterator[list[OaiRecord]]:
        for start in range(0, len(pmcids), BATCH):
            found = []
            for pmcid in pmcids[start:start + BATCH]:
                record = oai.get_record(OAI_ID + pmcid.removeprefix("PMC"), prefix)
                if record is None:
                    log.warning("PMC OAI-PMH does not know %s", pmcid)
                else:
                    found.append(record)
            yield found

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        extra = candidate.extra
        if extra.get("is_retracted"):
            raise Reject(Reason.UNAVAILABLE, "retracted (PMC Cloud is_retracted)")
        if not extra.get("is_pmc_openaccess"):
            raise Reject(Reason.UNAVAILABLE, "not in the PMC open-access subset")
        return fetch_verified_pdf(candidate.file_url, str(extra.get("md5", "")), client, blobs)




def fetch_jats(candidate: Candidate, client: HttpClient, blobs: BlobStore, oai_url: str) -> str:
    """Store the article's full JATS and return its sha256: the bucket's XML (MD5-checked)
    when the cloud metadata names one, else, or when that file is missing (404) or fails its
    MD5, OAI-PMH GetRecord with the `pmc` format.

    A bucket failure OAI cannot make up for is transient (the file may appear or be
    repaired); only PMC's refusal to disseminate the full text is final.
    """
    url, md5 = str(candidate.extra.get("xml_url", "")), str(candidate.extra.get("xml_md5", ""))
    failed = ""
    if url:
        try:
            body = client.get(url, headers={"Accept": "application/xml"}).body
        except HttpStatusError as exc:
            if exc.status != 404:
                raise
            failed = "the bucket has no XML (404)"
        else:
            if not md5 or hashlib.md5(body, usedforsecurity=False).hexdigest() == md5:
                return _store(blobs, body)
            failed = "the bucket's XML fails its md5"
        log.info("%s: %s; full text from OAI-PMH", candidate.source_id, failed)
    oai = OaiClient(client, oai_url)
    try:
        record = oai.get_record(OAI_ID + candidate.source_id.removeprefix("PMC"), "pmc")
    except ConfigError as exc:  # cannotDisseminateFormat: not in the open-access subset
        raise Reject(Reason.UNAVAILABLE, f"no full text for {candidate.source_id}: {exc}") \
            from exc
    if record is None or record.metadata is None:
        if failed:
            raise TransientError(f"no full text for {candidate.source_id} yet: {failed} and "
                                 "OAI-PMH does not have it")
        raise Reject(Reason.UNAVAILABLE, f"no full text for {candidate.source_id}")
    return _store(blobs, etree.tostring(record.metadata, encoding="utf-8"))


def _store(blobs: BlobStore, body: bytes) -> str:
    with blobs.staging() as handle:
        handle.write(body)
        return blobs.commit(handle)


def pmcids_for_pmids(client: HttpClient, url: str, pmids: list[str]) -> dict[str, str]:
    """PMID -> PMCID from NCBI's ID converter, for every PMID asked ("" = not in PMC)."""
    out: dict[str, str] = {}
    for start in range(0, len(pmids), IDCONV_BATCH):
        chunk = pmids[start:start + IDCONV_BATCH]
        answer = client.get_json(url, {"ids": ",".join(chunk), "idtype": "pmid",
                                       "format": "json", "tool": "loralay-build"})
        records = answer.get("records", []) if isinstance(answer, dict) else []
        for record in records if isinstance(records, list) else []:
            if not isinstance(record, dict):
                continue
            pmid = str(record.get("pmid") or record.get("requested-id") or "")
            out[pmid] = normalise_pmcid(str(record.get("pmcid") or "")) or ""
        for pmid in chunk:
            out.setdefault(pmid, "")
    return out
