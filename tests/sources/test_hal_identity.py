"""A HAL record whose PDF moves to a new URL, with the same bytes and metadata, is the same
document: the run that lists it again processes nothing and rewrites no file, and the new
URL is stored for the next download."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from loralay_build.sandbox import Sandbox
from loralay_build.sandbox.hal import HOSTS
from loralay_build.state import State
from tests.helpers import buildrun
from tests.helpers.cli import run_cli_in_process


def _every_file(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _file_urls(out: Path) -> dict[str, str]:
    state = State(out)
    try:
        return {r.candidate.id: r.candidate.file_url for r in state.rows("hal")}
    finally:
        state.close()


def test_a_pdf_served_from_a_new_url_is_not_processed_again(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with Sandbox(docs=4, seed=11, faults=False) as sandbox:
        config = buildrun.write_config(sandbox, tmp_path / "c.toml")
        assert buildrun.run(out, config) == 0
        before = _every_file(out / "hal")
        urls = _file_urls(out)
        # A new URL scheme: each file on another host, under its file name, its record page
        # without the version; the records re-indexed, so listed again.
        for record in sandbox.hal.records.values():
            fields = record.fields
            if "fileMain_s" not in fields:
                continue
            host = HOSTS[(HOSTS.index(fields["fileMain_s"].split("/")[2]) + 1) % len(HOSTS)]
            name = fields["files_s"][-1].rsplit("/", 1)[1]
            fields["fileMain_s"] = f"https://{host}/{record.hal_id}/file/{name}"
            fields["uri_s"] = f"https://hal.science/{record.hal_id}"
            fields["modifiedDate_tdate"] = "2030-01-01T00:00:00Z"
        assert buildrun.run(out, config) == 0
    status = run_cli_in_process("status", str(out), "--json")
    counts = json.loads(status.stdout)["hal"]["last_run"]["counts"]
    assert counts["discovered"] == len(urls) and counts.get("moved") == len(urls)
    assert counts["new"] == counts["changed"] == 0
    assert "processed" not in counts and "downloaded" not in counts
    assert _every_file(out / "hal") == before
    moved = _file_urls(out)
    assert all(moved[cid] != url and "/file/" in moved[cid] for cid, url in urls.items())
