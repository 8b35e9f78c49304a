"""Abstracts of cited papers: from documents already in the state database, then from PMC's
OAI-PMH (`GetRecord`, `pmc_fm`) for a PMCID. Reference lists mostly give PMIDs, so a PMID is
first turned into a PMCID by NCBI's ID converter (one request per 200 PMIDs). Answers are
cached in a small SQLite file, the "does not exist" answers too; a transient failure is left
unresolved and asked again next run. Nothing is guessed: a reference without a usable
identifier stays unresolved.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loralay_build.errors import ConfigError, LoralayError
from loralay_build.records import Candidate
from loralay_build.sources.oaipmh import OaiClient
from loralay_build.sources.pubmed.body import Reference
from loralay_build.sources.pubmed.jats import read_front

log = logging.getLogger(__name__)

OAI_ID = "oai:pubmedcentral.nih.gov:"


@dataclass(frozen=True)
class Found:
    title: str
    abstract: str
    via: str  # "state", "oai", "" when unresolved
    pmcid: str = ""  # as listed, or from the ID converter


UNRESOLVED = Found("", "", "")


class AbstractCache:
    """PMCID -> (title, abstract) or a definitive miss, kept across runs."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS abstracts (pmcid TEXT PRIMARY KEY, "
                        "payload TEXT)")
        self.db.execute("CREATE TABLE IF NOT EXISTS pmids (pmid TEXT PRIMARY KEY, pmcid TEXT)")

    def pmcids(self, pmids: list[str]) -> dict[str, str]:
        """Known PMID -> PMCID answers ("" = not in PMC); unknown PMIDs are absent."""
        out: dict[str, str] = {}
        for pmid in pmids:
            row = self.db.execute("SELECT pmcid FROM pmids WHERE pmid = ?", (pmid,)).fetchone()
            if row is not None:
                out[pmid] = str(row[0])
        return out

    def put_pmcids(self, mapping: dict[str, str]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO pmids VALUES (?, ?)", mapping.items())

    def get(self, pmcid: str) -> Found | None:
        row = self.db.execute("SELECT payload FROM abstracts WHERE pmcid = ?",
                              (pmcid,)).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return Found(data["title"], data["abstract"], "oai") if data else UNRESOLVED

    def put(self, pmcid: str, found: Found | None) -> None:
        payload = json.dumps({"title": found.title, "abstract": found.abstract} if found else {})
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO abstracts VALUES (?, ?)", (pmcid, payload))

    def close(self) -> None:
        self.db.close()


class Resolver:
    """Looks cited papers up; counts where each answer came from."""

    def __init__(self, known: list[Candidate], oai: OaiClient | None, cache: AbstractCache,
                 convert: Callable[[list[str]], dict[str, str]] | None = None) -> None:
        self.by_pmcid: dict[str, Candidate] = {}
        self.by_doi: dict[str, Candidate] = {}
        for cand in known:
            if not cand.abstracts.get(cand.language):
                continue
            if cand.source == "pubmed":
                self.by_pmcid.setdefault(cand.source_id, cand)
            if cand.doi:
                self.by_doi.setdefault(cand.doi.lower(), cand)
        self.oai = oai
        self.cache = cache
        self.convert = convert
        self.pmcid_of: dict[str, str] = {}
        self.transient = 0

    def prepare(self, refs: list[Reference]) -> None:
        """Learn the PMCIDs of the references that only give a PMID, in one batch."""
        pmids = sorted({r.pmid for r in refs if r.pmid and not r.pmcid} - set(self.pmcid_of))
        self.pmcid_of.update(self.cache.pmcids(pmids))
        missing = [p for p in pmids if p not in self.pmcid_of]
        if not missing or self.convert is None:
            return
        try:
            found = self.convert(missing)
        except ConfigError:
            raise
        except LoralayError as exc:
            self.transient += 1
            log.warning("ID converter failed (%s); %d PMIDs left unresolved", exc, len(missing))
            return
        self.cache.put_pmcids(found)
        self.pmcid_of.update(found)

    def pmcid(self, ref: Reference) -> str:
        """The reference's PMCID, as listed or from the ID converter ("" if none)."""
        return ref.pmcid or self.pmcid_of.get(ref.pmid, "")

    def find(self, ref: Reference) -> Found:
        pmcid = self.pmcid(ref)
        cand = self.by_pmcid.get(pmcid) if pmcid else None
        if cand is None and ref.doi:
            cand = self.by_doi.get(ref.doi)
        if cand is not None:
            return Found(cand.title, cand.abstracts[cand.language], "state", pmcid)
        if pmcid:
            found = self._from_pmc(pmcid)
            return Found(found.title, found.abstract, found.via, pmcid)
        return UNRESOLVED

    def _from_pmc(self, pmcid: str) -> Found:
        cached = self.cache.get(pmcid)
        if cached is not None:
            return cached
        if self.oai is None:
            return UNRESOLVED
        try:
            record = self.oai.get_record(OAI_ID + pmcid.removeprefix("PMC"), "pmc_fm")
        except ConfigError:
            raise
        except LoralayError as exc:
            self.transient += 1
            log.warning("cited %s: GetRecord failed (%s); left unresolved", pmcid, exc)
            return UNRESOLVED
        front = (read_front(record.metadata, "en")
                 if record is not None and record.metadata is not None else None)
        abstract = front.abstracts.get(front.language, "") if front else ""
        found = Found(front.title, abstract, "oai") if front and abstract else None
        self.cache.put(pmcid, found)
        return found or UNRESOLVED
