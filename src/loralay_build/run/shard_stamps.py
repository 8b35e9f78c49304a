"""Shards written over in place: found by their size and time, confirmed by their hash.

Why: a shard truncated or deleted is seen by its size alone, but one written over at its size
(a bad copy, a stray tool) is not. Hashing every shard on every build would read the whole
dataset nightly; instead each build records the size and modification time of the shards it
leaves, and the next one hashes only those whose time changed since.
"""

from __future__ import annotations

import json
from pathlib import Path

from loralay_build.blobs import sha256_file
from loralay_build.corpus.folder import BUILD_FILE, read_build
from loralay_build.run.context import BuildContext, log

# The size and modification time (ns) of each published shard when a build last saw it.
STAMPS_MARK = "shard_stamps"


def _stamp(path: Path) -> list[int]:
    try:
        stat = path.stat()
    except OSError:
        return []
    return [stat.st_size, stat.st_mtime_ns]


def record_stamps(ctx: BuildContext) -> None:
    """Remember the shards the dataset's build record names, as they are now."""
    files = read_build(ctx.out_dir).get("files", [])
    stamps = {entry["name"]: _stamp(ctx.out_dir / entry["name"]) for entry in files}
    ctx.state.set_mark(ctx.dataset, STAMPS_MARK, json.dumps(stamps, sort_keys=True))


def remove_written_over(ctx: BuildContext) -> int:
    """Delete the shards written over since the last build saw them (their size unchanged,
    their bytes no longer those build.json records), before anything reads the published
    rows: their documents are then processed again and the shards written like missing
    ones. Returns how many."""
    stamps = json.loads(ctx.state.get_mark(ctx.dataset, STAMPS_MARK) or "{}")
    removed = 0
    for entry in read_build(ctx.out_dir).get("files", []):
        path = ctx.out_dir / entry["name"]
        seen, now = stamps.get(entry["name"]), _stamp(path)
        if seen is None or not now or now == seen or now[0] != entry["bytes"]:
            continue  # never seen, missing, untouched, or a size `damaged_files` reports
        if sha256_file(path) != entry["sha256"]:
            log.warning("%s: written over since the last build (its sha256 is not the one "
                        "%s records); it is written again", path, BUILD_FILE)
            path.unlink()
            removed += 1
    return removed
