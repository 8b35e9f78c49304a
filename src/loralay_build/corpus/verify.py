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
from loralay_build.corpus.folder import BUILD_FILE
from loralay_build.corpus.publish import shard_items
from loralay_build.corpus.schema import EXAMPLE_SCHEMA
from loralay_build.corpus.split import SPLITS
from loralay_build.corpus.writer import WorkFileError, WorkStore

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


def verify_dataset(folder: Path) -> list[str]:
    """Every problem found in `folder`; an empty list means the dataset is sound."""
    try:
        build = json.loads((folder / BUILD_FILE).read_text())
    except (OSError, ValueError) as exc:
        return [f"{BUILD_FILE}: unreadable ({exc})"]
    problems: list[str] = []
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


def republish_problems(folder: Path, work: WorkStore) -> list[str]:
    """Where the published rows differ from what a full republish would write.

    A full republish writes, for each item a shard records in its footer, that item's work
    file; incremental publishing only packs them differently. So each shard's rows are
    compared with the work files of its recorded items, one row group in memory at a time
    (rows whose work file was deleted once published are the only copy, and are skipped).
    """
    try:
        build = json.loads((folder / BUILD_FILE).read_text())
    except (OSError, ValueError) as exc:
        return [f"{BUILD_FILE}: unreadable ({exc})"]
    problems: list[str] = []
    for entry in build.get("files", []):
        name = entry["name"]
        found = shard_items(folder / name)
        if found is None:
            problems.append(f"{name}: records no rows (written by an earlier version)")
            continue
        items = iter(found[1])
        try:
            shard = pq.ParquetFile(folder / name)
            for group in range(shard.metadata.num_row_groups):
                table = shard.read_row_group(group)
                for index in range(table.num_rows):
                    item = next(items, None)
                    if item is not None and not work.has(item.key):
                        continue  # deleted once published ([store] keep_work = false)
                    row = table.slice(index, 1)
                    if item is None or not row.equals(work.read([item.key])):
                        label = item.id if item else f"row {index} of group {group}"
                        problems.append(f"{name}: {label} differs from its work file")
        except (OSError, pa.ArrowException, WorkFileError) as exc:
            problems.append(f"{name}: not comparable with the work files ({exc})")
    return problems
