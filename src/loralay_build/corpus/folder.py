"""What makes a folder a published dataset, for the commands that read one."""

from __future__ import annotations

from pathlib import Path

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
