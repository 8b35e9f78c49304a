from __future__ import annotations

from pathlib import Path

import pytest

from loralay_build.errors import LockHeld, Reason
from loralay_build.records import Candidate
from loralay_build.state import DISCOVERED, FETCHED, REJECTED, State


def cand(i: int, title: str = "t") -> Candidate:
    return Candidate(id=f"x:{i}", source="x", source_id=str(i), dataset="x", title=title,
                     language="fr", abstracts={"fr": "a"})


def test_upsert_counts_new_changed_and_leaves_unchanged(tmp_path: Path) -> None:
    state = State(tmp_path)
    assert state.upsert([cand(1), cand(2)]) == (2, 0, 0)
    state.set_status("x", "x:1", FETCHED, blob_sha="ab", split="test")
    assert state.upsert([cand(1), cand(2)]) == (0, 0, 0)
    assert state.rows("x", [FETCHED])[0].blob_sha == "ab"
    assert state.upsert([cand(1, title="new")]) == (0, 1, 0)
    row = state.rows("x", [DISCOVERED])[0]
    assert row.candidate.title == "new" and row.blob_sha is None
    assert row.split == "test"  # a document keeps its split across versions


def test_rejects_are_counted_by_reason(tmp_path: Path) -> None:
    state = State(tmp_path)
    state.upsert([cand(1), cand(2), cand(3)])
    state.reject("x", "x:1", Reason.NOT_PDF, "html")
    state.reject("x", "x:2", Reason.NOT_PDF, "html")
    assert state.reason_counts("x") == {"not_pdf": 2}
    assert state.status_counts("x") == {DISCOVERED: 1, REJECTED: 2}


def test_state_survives_reopening(tmp_path: Path) -> None:
    State(tmp_path).upsert([cand(1)])
    assert [r.candidate.id for r in State(tmp_path).rows("x")] == ["x:1"]


def test_lock_is_exclusive_per_dataset(tmp_path: Path) -> None:
    first, second = State(tmp_path), State(tmp_path)
    with first.lock("hal"):
        with pytest.raises(LockHeld), second.lock("hal"):
            pass
        with second.lock("arxiv"):
            pass
    with second.lock("hal"):
        pass
