"""Running the real `build-corpus`, in a fresh interpreter or in this one, and the config files
it reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from huggingface_hub import DatasetCard

from loralay_build.cli import main
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


def run_cli_subprocess(*args: str, env: dict[str, str] | None = None,
                       timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run `build-corpus` in a fresh interpreter, as a user (or cron) would: for what the
    process boundary decides (signals, exit status of a killed run, variables read at import
    such as LORALAY_NATIVE, the log a -v run prints)."""
    return subprocess.run(
        [sys.executable, "-m", "loralay_build.cli", *args],
        capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def run_cli_in_process(*args: str,
                       env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `build-corpus` in this interpreter through click's runner (no interpreter start-up,
    the package already imported), answered like `run_cli_subprocess`. `env` is set for the
    run's length; an exception the command lets escape fails the test."""
    result = CliRunner(env=env).invoke(main, list(args), catch_exceptions=False)
    return subprocess.CompletedProcess(["build-corpus", *args], result.exit_code,
                                       result.stdout, result.stderr)


def build_local(manifest: Path, out: Path, *extra: str,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`build-corpus local` on a manifest, one worker, filters off: in this interpreter, or in a
    fresh one when `env` is given (the workers of a run in this interpreter would not see
    variables such as PATH change)."""
    argv = ("local", "--input", str(manifest), "--out", str(out), "--workers", "1",
            "--no-filter", *extra)
    return run_cli_in_process(*argv) if env is None else run_cli_subprocess(*argv, env=env)


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
