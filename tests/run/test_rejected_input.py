"""Documents rejected for what their record gave (a missing file, not a PDF, no abstract in
the metadata) are said in one stderr line, counts per reason and where the list is, when
stderr is no terminal and with -q (cron); a run rejecting nothing stays silent with -q.
Such rejects do not change the exit code."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers.cli import run_cli_in_process
from tests.helpers.local import make_corpus, write_manifest

LINE = re.compile(r"^local: (\d+) document\(s\) rejected for what their record gave "
                  r"\(([^)]*)\); (.*)$")


def manifest_with_faults(folder: Path) -> Path:
    entries = make_corpus(folder, 2)
    (folder / "page.pdf").write_text("<html>not a pdf</html>")
    entries += [
        {"id": "gone", "pdf": "nowhere.pdf", "language": "fr", "abstracts": {"fr": "x y"}},
        {"id": "html", "pdf": "page.pdf", "language": "fr", "abstracts": {"fr": "x y"}},
        {"id": "noabs", "pdf": "doc0.pdf", "language": "fr", "abstracts": {}},
    ]
    return write_manifest(folder / "docs.jsonl", entries)


def build(manifest: Path, out: Path) -> tuple[int, str]:
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--executor",
                                "serial", "--no-filter", "-q")
    return result.returncode, result.stderr


def test_one_line_under_cron_then_silence(tmp_path: Path) -> None:
    manifest = manifest_with_faults(tmp_path)
    out = tmp_path / "out"
    code, stderr = build(manifest, out)
    assert code == 0, stderr
    (line,) = stderr.splitlines()
    found = LINE.match(line)
    assert found is not None, line
    assert found.group(1) == "3"
    assert found.group(2) == "1 abstract_missing_in_metadata, 1 not_pdf, 1 unavailable"
    listed = out / "local" / "rejects.jsonl"
    assert found.group(3) == f"their list: {listed}"
    rejects = {json.loads(x)["id"]: json.loads(x)["reason"]
               for x in listed.read_text().splitlines()}
    assert rejects == {"local:gone": "unavailable", "local:html": "not_pdf",
                       "local:noabs": "abstract_missing_in_metadata"}
    # nothing new rejected: nothing to say
    assert build(manifest, out) == (0, "")


def test_a_clean_run_is_silent_with_quiet(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path / "docs.jsonl", make_corpus(tmp_path, 2))
    assert build(manifest, tmp_path / "out") == (0, "")


def test_nothing_published_names_where_to_look(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path / "docs.jsonl", [
        {"id": "gone", "pdf": "nowhere.pdf", "language": "fr", "abstracts": {"fr": "x y"}}])
    out = tmp_path / "out"
    code, stderr = build(manifest, out)
    assert code == 1
    lines = [line for line in stderr.splitlines() if LINE.match(line)]
    assert len(lines) == 1 and "1 unavailable" in lines[0]
    assert f"build-corpus status {out / 'local'}" in lines[0]
    status = run_cli_in_process("status", str(out / "local"))
    assert status.returncode == 0 and "unavailable" in status.stdout
