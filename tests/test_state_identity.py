"""The state compares candidates by identity: a new location is stored without starting the
document over, and a state written before identities were recorded keeps its work."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from loralay_build.errors import Reason
from loralay_build.identity import Identity
from loralay_build.layout import OutputLayout
from loralay_build.records import Candidate
from loralay_build.state import (
    DISCOVERED,
    FETCHED,
    PUBLISHED,
    REJECTED,
    State,
    candidate_json,
)

# The candidates table as versions before identities wrote it.
EARLIER_SCHEMA = """
CREATE TABLE candidates (
    id TEXT NOT NULL, dataset TEXT NOT NULL, source TEXT NOT NULL, payload TEXT NOT NULL,
    content_hash TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, detail TEXT,
    attempts INTEGER NOT NULL DEFAULT 0, blob_sha TEXT, work_key TEXT, stats TEXT,
    split TEXT, updated REAL NOT NULL, PRIMARY KEY (dataset, id)
);
"""


def cand(i: int, url: str = "https://a.example/", title: str = "t",
         **extra: object) -> Candidate:
    return Candidate(id=f"x:{i}", source="x", source_id=str(i), dataset="x", title=title,
                     language="fr", abstracts={"fr": "a"}, file_url=f"{url}{i}.pdf",
                     landing_url=f"{url}{i}", extra=dict(extra))


def _content_hash(state: State, i: int) -> str:
    return str(state.db.execute("SELECT content_hash FROM candidates WHERE id = ?",
                                (f"x:{i}",)).fetchone()[0])


def test_a_new_url_is_stored_and_the_document_keeps_its_work(tmp_path: Path) -> None:
    state = State(tmp_path)
    assert state.upsert([cand(1), cand(2), cand(3), cand(4)]) == (4, 0, 0)
    state.set_status("x", "x:1", PUBLISHED, blob_sha="ab", work_key="k1")
    state.set_status("x", "x:2", FETCHED, blob_sha="cd")
    state.reject("x", "x:3", Reason.UNAVAILABLE, "HTTP 404")  # never downloaded
    state.reject("x", "x:4", Reason.ABSTRACT_NOT_FOUND, "", blob_sha="ef", work_key="k4")
    hashes = {i: _content_hash(state, i) for i in range(1, 5)}
    mirror = [cand(i, url="https://mirror.example/") for i in range(1, 5)]
    assert state.upsert(mirror) == (0, 0, 4)
    rows = {r.candidate.id: r for r in state.rows("x")}
    assert {cid: r.candidate.file_url for cid, r in rows.items()} == {
        f"x:{i}": f"https://mirror.example/{i}.pdf" for i in range(1, 5)}
    assert (rows["x:1"].status, rows["x:1"].blob_sha, rows["x:1"].work_key) == (
        PUBLISHED, "ab", "k1")
    assert (rows["x:2"].status, rows["x:2"].blob_sha) == (FETCHED, "cd")
    assert (rows["x:3"].status, rows["x:3"].reason) == (DISCOVERED, None)  # tried there
    assert (rows["x:4"].status, rows["x:4"].work_key) == (REJECTED, "k4")  # its own bytes
    assert {i: _content_hash(state, i) for i in range(1, 5)} == hashes
    assert state.upsert(mirror) == (0, 0, 0)
    # A change of what the row is made of starts the document over.
    assert state.upsert([cand(1, url="https://mirror.example/", title="new")]) == (0, 1, 0)
    row = state.row("x", "x:1")
    assert row is not None and row.status == DISCOVERED
    assert _content_hash(state, 1) != hashes[1]


def test_a_source_names_more_of_its_location(tmp_path: Path) -> None:
    identity = Identity(("file_url", "landing_url", "extra.host"))
    state = State(tmp_path)
    assert state.upsert([cand(1, host="bucket", version=2)], identity) == (1, 0, 0)
    assert state.upsert([cand(1, host="export", version=2)], identity) == (0, 0, 1)
    assert state.upsert([cand(1, host="export", version=3)], identity) == (0, 1, 0)
    assert state.upsert([cand(1, host="bucket", version=3)]) == (0, 1, 0)  # the default rule


class _FileChanged(Identity):
    def same_file(self, old: Candidate, new: Candidate, blob_sha: str) -> bool:
        return False


def test_a_moved_file_whose_bytes_differ_starts_over(tmp_path: Path) -> None:
    state = State(tmp_path)
    state.upsert([cand(1), cand(2)])
    state.set_status("x", "x:1", PUBLISHED, blob_sha="ab", work_key="k1")
    moved = [cand(i, url="file:///elsewhere/") for i in (1, 2)]
    assert state.upsert(moved, _FileChanged()) == (0, 1, 1)  # x:2 has no file to compare
    row = state.row("x", "x:1")
    assert row is not None and (row.status, row.blob_sha, row.work_key) == (
        DISCOVERED, None, None)


def test_a_state_of_an_earlier_version_keeps_its_work(tmp_path: Path) -> None:
    """Its content hashes covered the whole candidate, path and URLs included: the work keys
    made from them stay, and the candidates are compared by identity from then on."""
    db = OutputLayout(tmp_path).state_db
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as conn:
        conn.executescript(EARLIER_SCHEMA)
        for i, status in ((1, PUBLISHED), (2, PUBLISHED), (3, PUBLISHED)):
            payload = candidate_json(cand(i))
            earlier = hashlib.sha256(payload.encode()).hexdigest()[:20]
            conn.execute("INSERT INTO candidates (id, dataset, source, payload, content_hash,"
                         " status, blob_sha, work_key, updated)"
                         " VALUES (?, 'x', 'x', ?, ?, ?, ?, ?, 0)",
                         (f"x:{i}", payload, earlier, status, f"b{i}", f"k{i}"))
    state = State(tmp_path)
    hashes = {i: _content_hash(state, i) for i in (1, 2, 3)}
    found = state.upsert([cand(1), cand(2, url="file:///moved/"),
                          cand(3, url="file:///moved/", title="new")])
    assert found == (0, 1, 1)
    rows = {r.candidate.id: r for r in state.rows("x")}
    assert [(rows[f"x:{i}"].status, rows[f"x:{i}"].work_key) for i in (1, 2)] == [
        (PUBLISHED, "k1"), (PUBLISHED, "k2")]
    assert rows["x:2"].candidate.file_url == "file:///moved/2.pdf"
    assert [_content_hash(state, i) for i in (1, 2)] == [hashes[1], hashes[2]]
    assert rows["x:3"].status == DISCOVERED
    # The next run compares by the identities the first one recorded.
    assert state.upsert([cand(1, url="file:///moved/"), cand(2, url="file:///moved/")]) == (
        0, 0, 1)
