"""Check a published dataset folder against its build.json and the corpus invariants.

Why: Parquet returns silently wrong data after bit rot unless page checksums are verified on
read, and a shard can be swapped, truncated or deleted behind the manifest's back. This reads
every listed shard with checksum verification on and checks what consumers rely on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from loralay_build.blobs import sha256_file
from loralay_build.corpus.card import CARD_FILE, data_files_yaml
from loralay_build.corpus.folder import BUILD_FILE
from loralay_build.corpus.schema import EXAMPLE_SCHEMA
from loralay_build.corpus.split import SPLITS

MAX_PROBLEMS_PER_SHARD = 20  # a badly broken shard should not bury the rest of the report


def _row_problems(row: dict[str, Any]) -> Iterator[str]:
    """Invariants of one example row."""
    words = row["article_words"] or []
    boxes = row["article_bboxes"] or []
    norm = row["article_norm_bboxes"] or []
    pages = row["word_pages"] or []
    sizes = row["page_sizes"] or []
    if not words and not row.get("reference_text"):  # a text-only row (EUR-Lex) may have none
        yield "no words"
    if not len(words) == len(boxes) == len(norm) == len(pages):
        yield (f"list lengths differ: words {len(words)}, boxes {len(boxes)}, "
               f"norm boxes {len(norm)}, word_pages {len(pages)}")
    for box in norm:
        x0, y0, x1, y1 = box
        if not (0 <= x0 <= x1 <= 1000 and 0 <= y0 <= y1 <= 1000):
            yield f"normalised box out of range: {box}"
            break
    for page in pages:
        if not 0 <= page < len(sizes):
            yield f"word page {page} outside the {len(sizes)} page sizes"
            break


def _card_problems(folder: Path, build: dict[str, Any]) -> list[str]:
    """The card's `configs` name exactly the listed shards (what `datasets.load_dataset`
    reads), and a dataset without rows says so: without `configs`, `load_dataset` would take
    build.json or rejects.jsonl for the data."""
    problems = []
    if not build.get("files"):
        problems.append(f"no document published: {BUILD_FILE} lists no shard")
    try:
        card = (folder / CARD_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [*problems, f"{CARD_FILE}: unreadable ({exc})"]
    front = card.split("\n---", 1)[0] + "\n"
    if "\n".join(data_files_yaml(build.get("files", []))) + "\n" not in front:
        problems.append(f"{CARD_FILE}: its `configs` do not list exactly the shards of "
                        f"{BUILD_FILE}, so `datasets.load_dataset` would read other files")
    return problems


def verify_dataset(folder: Path) -> list[str]:
    """Every problem found in `folder`; an empty list means the dataset is sound."""
    try:
        build = json.loads((folder / BUILD_FILE).read_text())
    except (OSError, ValueError) as exc:
        return [f"{BUILD_FILE}: unreadable ({exc})"]
    problems = _card_problems(folder, build)
    seen: dict[str, str] = {}
    listed = {entry["name"] for entry in build.get("files", [])}
    for stray in sorted(p.name for p in folder.glob("*.parquet")):
        if stray not in listed:
            problems.append(f"{stray}: not listed in {BUILD_FILE}")
    for entry in build.get("files", []):
        name = entry["name"]
        path = folder / name
        if not path.is_file():
            problems.append(f"{name}: missing")
            continue
        if entry.get("split") not in SPLITS:
            problems.append(f"{name}: unknown split {entry.get('split')!r}")
        if path.stat().st_size != entry.get("bytes"):
            problems.append(f"{name}: {path.stat().st_size} bytes, {entry.get('bytes')} listed")
        if sha256_file(path) != entry.get("sha256"):
            problems.append(f"{name}: sha256 differs from {BUILD_FILE}")
        try:
            table = pq.read_table(path, page_checksum_verification=True)
        except (OSError, pa.ArrowException) as exc:
            problems.append(f"{name}: unreadable ({exc})")
            continue
        if not table.schema.equals(EXAMPLE_SCHEMA):
            problems.append(f"{name}: schema differs from the example schema")
        if table.num_rows != entry.get("rows"):
            problems.append(f"{name}: {table.num_rows} rows, {entry.get('rows')} listed")
        shard_problems = 0
        for row in table.to_pylist():
            article_id = row.get("article_id")
            if article_id in seen:
                problems.append(f"{name}: {article_id} already in {seen[article_id]}")
            seen[str(article_id)] = name
            for problem in _row_problems(row):
                shard_problems += 1
                if shard_problems <= MAX_PROBLEMS_PER_SHARD:
                    problems.append(f"{name}: {article_id}: {problem}")
    return problems
