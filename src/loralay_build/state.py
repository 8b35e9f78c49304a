"""SQLite state of an output root: candidates, outcomes, runs, high-water marks, run locks.

The database is the single source of truth for resuming: every state change is one
transaction, committed after the file it refers to is durable.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from loralay_build.errors import ConfigError, LockHeld, Reason
from loralay_build.identity import DEFAULT, Identity
from loralay_build.layout import OutputLayout
from loralay_build.records import Candidate
from loralay_build.textfile import escaped

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS candidates (
    id TEXT NOT NULL,
    dataset TEXT NOT NULL,
    source TEXT NOT NULL,
    payload TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    identity TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    detail TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    blob_sha TEXT,
    work_key TEXT,
    stats TEXT,
    split TEXT,
    updated REAL NOT NULL,
    PRIMARY KEY (dataset, id)
);
CREATE INDEX IF NOT EXISTS candidates_dataset_status ON candidates(dataset, status);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    command TEXT NOT NULL,
    started REAL NOT NULL,
    finished REAL,
    exit_code INTEGER,
    counts TEXT,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS marks (
    dataset TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (dataset, key)
);
CREATE TABLE IF NOT EXISTS datasets (
    dataset TEXT PRIMARY KEY,
    source TEXT NOT NULL
);
"""

# Candidate statuses, in pipeline order.
DISCOVERED = "discovered"  # metadata known, nothing downloaded
RETRY = "retry"  # a transient download failure; tried again in a later run
FETCHED = "fetched"  # file in the blob store
PROCESSED = "processed"  # example written to the work store
REJECTED = "rejected"  # dropped, with a reason
PUBLISHED = "published"  # in the last published shards
FILTERED = "filtered"  # processed, but dropped by a corpus-level filter at the last publish
# Mark holding a dataset's last build configuration (JSON): `remove` republishes with it and
# `audit` reads each dataset's policy from it.
SETTINGS_MARK = "settings"
REMOVED = "removed"  # taken down (`build-corpus remove`): never published or revived again
GONE = "gone"  # no longer in an input that is listed whole (a `local` manifest); comes back

STATUSES = (DISCOVERED, RETRY, FETCHED, PROCESSED, REJECTED, PUBLISHED, FILTERED)


def candidate_json(candidate: Candidate) -> str:
    """The candidate as the state stores it: sorted JSON of its fields (plain JSON values, so
    no deep copy as `dataclasses.asdict` makes, which costs more than the encoding)."""
    fields = {f.name: getattr(candidate, f.name) for f in dataclasses.fields(candidate)}
    return json.dumps(fields, sort_keys=True)


def candidate_hash(candidate: Candidate, identity: Identity = DEFAULT) -> str:
    """Hash of the metadata that changes what a candidate yields (not its split, nor where
    its file is): the `content_hash` a new or changed candidate is stored with."""
    return identity.of(candidate)


class Upserted(NamedTuple):
    """What a discovery batch found: new candidates, changed ones (processed again), and
    moved ones (the same document at a new location, stored for the next fetch)."""

    new: int
    changed: int
    moved: int


@dataclass(frozen=True)
class Row:
    candidate: Candidate
    status: str
    reason: str | None
    detail: str | None
    attempts: int
    blob_sha: str | None
    work_key: str | None
    stats: dict[str, Any]
    split: str | None


@dataclass(frozen=True)
class WorkRef:
    """A candidate as the processing stage first looks at it (no metadata decoded)."""

    id: str
    status: str
    blob_sha: str | None
    work_key: str | None
    content_hash: str


def _row(record: sqlite3.Row) -> Row:
    return Row(
        candidate=Candidate(**json.loads(record["payload"])),
        status=record["status"],
        reason=record["reason"],
        detail=record["detail"],
        attempts=record["attempts"],
        blob_sha=record["blob_sha"],
        work_key=record["work_key"],
        stats=json.loads(record["stats"]) if record["stats"] else {},
        split=record["split"],
    )


class RunLock:
    """An flock on a file per dataset: the kernel drops it when the process dies, even on -9."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(fd)
            raise LockHeld(f"another run holds {self.path}") from exc
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _retry_locked(step: Callable[[], object], seconds: float = 60.0) -> None:
    """Run a step of opening the database, waiting out another process opening it too.

    Switching a new database to WAL, or creating its tables, can answer "database is locked"
    at once, without the connection's busy timeout, when two runs start at the same moment.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class State:
    """Access to the state database of one output root (`layout` names its other paths)."""

    def __init__(self, root: Path) -> None:
        self.layout = OutputLayout(root)
        self.layout.state_dir.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.layout.state_db, timeout=60, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        _retry_locked(lambda: self.db.execute("PRAGMA journal_mode=WAL"))
        self.db.execute("PRAGMA synchronous=NORMAL")
        _retry_locked(lambda: self.db.executescript(SCHEMA))
        # A state made before runs recorded their one-line reason, or before candidates
        # recorded their identity, gets the column.
        _retry_locked(lambda: self._add_column("runs", "reason"))
        _retry_locked(lambda: self._add_column("candidates", "identity"))

    def _add_column(self, table: str, column: str) -> None:
        columns = {r["name"] for r in self.db.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            try:
                self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT")
            except sqlite3.OperationalError as exc:
                if "duplicate column" not in str(exc):  # else another run added it first
                    raise

    def claim(self, dataset: str, source: str) -> None:
        """Record that `dataset` is built from `source`; refuse a dataset of another source.

        Two sources in one dataset folder would merge their shards and re-process each
        other's documents under the wrong settings.
        """
        check_owner(self.layout.root, dataset, source, self.source_of(dataset))
        self.db.execute("INSERT OR IGNORE INTO datasets (dataset, source) VALUES (?, ?)",
                        (dataset, source))

    def source_of(self, dataset: str) -> str | None:
        """The source a dataset is built from (None for an unknown dataset)."""
        row = self.db.execute("SELECT source FROM datasets WHERE dataset = ?",
                              (dataset,)).fetchone()
        return None if row is None else str(row["source"])

    def close(self) -> None:
        self.db.close()

    def lock(self, dataset: str) -> RunLock:
        return RunLock(self.layout.lock(dataset))

    def lock_held(self, dataset: str) -> bool:
        """Whether a live process holds the dataset's lock (a run without an exit code and
        without its lock was killed); the lock file is only read."""
        try:
            fd = os.open(self.layout.lock(dataset), os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    # -- candidates ---------------------------------------------------------------------------

    def upsert(self, candidates: Iterable[Candidate], identity: Identity = DEFAULT) -> Upserted:
        """Record discovered candidates in one transaction.

        Candidates are compared by their identity (`identity`: what the row is made of, not
        where the file is). A changed one starts over (its split is kept). A moved one (a
        new path or URL, the same identity) keeps its status and work: its new location is
        stored for the next fetch, and a download reject is tried there again; it starts
        over only when the new location holds another file (`Identity.same_file`). A
        candidate stored before identities were recorded is judged by the identity of its
        stored metadata, and keeps the `content_hash` its work was made with.
        """
        new = changed = moved = 0
        now = time.time()
        with self.transaction():
            for cand in candidates:
                payload = candidate_json(cand)
                digest = identity.of(cand)
                old = self.db.execute(
                    "SELECT payload, identity, status, work_key, blob_sha FROM candidates"
                    " WHERE dataset = ? AND id = ?",
                    (cand.dataset, cand.id),
                ).fetchone()
                if old is not None and old["status"] == REMOVED:
                    continue  # a takedown holds whatever the source lists again
                if old is not None and old["status"] == GONE:
                    # Listed again: back where it was, or started over if it changed.
                    self.db.execute(
                        "UPDATE candidates SET status = ?, updated = ?"
                        " WHERE dataset = ? AND id = ?",
                        (PROCESSED if old["work_key"] else DISCOVERED, now, cand.dataset,
                         cand.id),
                    )
                if old is None:
                    new += 1
                    self.db.execute(
                        "INSERT INTO candidates (id, dataset, source, payload, content_hash,"
                        " identity, status, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (cand.id, cand.dataset, cand.source, payload, digest, digest,
                         DISCOVERED, now),
                    )
                    continue
                key = (cand.dataset, cand.id)
                if old["payload"] == payload:
                    if old["identity"] is None:  # a state of an earlier version
                        self.db.execute("UPDATE candidates SET identity = ?"
                                        " WHERE dataset = ? AND id = ?", (digest, *key))
                    continue
                before = Candidate(**json.loads(old["payload"]))
                blob = old["blob_sha"]
                if (old["identity"] or identity.of(before)) != digest or (
                        blob and not identity.same_file(before, cand, blob)):
                    changed += 1
                    self.db.execute(
                        "UPDATE candidates SET payload = ?, content_hash = ?, identity = ?,"
                        " status = ?, reason = NULL, detail = NULL, attempts = 0,"
                        " blob_sha = NULL, work_key = NULL, updated = ?"
                        " WHERE dataset = ? AND id = ?",
                        (payload, digest, digest, DISCOVERED, now, *key),
                    )
                    continue
                moved += 1
                self.db.execute("UPDATE candidates SET payload = ?, identity = ?, updated = ?"
                                " WHERE dataset = ? AND id = ?", (payload, digest, now, *key))
                if not blob and old["status"] == REJECTED:  # not fetched where it was
                    self.db.execute(
                        "UPDATE candidates SET status = ?, reason = NULL, detail = NULL,"
                        " attempts = 0 WHERE dataset = ? AND id = ?", (DISCOVERED, *key))
        return Upserted(new, changed, moved)

    def rows(self, dataset: str, statuses: Iterable[str] | None = None) -> list[Row]:
        query = "SELECT * FROM candidates WHERE dataset = ?"
        args: list[Any] = [dataset]
        if statuses is not None:
            wanted = list(statuses)
            query += f" AND status IN ({','.join('?' * len(wanted))})"
            args.extend(wanted)
        return [_row(r) for r in self.db.execute(query + " ORDER BY id", args)]

    def iter_rows(self, dataset: str, statuses: Iterable[str], page: int = 500) -> Iterator[Row]:
        """The rows of `rows()`, read `page` at a time, so that a stage holds one page of
        candidates rather than the whole dataset. Rows are taken in id order after the last
        one read, so a stage may change the statuses of rows it has seen while iterating."""
        for record in self._pages(dataset, statuses, "*", page):
            yield _row(record)

    def iter_work(self, dataset: str, statuses: Iterable[str],
                  page: int = 2000) -> Iterator[WorkRef]:
        """What deciding whether a candidate needs processing reads, without decoding its
        metadata: `content_hash` is the identity its work key is made from."""
        columns = "id, status, blob_sha, work_key, content_hash"
        for r in self._pages(dataset, statuses, columns, page):
            yield WorkRef(r["id"], r["status"], r["blob_sha"], r["work_key"], r["content_hash"])

    def iter_stats(self, dataset: str, statuses: Iterable[str],
                   page: int = 250) -> Iterator[tuple[str, dict[str, Any]]]:
        """(id, statistics) of each candidate, without its metadata: what the build record
        sums over the published documents, a small page at a time (statistics carry a
        MinHash signature of about 1.4 KB)."""
        for r in self._pages(dataset, statuses, "id, stats", page):
            yield r["id"], json.loads(r["stats"]) if r["stats"] else {}

    def shared_blobs(self, dataset: str, statuses: Iterable[str]) -> Iterator[tuple[str, str]]:
        """(blob, id) of the candidates whose file another one shares (no file counts as
        one), each blob's candidates together: those with a stored split first, then by
        id. Only these are held, not every candidate's blob."""
        wanted = list(statuses)
        marks = ",".join("?" * len(wanted))
        query = (f"SELECT COALESCE(blob_sha, '') AS blob, id FROM candidates "
                 f"WHERE dataset = ? AND status IN ({marks}) AND COALESCE(blob_sha, '') IN ("
                 f"SELECT COALESCE(blob_sha, '') FROM candidates WHERE dataset = ? "
                 f"AND status IN ({marks}) GROUP BY 1 HAVING COUNT(*) > 1) "
                 "ORDER BY blob, COALESCE(split, '') = '', id")
        for r in self.db.execute(query, (dataset, *wanted, dataset, *wanted)):
            yield r["blob"], r["id"]

    def _pages(self, dataset: str, statuses: Iterable[str], columns: str,
               page: int) -> Iterator[sqlite3.Row]:
        wanted = list(statuses)
        query = (f"SELECT {columns} FROM candidates WHERE dataset = ? AND id > ?"
                 f" AND status IN ({','.join('?' * len(wanted))}) ORDER BY id LIMIT ?")
        last = ""
        while True:
            records = self.db.execute(query, (dataset, last, *wanted, page)).fetchall()
            yield from records
            if len(records) < page:
                return
            last = records[-1]["id"]

    def row(self, dataset: str, cand_id: str) -> Row | None:
        record = self.db.execute("SELECT * FROM candidates WHERE dataset = ? AND id = ?",
                                 (dataset, cand_id)).fetchone()
        return None if record is None else _row(record)

    def count(self, dataset: str, statuses: Iterable[str]) -> int:
        wanted = list(statuses)
        return int(self.db.execute(
            "SELECT COUNT(*) FROM candidates WHERE dataset = ?"
            f" AND status IN ({','.join('?' * len(wanted))})", (dataset, *wanted)).fetchone()[0])

    def set_status(self, dataset: str, cand_id: str, status: str, **fields: Any) -> None:
        allowed = {"reason", "detail", "attempts", "blob_sha", "work_key", "stats", "split"}
        if set(fields) - allowed:
            raise ValueError(f"unknown fields {set(fields) - allowed}")
        if "stats" in fields:
            fields["stats"] = json.dumps(fields["stats"], sort_keys=True)
        if fields.get("detail"):  # it may quote a path that is not UTF-8
            fields["detail"] = escaped(fields["detail"])
        assignments = ", ".join(f"{k} = ?" for k in fields)
        sql = f"UPDATE candidates SET status = ?, updated = ?{', ' if fields else ''}{assignments}"
        self.db.execute(sql + " WHERE dataset = ? AND id = ?",
                        (status, time.time(), *fields.values(), dataset, cand_id))

    def reject(self, dataset: str, cand_id: str, reason: Reason, detail: str = "",
               **fields: Any) -> None:
        log.info("rejected %s: %s (%s)", cand_id, reason.value, detail[:200])
        self.set_status(dataset, cand_id, REJECTED, reason=reason.value, detail=detail[:500],
                        **fields)

    def requeue(self, dataset: str, reasons: Iterable[str] | None,
                ids: Iterable[str] | None = None) -> int:
        """Queue rejects again (downloaded files are reprocessed, the others downloaded
        again): those of the given reasons (None: any), of the given ids (None: any);
        returns how many."""
        where, args = "", []
        for column, values in (("reason", reasons), ("id", ids)):
            if values is not None:
                wanted = list(values)
                where += f" AND {column} IN ({','.join('?' * len(wanted))})"
                args += wanted
        cur = self.db.execute(
            "UPDATE candidates SET status = CASE WHEN blob_sha IS NULL THEN ? ELSE ? END,"
            " reason = NULL, detail = NULL, attempts = 0, work_key = NULL, updated = ?"
            f" WHERE dataset = ? AND status = ?{where}",
            (DISCOVERED, FETCHED, time.time(), dataset, REJECTED, *args),
        )
        return int(cur.rowcount)

    def remove(self, dataset: str, ids: Iterable[str], detail: str) -> None:
        """Take documents down for good: publishing skips them and no discovery revives them."""
        with self.transaction():
            for cand_id in ids:
                self.set_status(dataset, cand_id, REMOVED, reason="removed", detail=detail[:500])

    def mark_gone(self, dataset: str, listed: set[str]) -> int:
        """Processed documents that a whole listing of the input no longer holds leave the
        next publish (`GONE`); listed again, they come back. Returns how many went."""
        rows = self.db.execute(
            "SELECT id FROM candidates WHERE dataset = ? AND status IN (?, ?, ?)",
            (dataset, PROCESSED, PUBLISHED, FILTERED),
        ).fetchall()
        gone = [str(r["id"]) for r in rows if r["id"] not in listed]
        with self.transaction():
            for cand_id in gone:
                self.set_status(dataset, cand_id, GONE)
        return len(gone)

    @property
    def in_transaction(self) -> bool:
        return self.db.in_transaction

    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    # -- marks and runs -----------------------------------------------------------------------

    def get_mark(self, dataset: str, key: str) -> str | None:
        row = self.db.execute(
            "SELECT value FROM marks WHERE dataset = ? AND key = ?", (dataset, key)
        ).fetchone()
        return None if row is None else str(row["value"])

    def set_mark(self, dataset: str, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO marks (dataset, key, value) VALUES (?, ?, ?)"
            " ON CONFLICT (dataset, key) DO UPDATE SET value = excluded.value",
            (dataset, key, value),
        )

    def start_run(self, dataset: str, command: str) -> int:
        cur = self.db.execute(
            "INSERT INTO runs (dataset, command, started) VALUES (?, ?, ?)",
            (dataset, escaped(command), time.time()),
        )
        return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, exit_code: int, counts: dict[str, Any],
                   reason: str | None = None) -> None:
        """Record how a run ended; `reason`: the one line that says why it did not succeed."""
        self.db.execute(
            "UPDATE runs SET finished = ?, exit_code = ?, counts = ?, reason = ? WHERE id = ?",
            (time.time(), exit_code, json.dumps(counts, sort_keys=True),
             None if reason is None else escaped(reason), run_id),
        )

    def references(self) -> tuple[set[str], set[str]]:
        """Every blob and work key any candidate of any dataset names (for `gc`): its file,
        its work file, and its page images (`--page-images`)."""
        blobs: set[str] = set()
        work: set[str] = set()
        for blob, key, stats in self.db.execute(
                "SELECT blob_sha, work_key, stats FROM candidates"):
            if blob:
                blobs.add(blob)
            if key:
                work.add(key)
            if stats and '"images"' in stats:
                blobs.update(p["sha256"] for p in json.loads(stats).get("images", []))
        return blobs, work

    # -- reporting ----------------------------------------------------------------------------

    def datasets(self, with_runs: bool = False) -> list[str]:
        """Datasets with candidates; `with_runs`: also those whose runs stored none (a run
        that failed before finding a document)."""
        query = "SELECT DISTINCT dataset FROM candidates"
        if with_runs:
            query += " UNION SELECT dataset FROM runs"
        return [r[0] for r in self.db.execute(query + " ORDER BY 1")]

    def status_counts(self, dataset: str) -> dict[str, int]:
        return {
            r[0]: r[1]
            for r in self.db.execute(
                "SELECT status, COUNT(*) FROM candidates WHERE dataset = ? GROUP BY 1 ORDER BY 1",
                (dataset,),
            )
        }

    def reason_counts(self, dataset: str, status: str = REJECTED) -> dict[str, int]:
        """Candidates of one status (rejected, or filtered) per reason."""
        return {
            r[0]: r[1]
            for r in self.db.execute(
                "SELECT reason, COUNT(*) FROM candidates WHERE dataset = ?"
                " AND status = ? GROUP BY 1 ORDER BY 1",
                (dataset, status),
            )
        }

    def waiting_for_ocr(self, dataset: str) -> tuple[int, int]:
        """Documents rejected as `needs_ocr`, and their pages without a text layer."""
        documents, pages = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(json_extract(stats, '$.ocr_pages')), 0)"
            " FROM candidates WHERE dataset = ? AND status = ? AND reason = 'needs_ocr'",
            (dataset, REJECTED)).fetchone()
        return int(documents), int(pages)

    def without_text(self, dataset: str) -> tuple[int, int]:
        """Processed documents with pages left without text for `--ocr`, and those pages."""
        documents, pages = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(json_extract(stats, '$.pages_without_text')), 0)"
            " FROM candidates WHERE dataset = ? AND status IN (?, ?, ?)"
            " AND json_extract(stats, '$.pages_without_text') > 0",
            (dataset, PROCESSED, PUBLISHED, FILTERED)).fetchone()
        return int(documents), int(pages)

    def reread_without_text(self, dataset: str) -> int:
        """Send the processed documents with pages left without text back to processing
        (their work key forgotten, their status kept until their new outcome); how many."""
        cur = self.db.execute(
            "UPDATE candidates SET work_key = NULL, updated = ? WHERE dataset = ?"
            " AND status IN (?, ?, ?) AND json_extract(stats, '$.pages_without_text') > 0",
            (time.time(), dataset, PROCESSED, PUBLISHED, FILTERED))
        return int(cur.rowcount)

    def last_run(self, dataset: str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT * FROM runs WHERE dataset = ? ORDER BY id DESC LIMIT 1", (dataset,)
        ).fetchone()
        if row is None:
            return None
        out = dict(row)
        out["counts"] = json.loads(out["counts"]) if out["counts"] else {}
        return out


def check_owner(root: Path, dataset: str, source: str, owner: str | None) -> None:
    """Refuse to build `dataset` from `source` when the state says `owner` builds it."""
    if owner is not None and owner != source:
        raise ConfigError(f"dataset {dataset!r} in {root} is built from {owner!r}, "
                          f"not {source!r}: choose another --name or --out")


def recorded_source(layout: OutputLayout, dataset: str) -> str | None:
    """The source the state of `layout` records for `dataset`, read without writing a byte
    (no lock, no WAL file), so a build refused for it leaves the folder as it was. A state
    being written meanwhile may be read stale: `State.claim` checks again under the lock."""
    path = layout.state_db
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
        try:
            row = db.execute("SELECT source FROM datasets WHERE dataset = ?",
                             (dataset,)).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on error."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
