"""`verify` flags a normalised box whose corners are swapped, though every coordinate lies
inside 0-1000: a reader drawing it gets a box of negative width or height."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loralay_build.corpus.verify import verify_dataset
from tests.helpers.cli import build_local
from tests.helpers.local import make_corpus, relist, write_manifest


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("boxes")
    docs = tmp / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "docs.jsonl", make_corpus(docs, 2))
    result = build_local(manifest, tmp / "out")
    assert result.returncode == 0, result.stderr
    return tmp / "out" / "local"


def _with_box(built: Path, folder: Path, box: list[int]) -> Path:
    """A copy of the dataset whose first row's first normalised box is `box`, listed in
    build.json as it now is (so only the rows can be at fault)."""
    shutil.copytree(built, folder)
    [entry] = json.loads((folder / "build.json").read_text())["files"]
    shard = folder / entry["name"]
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[0]["article_norm_bboxes"] = [box, *rows[0]["article_norm_bboxes"][1:]]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    relist(folder)
    return folder


def test_a_box_inside_the_page_passes(built: Path, tmp_path: Path) -> None:
    assert verify_dataset(_with_box(built, tmp_path / "fine", [100, 200, 300, 400])) == []


@pytest.mark.parametrize("box", [[600, 200, 400, 300], [100, 700, 300, 500]],
                         ids=["x0 > x1", "y0 > y1"])
def test_an_inverted_box_is_flagged(built: Path, tmp_path: Path, box: list[int]) -> None:
    assert all(0 <= c <= 1000 for c in box)
    problems = verify_dataset(_with_box(built, tmp_path / "inverted", box))
    assert len(problems) == 1
    assert "normalised box" in problems[0] and str(box) in problems[0]
