"""Shared fixtures: a HAL sandbox on loopback and a helper to run the real CLI against it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from loralay_build.sandbox import Sandbox
from loralay_build.sandbox.server import RETRY_AFTER_ENV
from tests.helpers.cli import hub_licence_faults, write_toml


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")


def pytest_configure(config: pytest.Config) -> None:
    # The fakes throttle with `Retry-After: 0`: the retry path is taken, the second not
    # waited for (tests/test_http.py and the reliability suite test the waiting itself).
    os.environ.setdefault(RETRY_AFTER_ENV, "0")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow (make test-all)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def every_card_the_hub_accepts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After the session: every dataset card any test wrote carries licence metadata the Hub
    accepts (the cards are README.md files with a `configs` YAML header)."""
    yield
    faults = []
    for card in tmp_path_factory.getbasetemp().rglob("README.md"):
        head = card.read_text(errors="replace")[:4096]
        if head.startswith("---\n") and "\nconfigs:" in head:
            faults += hub_licence_faults(card)
    assert not faults, "\n".join(faults[:20])


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(docs=12, seed=11) as box:
        yield box


@pytest.fixture
def hal_config(sandbox: Sandbox, tmp_path: Path) -> Path:
    """A --config file pointing the HAL source at the sandbox, with test-sized limits."""
    overlay = sandbox.hal.client_config()
    overlay["run"] = {"workers": 1, "timeout": 30.0}
    overlay["http"]["backoff_base"] = 0.1
    return write_toml(tmp_path / "hal-sandbox.toml", overlay)

