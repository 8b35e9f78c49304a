"""Shared pieces of the reliability suite: the figure side-channel and common fixtures.

Each test reports the figure the test plan asks for through `figure(...)`. When the variable
LORALAY_RELIABILITY_FIGURES names a file, every figure is appended to it as one JSON line,
which is how `scripts/reliability_report.py` builds its table; otherwise figures only go to
the test output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.reliability import Figure

FIGURES_ENV = "LORALAY_RELIABILITY_FIGURES"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under this folder belongs to the `reliability` marker."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.reliability)


@pytest.fixture
def figure(capsys: pytest.CaptureFixture[str]) -> Figure:
    """Record one (test id, figure, target, measured) line."""

    def record(test: str, name: str, target: str, measured: str) -> None:
        line = {"test": test, "figure": name, "target": target, "measured": measured}
        with capsys.disabled():
            print(f"\n[{test}] {name}: {measured} (target {target})")
        path = os.environ.get(FIGURES_ENV)
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")

    return record
