"""A `local` manifest entry must name its language: without one (or with an empty one) the
build stops before any work with exit 2, naming the entry and what to write, as it does
for `"language": null`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli_subprocess
from tests.helpers.local import make_corpus, write_manifest


@pytest.mark.parametrize("language", ["absent", None, ""])
def test_an_entry_without_language_is_refused_before_any_work(
        tmp_path: Path, language: str | None) -> None:
    entries = make_corpus(tmp_path, 2)
    if language == "absent":
        del entries[1]["language"]
    else:
        entries[1]["language"] = language
    manifest = write_manifest(tmp_path / "docs.jsonl", entries)
    out = tmp_path / "out"
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out), "--no-filter",
                                "--executor", "serial")
    assert result.returncode == 2, result.stderr
    assert "line 2 (id 'doc1')" in result.stderr
    assert '"language": "en"' in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()  # nothing was made
