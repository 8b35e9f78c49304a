"""Shared fixtures: a HAL sandbox on loopback and a helper to run the real CLI against it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import DatasetCard

from loralay_build.licences import HUB_LICENCES
from loralay_build.sandbox import Sandbox


def write_toml(path: Path, table: dict[str, Any]) -> Path:
    """Write a two-level config table as TOML (enough for the overlays tests need)."""
    lines = []
    for section, values in table.items():
        lines.append(f"[{section}]")
        for key, value in values.items():
            if isinstance(value, dict):
                inner = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items())
                lines.append(f"{key} = {{ {inner} }}")
            else:
                lines.append(f"{key} = {json.dumps(value)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow (make test-all)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def hub_licence_faults(card: Path) -> list[str]:
    """What the Hub would refuse in a dataset card's licence metadata, read by
    `huggingface_hub`'s own card parser: an id outside the Hub's list, or `other` without
    the `license_name` and `license_link` the Hub's card spec asks for."""
    data = DatasetCard.load(card).data
    ids = [data.license] if isinstance(data.license, str) else list(data.license or [])
    faults = [f"{card}: license {i!r} is not in the Hub's list" for i in ids
              if i not in HUB_LICENCES]
    if "other" in ids and not (data.get("license_name") and data.get("license_link")):
        faults.append(f"{card}: license other without license_name and license_link")
    return faults


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


def run_cli(*args: str, env: dict[str, str] | None = None,
            timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run `build-corpus` in a fresh interpreter, as a user (or cron) would."""
    return subprocess.run(
        [sys.executable, "-m", "loralay_build.cli", *args],
        capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})},
    )
