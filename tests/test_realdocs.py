"""Real PDFs with gold abstracts (../shared/realdocs, never copied here), built once: every
printed abstract is found, and its words are gone from the body; `inspect` draws what the build
did. Skipped when the folder is absent."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from loralay_build.inspect.layers import ABSTRACT, KEPT, OCR, document_layers
from loralay_build.sandbox.realdocs import realdocs_manifest
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
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, str]]:
    """The realdocs built once with `local`: the dataset folder, rows by id, and reject
    reasons by id."""
    tmp = tmp_path_factory.mktemp("realdocs")
    manifest = tmp / "local.jsonl"
    realdocs_manifest(REALDOCS.resolve(), manifest)
    out = tmp / "out"
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out), "--no-filter",
                                "--allow-outside", "-q", timeout=1200)
    assert result.returncode == 0, result.stderr
    dataset = out / "local"
    rows = {r["article_id"].split(":", 1)[1]: r for p in sorted(dataset.glob("*.parquet"))
            for r in pq.read_table(p).to_pylist()}
    rejects = {json.loads(x)["id"].split(":", 1)[1]: json.loads(x)["reason"]
               for x in (dataset / "rejects.jsonl").read_text().splitlines()}
    return dataset, rows, rejects


def test_every_printed_abstract_is_found_and_removed(
    built: tuple[Path, dict[str, Any], dict[str, str]]
) -> None:
    _, rows, rejects = built
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


def manifest_ids() -> list[str]:
    return [json.loads(line)["id"] for line in
            (REALDOCS / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]


def test_inspect_keeps_the_row_words_of_the_page_and_draws_every_reject(
        built: tuple[Path, dict[str, Any], dict[str, str]]) -> None:
    """On the page `inspect` draws by default, the words marked kept are exactly the row's
    words there, none marked removed is in the row, each abstract found there is marked in its
    language, and the picture has no excuse to make; every reject is drawn too, by the id its
    manifest gives."""
    dataset, rows, _ = built
    problems = []
    for doc in manifest_ids():
        layers = document_layers(dataset, doc)  # the id as the manifest writes it
        row = rows.get(doc)
        if row is None:
            if layers.pdf_path is None or not layers.rejected:
                problems.append(f"{doc}: reject not drawn ({layers.notes})")
            continue
        (page,) = layers.drawn
        marks = layers.pages[page].marks
        kept = [(m.text, m.box) for m in marks if m.kind in (KEPT, OCR)]
        published = [(w, tuple(b)) for w, b, p in zip(row["article_words"],
                                                      row["article_bboxes"],
                                                      row["word_pages"], strict=True)
                     if p == page]
        if kept != published:
            problems.append(f"{doc} p{page + 1}: {len(kept)} words kept, the row has "
                            f"{len(published)}")
        removed = [m for m in marks if m.kind == ABSTRACT]
        in_row = {(w, b) for w, b in published}
        back = [m.text for m in removed if (m.text, tuple(round(v) for v in m.box)) in in_row]
        if back:
            problems.append(f"{doc} p{page + 1}: marked removed, yet in the row: {back[:5]}")
        found_here = {m["lang"] for m in row["matches"] if m["found"] and m["page"] == page}
        if found_here - {m.label for m in removed}:
            problems.append(f"{doc} p{page + 1}: abstract(s) {found_here} not marked")
        if layers.notes:
            problems.append(f"{doc}: {layers.notes}")
    assert not problems, "\n".join(problems)
