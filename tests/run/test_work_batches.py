"""Processed documents are recorded in batches: work files durable first, then the state."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from loralay_build.corpus.writer import WorkStore
from loralay_build.run.context import BuildRequest
from loralay_build.run.pipeline import Pipeline
from loralay_build.sources import load_settings
from loralay_build.state import FETCHED, PROCESSED, State
from tests.helpers.local import make_corpus, write_manifest


class FullDisk(WorkStore):
    """A work store whose batch write fails after the files are written, before the sync."""

    def put_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        raise OSError(28, "No space left on device")


def _pipeline(tmp_path: Path) -> tuple[Pipeline, State]:
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "docs.jsonl", make_corpus(docs, 3))
    overrides = {"source": {"input": str(manifest)}, "run": {"executor": "serial"}}
    settings = load_settings("local", overrides=overrides)
    state = State(tmp_path / "out")
    return Pipeline(BuildRequest("local", "local", settings), state), state


def test_state_is_recorded_only_after_the_batch_is_written(tmp_path: Path) -> None:
    pipeline, state = _pipeline(tmp_path)
    pipeline.discover()
    pipeline.fetch()
    real = pipeline.ctx.work
    pipeline.ctx.work = FullDisk(real.root, real.settings, real.schema)
    with pytest.raises(OSError):
        pipeline.process()
    assert state.status_counts("local") == {FETCHED: 3}
    pipeline.ctx.work = real
    pipeline.process()
    rows = state.rows("local")
    assert [r.status for r in rows] == [PROCESSED] * 3
    assert all(real.path(r.work_key or "").is_file() for r in rows)
    state.close()
