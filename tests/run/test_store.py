"""`[store] keep_downloads`: downloaded PDFs kept by default, or deleted once done with and
downloaded again only when a document is processed again."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from loralay_build.sandbox import Sandbox
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess, write_toml


def _pdf_blobs(out: Path) -> int:
    return sum(1 for p in (out / ".loralay" / "blobs").glob("??/*") if p.is_file())


def test_downloads_deleted_when_not_kept_and_fetched_again_on_reprocessing(
    sandbox: Sandbox, hal_config: Path, tmp_path: Path
) -> None:
    config = tomllib.loads(hal_config.read_text())
    config["store"] = {"keep_downloads": False}
    dropping = write_toml(tmp_path / "drop.toml", config)
    kept, dropped = tmp_path / "kept", tmp_path / "dropped"
    for out, cfg in ((kept, hal_config), (dropped, dropping)):
        result = run_cli_subprocess("hal", "--out", str(out), "--config", str(cfg))
        assert result.returncode == 0, result.stderr
    assert _pdf_blobs(kept) > 0
    assert _pdf_blobs(dropped) == 0
    counts = json.loads((dropped / "hal" / "build.json").read_text())["counts"]["splits"]
    before = len(sandbox.server.requests("/_host/"))
    # Another parser processes every document again: their PDFs are downloaded again.
    result = run_cli_subprocess("hal", "--out", str(dropped), "--config", str(dropping), "--parser",
                                "pdfplumber")
    assert result.returncode == 0, result.stderr
    assert "stored PDF is gone or changed" in result.stderr
    assert len(sandbox.server.requests("/_host/")) > before
    assert json.loads((dropped / "hal" / "build.json").read_text())["counts"]["splits"] == counts
    assert _pdf_blobs(dropped) == 0
    assert run_cli_in_process("verify", str(dropped / "hal")).returncode == 0
