"""T6/T7: property tests of the worker protocol and of every name derived from input.

The pool must return the right outcome whatever a task does (return, raise, hang, kill its
worker) and keep working; no dataset name, document id or content may produce a path
outside the output root.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loralay_build.blobs import BlobStore
from loralay_build.config import OutputSettings
from loralay_build.corpus.schema import FULL_SCHEMA
from loralay_build.corpus.writer import WorkStore
from loralay_build.errors import ConfigError
from loralay_build.records import Candidate
from loralay_build.run.isolation import IsolatedPool, Limits, WorkerLost
from loralay_build.run.pipeline import check_dataset_name
from loralay_build.run.process_stage import work_key_of
from loralay_build.state import Row, candidate_hash
from tests.helpers import buildrun
from tests.helpers.reliability import Figure
from tests.helpers.waits import DEADLINE, parent_of, wait_for
from tests.helpers.workfuncs import behave

TIMEOUT = 1.0
KINDS = st.sampled_from(["return", "return", "return", "raise", "hang", "exit"])
TASKS = st.lists(st.tuples(KINDS, st.integers(0, 10_000)), min_size=1, max_size=5)
HOSTILE_TEXT = st.one_of(
    st.text(max_size=300),
    st.sampled_from(["..", ".", "../../x", "/etc", "a/../../b", "x\x00y", ".loralay", "",
                     "a" * 300, "é" * 200, "hal/..", "C:\\x", "math/0501001"]),
)


def test_pool_outcomes(figure: Figure) -> None:
    """T6: tasks that return, raise, hang or exit all come back with the right outcome."""
    limits = Limits(timeout=TIMEOUT, memory_bytes=512 * 2**20, recycle_after=7)
    examples = 0
    with IsolatedPool(behave, workers=2, limits=limits) as pool:

        @settings(max_examples=25, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow])
        @given(TASKS)
        def check(tasks: list[tuple[str, int]]) -> None:
            nonlocal examples
            examples += 1
            numbered = [(kind, value * 10 + i) for i, (kind, value) in enumerate(tasks)]
            results = dict(pool.imap_unordered(numbered))
            assert set(results) == set(numbered)
            for (kind, value), result in results.items():
                if kind == "return":
                    assert result == value * 2
                elif kind == "raise":
                    assert isinstance(result, str) and "ValueError" in result
                else:
                    assert isinstance(result, WorkerLost)
                    assert result.timed_out is (kind == "hang")
            assert dict(pool.imap_unordered([("return", 21)])) == {("return", 21): 42}

        check()
        restarts = pool.restarts
    figure("T6", "worker protocol: examples passed (return/raise/hang/exit)", ">= 25, 0 failures",
           f"{examples} examples, 0 failures, {restarts} worker restarts")


def test_workers_die_with_a_killed_parent(figure: Figure) -> None:
    """A worker stuck in an endless task exits when its parent is killed with -9."""
    script = (
        "from loralay_build.run.isolation import IsolatedPool, Limits\n"
        "from tests.helpers.workfuncs import behave\n"
        "pool = IsolatedPool(behave, 1, Limits(120.0, 2**30, 10))\n"
        "list(pool.imap_unordered([('hang', 1)]))\n"
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=root)
    try:
        # the worker the fork server forked (a grandchild) is inside the endless task
        wait_for(lambda: any(parent_of(pid) != proc.pid for pid in buildrun.children(proc.pid)),
                 "worker forked by the pool")
        workers = buildrun.children(proc.pid)  # the fork server and the worker it forked
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(DEADLINE)
        left = buildrun.wait_gone(workers, DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    figure("T6", "workers left running after kill -9 of their parent", "0", str(len(left)))
    assert not left


@settings(max_examples=3000, deadline=None)
@given(HOSTILE_TEXT)
def test_dataset_name_stays_under_root(name: str) -> None:
    """T7: a dataset name is refused or names one folder directly under the output root."""
    root = Path("/srv/out")
    try:
        checked = check_dataset_name(name)
    except ConfigError:
        return
    folder = root / checked
    assert folder.parent == root and os.path.normpath(folder) == str(folder)
    assert not checked.startswith(".") and len(checked.encode()) <= 255


@pytest.mark.parametrize("name", ["../../x", "..", ".loralay", "a/b", "a" * 101, ""])
def test_cli_refuses_unsafe_names(name: str, tmp_path: Path) -> None:
    from tests.helpers.cli import run_cli_subprocess

    result = run_cli_subprocess("hal", "--out", str(tmp_path), "--name", name, timeout=60)
    assert result.returncode == 2
    assert "invalid dataset name" in result.stderr
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=1000, deadline=None)
@given(HOSTILE_TEXT, st.binary(max_size=64))
def test_ids_and_contents_map_to_safe_names(doc_id: str, content: bytes) -> None:
    """T7: blob and work-file names come from hashes, never from the id or the bytes: the
    names are made by the store and the pipeline themselves."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".loralay"
        blobs = BlobStore(root / "blobs")
        with blobs.staging() as handle:
            handle.write(content)
            sha = blobs.commit(handle)
        work = WorkStore(root / "work", OutputSettings(), FULL_SCHEMA)
        candidate = Candidate(id=doc_id, source="hal", source_id=doc_id, dataset="hal")
        row = Row(candidate, "fetched", None, None, 0, sha, None, {}, None)
        key = work_key_of(sha, candidate_hash(row.candidate), "p")
        for path, base in ((blobs.path(sha), blobs.root), (work.path(key), work.root)):
            assert path.parent.parent == base
            assert len(path.name.encode()) <= 255
            assert os.path.normpath(path) == str(path)
        assert [p for p in blobs.root.rglob("*") if p.is_file()] == [blobs.path(sha)]
        with pytest.raises(ValueError):
            blobs.path(doc_id if len(doc_id) != 64 else doc_id + "/")
