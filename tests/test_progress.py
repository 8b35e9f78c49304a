"""The terminal's bars count documents, also when a source hands them over in batches."""

from __future__ import annotations

import io
from typing import Any

import pytest
from tqdm import tqdm

from loralay_build import progress


def test_the_discover_bar_counts_documents_not_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    bars: list[tqdm[Any]] = []

    class Recorded(tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, file=io.StringIO(), **kwargs)
            bars.append(self)

    monkeypatch.setattr(progress, "interactive", lambda: True)
    monkeypatch.setattr(progress, "tqdm", Recorded)
    batches = [list(range(10)), list(range(3))]
    assert list(progress.batch_progress(iter(batches), "discover")) == batches
    (bar,) = bars
    assert (bar.n, bar.unit) == (13, "doc")
