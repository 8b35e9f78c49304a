"""Abstracts of cited papers: from documents already in the state database, then from PMC's
OAI-PMH (`GetRecord`, `pmc_fm`) for a PMCID. Answers are cached in a small SQLite file, the
"does not exist" answers too; a transient failure is left unresolved and asked again next
run. Nothing is guessed: a reference without a usable identifier stays unresolved.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from loralay_build.errors import ConfigError, LoralayError
from loralay_build.records import Candidate
from loralay_build.sources.jats import read_front
from loralay_build.sources.oaipmh import OaiClient
from loralay_build.views.body import Reference

log = logging.getLogger(__name__)

OAI_ID = "oai:pubmedcentral.nih.gov:"


@dataclass(frozen=True)
class Found:
    title: str
    abstract: str
    via: str  # "state", "oai", "" when unresolved


UNRESOLVED = Found("", "", "")


class AbstractCache:
    """PMCID -> (title, abstract) or a definitive miss, kept across runs."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS abstracts (pmcid TEXT PRIMARY KEY, "
                        "payload TEXT)")

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

    def __init__(self, known: list[Candidate], oai: OaiClient | None,
                 cache: AbstractCache) -> None:
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
        self.transient = 0

    def find(self, ref: Reference) -> Found:
        cand = self.by_pmcid.get(ref.pmcid) if ref.pmcid else None
        if cand is None and ref.doi:
            cand = self.by_doi.get(ref.doi)
        if cand is not None:
            return Found(cand.title, cand.abstracts[cand.language], "state")
        if ref.pmcid:
            return self._from_pmc(ref.pmcid)
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
