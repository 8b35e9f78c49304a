"""The stored band index of an output folder's published documents, and the pairs it finds.

Why: comparing each publish with every published document of every dataset re-reads and
re-buckets the whole corpus each time. The index keeps, in the folder's state database, each
published document's signature and normalised title, its band buckets, and every pair that the
buckets or the titles propose, with its similarity: a publish looks up its new documents only,
and `audit` reads the stored pairs.

It follows the statuses by itself: a trigger takes a document (its buckets and pairs) out in
the transaction that takes it out of `published` (a takedown, a document gone from its input, a
changed or reprocessed one, a later filter), and a publish adds its new documents in the
transaction that marks them published. A folder gets the index when it holds a second dataset
or is audited; a folder of one dataset never audited pays nothing.

Pairs are stored whatever their similarity (every pair two buckets propose), so any threshold
reads the same pairs a full computation would confirm.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from loralay_build.corpus.dedup import normalise, similarity
from loralay_build.state import PUBLISHED, Row, State
from loralay_build.text.minhash import (
    BANDS,
    NUM_PERM,
    ROWS,
    SHINGLE,
    Signature,
    candidate_pairs,
    from_bytes,
    from_text,
    jaccard,
    to_bytes,
)

TITLE_ABSTRACT_SIMILARITY = 0.9  # normalised abstracts of one work, titles being equal
MIN_TITLE_WORDS = 4  # shorter titles ("Introduction") say nothing about the work
MINHASH, TITLE = "minhash", "title"  # what proposed a pair
VERSION = f"1 {NUM_PERM}/{BANDS}x{ROWS}/{SHINGLE} {MIN_TITLE_WORDS} {TITLE_ABSTRACT_SIMILARITY}"
_CHUNK = 500  # values per `IN (...)` lookup

# (key, key, MINHASH or TITLE, similarity), keys in order
Pair = tuple[str, str, str, float]
T = TypeVar("T")

_TABLES = """
CREATE TABLE work_index (version TEXT NOT NULL);
CREATE TABLE work_docs (
    doc INTEGER PRIMARY KEY,
    dataset TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT,
    signature BLOB,
    UNIQUE (dataset, id)
);
CREATE INDEX work_docs_title ON work_docs(title) WHERE title IS NOT NULL;
CREATE TABLE work_bands (
    band INTEGER NOT NULL,
    bucket BLOB NOT NULL,
    doc INTEGER NOT NULL,
    PRIMARY KEY (band, bucket, doc)
) WITHOUT ROWID;
CREATE TABLE work_pairs (
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,
    kind TEXT NOT NULL,
    score REAL NOT NULL,
    PRIMARY KEY (a, b, kind)
) WITHOUT ROWID;
CREATE INDEX work_pairs_b ON work_pairs(b);
"""
_DOC = "(SELECT doc FROM work_docs WHERE dataset = old.dataset AND id = old.id)"
_SIG = "(SELECT signature FROM work_docs WHERE dataset = old.dataset AND id = old.id)"
_BYTES = 4 * ROWS  # of one band
_TRIGGER = f"""
CREATE TRIGGER work_unpublish AFTER UPDATE OF status ON candidates
WHEN old.status = '{PUBLISHED}' AND new.status != '{PUBLISHED}'
BEGIN
    DELETE FROM work_pairs WHERE a = {_DOC};
    DELETE FROM work_pairs WHERE b = {_DOC};
    {" ".join(f"DELETE FROM work_bands WHERE band = {b} AND doc = {_DOC} AND bucket = "
              f"substr({_SIG}, {b * _BYTES + 1}, {_BYTES});" for b in range(BANDS))}
    DELETE FROM work_docs WHERE dataset = old.dataset AND id = old.id;
END;
"""
_DROP = """
DROP TRIGGER IF EXISTS work_unpublish;
DROP TABLE IF EXISTS work_index;
DROP TABLE IF EXISTS work_docs;
DROP TABLE IF EXISTS work_bands;
DROP TABLE IF EXISTS work_pairs;
"""


@dataclass(frozen=True)
class Doc:
    """What finding a document's work needs of it."""

    dataset: str  # its name, or "<folder>:<name>" for a dataset of another output folder
    id: str
    title: str | None  # normalised, when it has MIN_TITLE_WORDS words or more
    signature: Signature | None
    abstract: str | None = None  # None: read from the state when a title matches

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.id}"


def title_key(title: str) -> str | None:
    """What equal titles are compared by (None for a title too short to name a work)."""
    words = normalise(title)
    return " ".join(words) if len(words) >= MIN_TITLE_WORDS else None


def doc_of(dataset: str, row: Row) -> Doc:
    """A processed document of `dataset`, from its state row (signature from its stats)."""
    cand = row.candidate
    sig = row.stats.get("minhash")
    return Doc(dataset, cand.id, title_key(cand.title),
               from_text(sig) if isinstance(sig, str) else None,
               cand.abstracts.get(cand.language, ""))


def published_docs(state: State, prefix: str = "") -> list[Doc]:
    """Every published document of every dataset of a state database, read from its rows."""
    return [doc_of(f"{prefix}{dataset}", row) for dataset in state.datasets()
            for row in state.iter_rows(dataset, [PUBLISHED])]


def _ordered(a: str, b: str, kind: str, score: float) -> Pair:
    return (a, b, kind, score) if a < b else (b, a, kind, score)


def pairs_among(docs: list[Doc], abstract: Callable[[Doc], str]) -> list[Pair]:
    """Every pair of `docs` that a band bucket or an equal title proposes (the computation
    from scratch): bucket pairs with their estimated Jaccard, title pairs whose abstracts
    reach TITLE_ABSTRACT_SIMILARITY."""
    pairs = [(a, b, MINHASH, score) for a, b, score in candidate_pairs(
        {d.key: d.signature for d in docs if d.signature is not None})]
    by_title: dict[str, list[Doc]] = defaultdict(list)
    for d in docs:
        if d.title is not None:
            by_title[d.title].append(d)
    for group in by_title.values():
        for i, first in enumerate(group):
            for second in group[i + 1:]:
                score = similarity(abstract(first), abstract(second))
                if score >= TITLE_ABSTRACT_SIMILARITY:
                    pairs.append(_ordered(first.key, second.key, TITLE, score))
    return sorted(pairs)


def _chunks(values: list[T]) -> Iterator[list[T]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start:start + _CHUNK]


def _bands(docs: list[Doc]) -> Iterator[tuple[int, dict[bytes, list[str]]]]:
    """The buckets of `docs` (bucket -> keys), one band at a time (text.minhash.bucket of
    each, from one conversion of each signature)."""
    raw = [(d.key, to_bytes(d.signature)) for d in docs if d.signature is not None]
    for band in range(BANDS):
        start = band * _BYTES
        buckets: dict[bytes, list[str]] = defaultdict(list)
        for key, data in raw:
            buckets[data[start:start + _BYTES]].append(key)
        yield band, buckets


class WorkIndex:
    """The band index in the state database of one output folder."""

    def __init__(self, state: State, prefix: str = "") -> None:
        self.state = state
        self.db = state.db
        self.prefix = prefix  # of the keys it returns: "<folder>:" for another output folder

    def present(self) -> bool:
        """Built, by this version of the index."""
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                               " AND name = 'work_index'").fetchone():
            return False
        row = self.db.execute("SELECT version FROM work_index").fetchone()
        return row is not None and row[0] == VERSION

    def build(self) -> None:
        """Index every published document from scratch, in one transaction."""
        with self.state.transaction():  # no publish commits between the read and the index
            docs = published_docs(self.state)
            for statement in (_DROP + _TABLES).split(";"):
                if statement.strip():
                    self.db.execute(statement)
            self.db.execute(_TRIGGER)
            self.add(docs)
            self.db.execute("INSERT INTO work_index (version) VALUES (?)", (VERSION,))

    def add(self, docs: list[Doc]) -> None:
        """Index newly published documents (inside the caller's transaction): their buckets,
        and their pairs with the indexed documents and with each other."""
        pairs = self.probe(docs)
        ids: dict[str, int] = {}
        for d in docs:
            cur = self.db.execute(
                "INSERT INTO work_docs (dataset, id, title, signature) VALUES (?, ?, ?, ?)",
                (d.dataset, d.id, d.title, None if d.signature is None else to_bytes(d.signature)))
            ids[d.key] = int(cur.lastrowid or 0)
        for band, buckets in _bands(docs):  # in key order: pages filled in turn, not at random
            self.db.executemany(
                "INSERT INTO work_bands (band, bucket, doc) VALUES (?, ?, ?)",
                sorted((band, value, ids[key]) for value, keys in buckets.items()
                       for key in keys))
        ids.update(self._ids({k for a, b, *_ in pairs for k in (a, b)} - set(ids)))
        self.db.executemany(
            "INSERT INTO work_pairs (a, b, kind, score) VALUES (?, ?, ?, ?)",
            ((min(ids[a], ids[b]), max(ids[a], ids[b]), kind, score)
             for a, b, kind, score in pairs if a in ids and b in ids))

    def probe(self, docs: list[Doc]) -> list[Pair]:
        """The pairs of `docs` with the indexed documents and with each other, looking up
        only their own buckets and titles."""
        pairs = pairs_among(docs, self.abstract)
        own = {d.key for d in docs}
        found: dict[str, set[int]] = defaultdict(set)  # key of a doc -> indexed candidates
        for band, wanted in _bands(docs):
            for chunk in _chunks(list(wanted)):
                for value, doc in self.db.execute(
                        "SELECT bucket, doc FROM work_bands WHERE band = ? AND bucket IN "
                        f"({','.join('?' * len(chunk))})", (band, *chunk)):
                    for key in wanted[value]:
                        found[key].add(doc)
        indexed = self._docs(sorted({doc for docs_ in found.values() for doc in docs_}))
        by_key = {d.key: d for d in docs}
        for key, candidates in found.items():
            sig = by_key[key].signature
            assert sig is not None
            for found_doc in candidates:
                other = indexed[found_doc]
                if other.key not in own and other.signature is not None:
                    pairs.append(_ordered(key, other.key, MINHASH,
                                          jaccard(sig, other.signature)))
        titles = sorted({d.title for d in docs if d.title is not None})
        matches: dict[str, list[Doc]] = defaultdict(list)
        for names in _chunks(titles):
            for row in self.db.execute(
                    "SELECT dataset, id, title FROM work_docs WHERE title IN "
                    f"({','.join('?' * len(names))})", names):
                matches[row[2]].append(Doc(f"{self.prefix}{row[0]}", row[1], row[2], None))
        for d in docs:
            for other in matches.get(d.title or "", []):
                if other.key not in own:
                    score = similarity(self.abstract(d), self.abstract(other))
                    if score >= TITLE_ABSTRACT_SIMILARITY:
                        pairs.append(_ordered(d.key, other.key, TITLE, score))
        return sorted(pairs)

    def pairs(self) -> list[Pair]:
        """Every stored pair."""
        return sorted(_ordered(f"{self.prefix}{da}/{ia}", f"{self.prefix}{db}/{ib}", kind, score)
                      for da, ia, db, ib, kind, score in self.db.execute(
                          "SELECT x.dataset, x.id, y.dataset, y.id, p.kind, p.score"
                          " FROM work_pairs p JOIN work_docs x ON x.doc = p.a"
                          " JOIN work_docs y ON y.doc = p.b"))

    def docs(self) -> Iterator[Doc]:
        """Every indexed document (abstracts read when a title matches)."""
        for dataset, cid, title, sig in self.db.execute(
                "SELECT dataset, id, title, signature FROM work_docs ORDER BY doc"):
            yield Doc(f"{self.prefix}{dataset}", cid, title,
                      None if sig is None else from_bytes(sig))

    def abstract(self, doc: Doc) -> str:
        """A document's abstract: its own, else the one its state row holds."""
        if doc.abstract is not None:
            return doc.abstract
        dataset = doc.dataset.removeprefix(self.prefix)
        found = self.db.execute("SELECT payload FROM candidates WHERE dataset = ? AND id = ?",
                                (dataset, doc.id)).fetchone()
        if found is None:
            return ""
        cand = json.loads(found[0])
        return str(cand.get("abstracts", {}).get(cand.get("language", ""), ""))

    def _docs(self, docs: Iterable[int]) -> dict[int, Doc]:
        out: dict[int, Doc] = {}
        for chunk in _chunks(list(docs)):
            for doc, dataset, cid, title, sig in self.db.execute(
                    "SELECT doc, dataset, id, title, signature FROM work_docs WHERE doc IN "
                    f"({','.join('?' * len(chunk))})", chunk):
                out[doc] = Doc(f"{self.prefix}{dataset}", cid, title,
                               None if sig is None else from_bytes(sig))
        return out

    def _ids(self, keys: set[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for key in keys:
            dataset, cid = key.removeprefix(self.prefix).split("/", 1)
            row = self.db.execute("SELECT doc FROM work_docs WHERE dataset = ? AND id = ?",
                                  (dataset, cid)).fetchone()
            if row is not None:
                out[key] = int(row[0])
        return out
