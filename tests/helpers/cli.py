"""Running the real `build-corpus` in a fresh interpreter, and the config files it reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from huggingface_hub import DatasetCard

from loralay_build.licences import HUB_LICENCES


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


def run_cli(*args: str, env: dict[str, str] | None = None,
            timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run `build-corpus` in a fresh interpreter, as a user (or cron) would."""
    return subprocess.run(
        [sys.executable, "-m", "loralay_build.cli", *args],
        capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def build_local(manifest: Path, out: Path, *extra: str,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("local", "--input", str(manifest), "--out", str(out), "--workers", "1",
                   "--no-filter", *extra, env=env)


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
