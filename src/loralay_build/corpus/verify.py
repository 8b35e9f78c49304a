"""Check a published dataset folder against its build.json and the corpus invariants.

Why: Parquet returns silently wrong data after bit rot unless page checksums are verified on
read, and a shard can be swapped, truncated or deleted behind the manifest's back. This reads
every listed shard with checksum verification on and checks what consumers rely on.

Shards are read one row group at a time, and the row checks run on Arrow arrays, so memory
follows the row-group size, not the shard's or the dataset's; the set of ids (no id in two
shards) is the only thing held for the whole dataset.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from loralay_build.blobs import sha256_file
from loralay_build.config import OutputSettings
from loralay_build.corpus.card import CARD_FILE, card_schema, data_files, shard_globs
from loralay_build.corpus.folder import BUILD_FILE
from loralay_build.corpus.publish import shard_items
from loralay_build.corpus.schema import build_schema
from loralay_build.corpus.split import SPLITS
from loralay_build.corpus.writer import WorkFileError, WorkStore
from loralay_build.views.schema import view_layout

MAX_PROBLEMS_PER_SHARD = 20  # a badly broken shard should not bury the rest of the report
# The columns the row invariants of a layout shard read, in the order they are read: each is
# read alone and reduced to what the checks need before the next one. The other columns are
# read too, one at a time, so that their page checksums are verified.
ROW_COLUMNS = ["article_id", "page_sizes", "word_pages", "article_norm_bboxes",
               "article_words", "article_bboxes", "reference_text"]

ReadColumn = Callable[[str], pa.Array]


def _lengths(column: pa.Array) -> np.ndarray:
    """Per row, the length of a list column (a null list counts as empty)."""
    return np.asarray(pc.fill_null(pc.list_value_length(column), 0).to_numpy(), dtype=np.int64)


def _first_per_row(parents: np.ndarray, bad: np.ndarray) -> dict[int, int]:
    """Row -> index (in the flattened values) of its first bad value."""
    rows, first = np.unique(parents[bad], return_index=True)
    where = np.flatnonzero(bad)[first]
    return dict(zip(rows.tolist(), where.tolist(), strict=True))


def _bad_pages(column: pa.Array, sizes: np.ndarray) -> dict[int, str]:
    """Row -> its first word page outside its page sizes."""
    parents = pc.list_parent_indices(column).to_numpy()
    values = np.asarray(pc.list_flatten(column).to_numpy(zero_copy_only=False))
    bad = (values < 0) | (values >= sizes[parents])
    return {row: f"word page {values[i]} outside the {sizes[row]} page sizes"
            for row, i in _first_per_row(parents, bad).items()}


def _bad_boxes(column: pa.Array) -> dict[int, str]:
    """Row -> its first normalised box outside 0-1000 or inverted."""
    parents = pc.list_parent_indices(column).to_numpy()
    coords = np.asarray(pc.list_flatten(pc.list_flatten(column)).to_numpy(
        zero_copy_only=False)).reshape(-1, 4)
    x0, y0, x1, y1 = coords.T
    bad = ~((x0 >= 0) & (x0 <= x1) & (x1 <= 1000) & (y0 >= 0) & (y0 <= y1) & (y1 <= 1000))
    return {row: f"normalised box out of range: {coords[i].tolist()}"
            for row, i in _first_per_row(parents, bad).items()}


def _row_problems(read: ReadColumn, with_reference: bool) -> dict[int, list[str]]:
    """Row index -> the invariants it breaks, in the order a reader meets them: no words,
    list lengths, the first normalised box out of range, the first word page out of range.
    `read(name)` gives one column of the row group; only one is held at a time. A row with
    a reference text (`with_reference`: the dataset has the column) may have no words."""
    sizes = _lengths(read("page_sizes"))
    column = read("word_pages")
    pages, pages_out = _lengths(column), _bad_pages(column, sizes)
    column = read("article_norm_bboxes")
    norm, boxes_out = _lengths(column), _bad_boxes(column)
    del column
    words, boxes = _lengths(read("article_words")), _lengths(read("article_bboxes"))
    reference = np.zeros_like(words) if not with_reference else np.asarray(
        pc.fill_null(pc.utf8_length(read("reference_text")), 0).to_numpy())
    out: dict[int, list[str]] = {}
    for row in np.flatnonzero((words == 0) & (reference == 0)).tolist():
        out.setdefault(row, []).append("no words")  # a text-only row (EUR-Lex) may have none
    for row in np.flatnonzero((words != boxes) | (boxes != norm) | (norm != pages)).tolist():
        out.setdefault(row, []).append(
            f"list lengths differ: words {words[row]}, boxes {boxes[row]}, "
            f"norm boxes {norm[row]}, word_pages {pages[row]}")
    for found in (boxes_out, pages_out):
        for row, message in found.items():
            out.setdefault(row, []).append(message)
    return out


def _verify_shard(path: Path, entry: dict[str, Any], schema: pa.Schema, id_column: str,
                  seen: dict[str, str], view: bool) -> Iterator[str]:
    """Problems of one listed shard, its ids added to `seen` (id -> shard name); the rows of
    a layout dataset (not a `view`) are checked for the corpus invariants too."""
    name = entry["name"]
    if entry.get("split") not in SPLITS:
        yield f"{name}: unknown split {entry.get('split')!r}"
    if path.stat().st_size != entry.get("bytes"):
        yield f"{name}: {path.stat().st_size} bytes, {entry.get('bytes')} listed"
    if sha256_file(path) != entry.get("sha256"):
        yield f"{name}: sha256 differs from {BUILD_FILE}"
    try:
        shard = pq.ParquetFile(path, page_checksum_verification=True)
    except (OSError, pa.ArrowException) as exc:
        yield f"{name}: unreadable ({exc})"
        return
    with shard:
        found = shard.schema_arrow
        if not found.equals(schema):
            yield f"{name}: schema differs from the expected schema"
        if shard.metadata.num_rows != entry.get("rows"):
            yield f"{name}: {shard.metadata.num_rows} rows, {entry.get('rows')} listed"
        layout = not view and found.equals(schema)
        checked = [c for c in ROW_COLUMNS if c in found.names] if layout \
            else [id_column] if id_column in found.names else []
        rest = [n for n in found.names if n not in checked]
        shard_problems = 0
        for group in range(shard.num_row_groups):
            def read(column: str, group: int = group) -> pa.Array:
                table = shard.read_row_group(group, columns=[column])
                return table.column(column).combine_chunks()

            try:
                ids = read(id_column).to_pylist() if checked else []
                problems = _row_problems(read, "reference_text" in checked) if layout else {}
                for other in rest:  # read only for its page checksums
                    read(other)
            except (OSError, pa.ArrowException) as exc:
                yield f"{name}: unreadable ({exc})"
                return
            for row, article_id in enumerate(ids):
                if article_id in seen:
                    yield f"{name}: {article_id} already in {seen[article_id]}"
                seen[str(article_id)] = name
                for problem in problems.get(row, ()):
                    shard_problems += 1
                    if shard_problems <= MAX_PROBLEMS_PER_SHARD:
                        yield f"{name}: {article_id}: {problem}"


def _card_problems(folder: Path, build: dict[str, Any]) -> list[str]:
    """The card's `configs` name exactly the listed shards (what `datasets.load_dataset`
    reads) with the columns' features, and a dataset without rows says so: without
    `configs`, `load_dataset` would take build.json or rejects.jsonl for the data."""
    problems = []
    if not build.get("files"):
        problems.append(f"no document published: {BUILD_FILE} lists no shard")
    try:
        card = (folder / CARD_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [*problems, f"{CARD_FILE}: unreadable ({exc})"]
    front = card.split("\n---", 1)[0] + "\n"
    expected = data_files(build.get("files", []), build.get("pages"), card_schema(build))
    if "\n".join(expected) + "\n" not in front:
        problems.append(f"{CARD_FILE}: its `configs` do not list exactly the shards of "
                        f"{BUILD_FILE} with their features, so `datasets.load_dataset` would "
                        "read other files or type them otherwise")
    return problems + _glob_problems(folder, build)


def _glob_problems(folder: Path, build: dict[str, Any]) -> list[str]:
    """Each split's patterns in the card match exactly its listed shards on disk: a stray
    file they match would be read as data."""
    problems = []
    for entries in (build.get("files", []), (build.get("pages") or {}).get("files", [])):
        for split in SPLITS:
            listed = {f["name"] for f in entries if f["split"] == split}
            for glob in shard_globs(listed):
                matched = {p.relative_to(folder).as_posix() for p in folder.glob(glob)}
                problems += [f"{name}: matches the card's {glob} but is not listed in "
                             f"{BUILD_FILE}" for name in sorted(matched - listed)]
    return problems


def verify_dataset(folder: Path) -> list[str]:
    """Every problem found in `folder`; an empty list means the dataset is sound.

    A layout dataset's rows are checked against its schema and its invariants; a
    derived view's (PubMed `sumpubmed`, `citations`) against its own schema, with its id
    column unique across shards.
    """
    try:
        build = json.loads((folder / BUILD_FILE).read_text())
    except (OSError, ValueError) as exc:
        return [f"{BUILD_FILE}: unreadable ({exc})"]
    view = build.get("view")
    if view:
        layout = view_layout(str(view))
        if layout is None:
            return [f"{BUILD_FILE}: unknown view {view!r}"]
        schema, id_column = layout
    else:
        try:
            schema, id_column = build_schema(build), "article_id"
        except (ValueError, TypeError) as exc:
            return [f"{BUILD_FILE}: its columns are not a layout dataset's ({exc})"]
    problems = _card_problems(folder, build)
    seen: dict[str, str] = {}
    listed = {entry["name"] for entry in build.get("files", [])}
    for stray in sorted(p.name for p in folder.glob("*.parquet")):
        if stray not in listed:
            problems.append(f"{stray}: not listed in {BUILD_FILE}")
    for entry in build.get("files", []):
        path = folder / entry["name"]
        if not path.is_file():
            problems.append(f"{entry['name']}: missing")
            continue
        problems += _verify_shard(path, entry, schema, id_column, seen, bool(view))
    return problems


def republish_problems(folder: Path, work_root: Path) -> list[str]:
    """Where the published rows differ from what a full republish would write.

    A full republish writes, for each item a shard records in its footer, that item's work
    file; incremental publishing only packs them differently. So each shard's rows are
    compared with the work files of its recorded items, one row group in memory at a time
    (rows whose work file was deleted once published are the only copy, and are skipped).
    `work_root` is the work store beside the build state.
    """
    try:
        build = json.loads((folder / BUILD_FILE).read_text())
        work = WorkStore(work_root, OutputSettings(), build_schema(build))
    except (OSError, ValueError, TypeError) as exc:
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
