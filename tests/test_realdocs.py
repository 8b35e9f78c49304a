"""Real PDFs with gold abstracts (../shared/realdocs, never copied here): every printed
abstract is found, and its words are gone from the body. Skipped when the folder is absent."""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.helpers.cli import run_cli_subprocess

REALDOCS = Path(__file__).resolve().parents[1] / ".." / "shared" / "realdocs"
if not (REALDOCS / "manifest.jsonl").is_file():
    REALDOCS = Path("/work/shared/realdocs")
# The abstract is removed when no run of its words this long (as a share of it) is in the body.
# Bodies legitimately repeat a sentence or two of the abstract (introduction, conclusion); an
# abstract left in place shows as one run of nearly all its words.
MAX_RUN = 0.5

pytestmark = pytest.mark.skipif(not (REALDOCS / "manifest.jsonl").is_file(),
                                reason="../shared/realdocs is absent")


def tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def longest_run(abstract: list[str], body: list[str]) -> int:
    """Length of the longest word sequence the abstract and the body share."""
    match = difflib.SequenceMatcher(None, abstract, body, autojunk=False)
    return match.find_longest_match(0, len(abstract), 0, len(body)).size


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, str]]:
    """The realdocs built once with `local`: rows by id, and reject reasons by id."""
    tmp = tmp_path_factory.mktemp("realdocs")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from realdocs_to_local import convert

    manifest = tmp / "local.jsonl"
    convert(REALDOCS.resolve(), manifest)
    out = tmp / "out"
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out), "--no-filter",
                                "--allow-outside", timeout=1200)
    assert result.returncode == 0, result.stderr
    rows = {r["article_id"].split(":", 1)[1]: r for p in (out / "local").glob("*.parquet")
            for r in pq.read_table(p).to_pylist()}
    rejects = {json.loads(x)["id"].split(":", 1)[1]: json.loads(x)["reason"]
               for x in (out / "local" / "rejects.jsonl").read_text().splitlines()}
    return rows, rejects


def test_every_printed_abstract_is_found_and_removed(
    built: tuple[dict[str, Any], dict[str, str]]
) -> None:
    rows, rejects = built
    problems = []
    for line in (REALDOCS / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        printed: dict[str, str] = record.get("abstracts") or {}
        doc = record["id"]
        if record["language"] not in printed:
            assert doc not in rows, f"{doc}: no printed abstract in its language, yet a row"
            continue
        if doc not in rows:
            problems.append(f"{doc}: rejected ({rejects.get(doc)})")
            continue
        row = rows[doc]
        found = {m["lang"]: m["found"] for m in row["matches"]}
        body = tokens(" ".join(row["article_words"]))
        for lang, text in printed.items():
            if not found.get(lang):
                problems.append(f"{doc}: {lang} abstract not found")
            words = tokens(text)
            run = longest_run(words, body)
            if run > MAX_RUN * len(words):
                problems.append(f"{doc}: {run} of the {len(words)} words of the {lang} "
                                "abstract still in the body in one run")
    assert not problems, "\n".join(problems)
