"""What makes a folder a published dataset, for the commands that read one."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

import loralay_build
from loralay_build.corpus.split import SPLITS

BUILD_FILE = "build.json"
SHARD_GLOB = "*-*-of-*.parquet"


def is_dataset(path: Path) -> bool:
    """A dataset folder holds a build record or shards; a data root or a file does not."""
    return path.is_dir() and ((path / BUILD_FILE).is_file() or any(path.glob(SHARD_GLOB)))


def datasets_under(root: Path) -> list[Path]:
    """The dataset folders directly under a data root (or the folder itself if it is one)."""
    if is_dataset(root):
        return [root]
    return sorted(p for p in root.iterdir() if is_dataset(p)) if root.is_dir() else []


def read_build(path: Path) -> dict[str, Any]:
    """The dataset's build record, or {} when it is missing or unreadable."""
    try:
        build = json.loads((path / BUILD_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return build if isinstance(build, dict) else {}


def damaged_files(path: Path, build: dict[str, Any]) -> list[tuple[str, str]]:
    """The files `build` lists that are missing or whose size is not the one it records
    (truncated, or written over), each with what is wrong with it."""
    damaged = []
    for entry in build.get("files", []):
        name, size = str(entry["name"]), int(entry["bytes"])
        try:
            actual = (path / name).stat().st_size if (path / name).is_file() else None
        except OSError:
            actual = None
        if actual is None:
            damaged.append((name, "missing"))
        elif actual != size:
            damaged.append((name, f"{'truncated: ' if actual < size else ''}{actual} bytes, "
                                  f"{BUILD_FILE} records {size}"))
    return damaged


def published_build(path: Path) -> dict[str, Any]:
    """The build record of the shard set in place, or {} when it is missing or damaged."""
    build = read_build(path)
    return {} if damaged_files(path, build) else build


def view_status(root: Path, only: str | None = None) -> dict[str, dict[str, Any]]:
    """The derived views (PubMed `sumpubmed`, `citations`) under a data root, by folder name:
    they have no candidates of their own in the state, so `status` reports their rows."""
    out: dict[str, dict[str, Any]] = {}
    for folder in datasets_under(root):
        build = read_build(folder)
        if build.get("view") and only in (None, folder.name):
            rows = build.get("counts", {}).get("splits", {})
            out[folder.name] = {"view": str(build["view"]),
                                "layout_dataset": build.get("layout_dataset"),
                                "rows": {k: rows[k] for k in SPLITS if rows.get(k)}}
    return out


def package_versions() -> dict[str, str]:
    """The versions of what makes a row, as build.json records them (and `inspect` compares
    with the installed ones)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"loralay_build": loralay_build.__version__, "python": platform.python_version()}
    for package in ("pyarrow", "pypdfium2", "pdfplumber", "pdfminer.six", "edlib", "pycld2",
                    "isal"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "absent"
    return out
