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


def check_folder_can_be_made(path: Path, what: str) -> None:
    """`path` is a writable folder, or the nearest folder above it that exists is, so the
    folder can be made later, once there is something to put in it."""
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing == path:
        check_writable_folder(path, what, create=False)
        return
    try:
        check_writable_folder(existing, what, create=False)
    except ConfigError:
        raise ConfigError(f"{what} {path} cannot be made: {existing} is not a writable "
                          "folder") from None
