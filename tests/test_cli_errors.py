"""Bad paths and unwritable places give one line and an exit code, never a traceback, and never
a folder the user did not ask for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .test_local import write_manifest


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "loralay_build.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=240, env=dict(os.environ))


@pytest.mark.parametrize("command", [
    ["local", "--input", "m.jsonl"], ["demo", "--only", "hal"], ["report", "."],
    ["inspect", ".", "x"]])
def test_a_url_as_out_is_refused(tmp_path: Path, command: list[str]) -> None:
    write_manifest(tmp_path / "m.jsonl", [])
    result = _cli(tmp_path, *command, "--out", "s3://bucket/x")
    assert result.returncode == 2, result.stderr
    assert "is a URL" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "s3:").exists()
