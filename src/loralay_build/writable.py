"""Output places checked before any work, so a read-only or missing folder is one line of
error (exit 2), not a traceback after minutes of work."""

from __future__ import annotations

import tempfile
from pathlib import Path

from loralay_build.errors import ConfigError


def check_writable_folder(path: Path, what: str, create: bool = True) -> None:
    """`path` is a folder this process can write in; with `create` it is made if missing
    (its parents too), else it must exist already."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{what} {path} is not a folder")
    try:
        if create:
            path.mkdir(parents=True, exist_ok=True)
        elif not path.is_dir():
            raise ConfigError(f"{what} {path} does not exist")
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ConfigError(f"{what} {path} is not writable ({exc.strerror or exc})") from exc
