"""`inspect` draws what the build did, on the real PDFs of ../shared/realdocs (never copied
here; skipped when absent): on the page it draws by default, the words marked kept are
exactly the row's words there, none of the words marked removed is in the row, each
abstract found there is marked in its language, and the picture has no excuse to make.
Every reject is drawn too, by the id its manifest gives."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from loralay_build.inspect.layers import ABSTRACT, KEPT, OCR, document_layers
from tests.helpers.cli import run_cli_subprocess

REALDOCS = Path(__file__).resolve().parents[2] / ".." / "shared" / "realdocs"
if not (REALDOCS / "manifest.jsonl").is_file():
    REALDOCS = Path("/work/shared/realdocs")

pytestmark = pytest.mark.skipif(not (REALDOCS / "manifest.jsonl").is_file(),
                                reason="../shared/realdocs is absent")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    """The realdocs built once with `local`; the dataset folder and its rows by manifest id."""
    tmp = tmp_path_factory.mktemp("realdocs")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from realdocs_to_local import convert

    manifest = tmp / "local.jsonl"
    convert(REALDOCS.resolve(), manifest)
    out = tmp / "out"
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out), "--no-filter",
                                "--allow-outside", "--workers", "2", "-q", timeout=1200)
    assert result.returncode == 0, result.stderr
    dataset = out / "local"
    rows = {r["article_id"].split(":", 1)[1]: r for p in sorted(dataset.glob("*.parquet"))
            for r in pq.read_table(p).to_pylist()}
    return dataset, rows


def manifest_ids() -> list[str]:
    return [json.loads(line)["id"] for line in
            (REALDOCS / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]


def test_kept_words_are_the_row_words_of_the_page(
        built: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    dataset, rows = built
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
