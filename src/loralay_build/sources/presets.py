"""Id lists given by the user: plain id files and the original datasets' split files.

Split files are those of Cohan et al. (train/val/test, JSON lines with `article_id`) or one
id per line; each document found in one keeps its original split.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

from loralay_build.errors import ConfigError
from loralay_build.textfile import text_lines

SPLIT_NAMES = {"train": "train", "val": "validation", "validation": "validation", "test": "test"}
SUFFIXES = (".txt", ".jsonl", ".json")

Normaliser = Callable[[str], str | None]


def _ids_in(path: Path) -> Iterator[str]:
    """Ids of a file, one per line: a bare id or a JSON object with `article_id` (or `id`)."""
    for lineno, line in text_lines(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise ConfigError(f"{path}:{lineno}: not JSON ({exc})") from exc
            value = record.get("article_id", record.get("id")) if isinstance(record, dict) \
                else None
            if value is None:
                raise ConfigError(f"{path}:{lineno}: no article_id")
            yield str(value)
        else:
            yield line.split()[0]


def read_ids(path: Path, normalise: Normaliser) -> list[str]:
    """Normalised ids of a list file, in file order, without repeats; bad ids are an error."""
    if not path.is_file():
        raise ConfigError(f"id list not found: {path}")
    out: dict[str, None] = {}
    for raw in _ids_in(path):
        norm = normalise(raw)
        if norm is None:
            raise ConfigError(f"{path}: {raw!r} is not a valid id")
        out[norm] = None
    return list(out)


def read_split_dir(directory: Path, normalise: Normaliser) -> dict[str, str]:
    """id -> split from train/val(idation)/test files in `directory`."""
    if not directory.is_dir():
        raise ConfigError(f"split directory not found: {directory}")
    out: dict[str, str] = {}
    files = sorted(p for p in directory.iterdir()
                   if p.suffix in SUFFIXES and p.stem in SPLIT_NAMES)
    if not files:
        raise ConfigError(f"no train/val/test files ({'/'.join(SUFFIXES)}) in {directory}")
    for path in files:
        split = SPLIT_NAMES[path.stem]
        for doc_id in read_ids(path, normalise):
            previous = out.setdefault(doc_id, split)
            if previous != split:
                raise ConfigError(f"{doc_id} is in both {previous} and {split}")
    return out


def configured_ids(ids: str | None, split_ids: str | None,
                   normalise: Normaliser) -> tuple[list[str], dict[str, str]]:
    """The `ids` list and `split_ids` presets named by a source's config (either may be None)."""
    listed = read_ids(Path(ids), normalise) if ids else []
    presets = read_split_dir(Path(split_ids), normalise) if split_ids else {}
    return listed, presets
