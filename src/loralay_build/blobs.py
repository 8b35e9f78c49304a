"""Content-addressed store for downloaded files.

A file is written to a temporary name, fsynced, then renamed to its sha256: a crash or a failed
download can never leave a file that looks complete under its final name.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_filesystem(path: Path) -> None:
    """Make every write on the filesystem holding `path` durable, in one call.

    `syncfs` costs one flush for a whole batch of files, where an fsync per file and per
    directory costs two each; `os.sync` (all filesystems) where syncfs is missing.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        if _LIBC is None or _LIBC.syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syncfs.argtypes = [ctypes.c_int]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _libc()


def _umask() -> int:
    """The process umask (only readable by setting it, so it is set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def follow_umask(path: Path) -> None:
    """Give a temporary file (mkstemp makes 0600) the mode a plain `open` would have, so output
    folders shared by a group, or by the nodes of a cluster, stay readable to it."""
    os.chmod(path, 0o666 & ~_umask())


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path`; renamed onto it (after fsync) if the block succeeds.

    Readers see the old file or the new one, never a partial write.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        follow_umask(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_link(source: Path, path: Path) -> None:
    """`source`'s file also under `path` (replacing it at once): a hard link, so no byte is
    written; a copy where the file system has no hard links."""
    with atomic_path(path) as tmp:
        tmp.unlink()
        try:
            os.link(source, tmp)
        except OSError:
            shutil.copyfile(source, tmp)


def sha256_file(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class BlobStore:
    """Files addressed by the sha256 of their bytes, under `root/ab/abcdef...`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp = root / "tmp"
        self.tmp.mkdir(parents=True, exist_ok=True)

    def path(self, sha256: str) -> Path:
        """Where a blob lives; only a lowercase hex sha256 is a valid name, so a damaged or
        hostile value read back from the state database can never point outside the store."""
        if not SHA256_HEX.fullmatch(sha256):
            raise ValueError(f"not a sha256 hex digest: {sha256[:80]!r}")
        return self.root / sha256[:2] / sha256

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    @contextmanager
    def staging(self) -> Iterator[IO[bytes]]:
        """A temporary file to stream into; call `commit` on it, or it is deleted on exit."""
        with tempfile.NamedTemporaryFile(dir=self.tmp, delete=False, suffix=".part") as handle:
            try:
                yield handle
            finally:
                Path(handle.name).unlink(missing_ok=True)

    def commit(self, handle: IO[bytes]) -> str:
        """Make a staged file durable under its content hash and return that hash."""
        handle.flush()
        handle.seek(0)
        digest = hashlib.sha256()
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
        return self._publish(handle, digest.hexdigest())

    def _publish(self, handle: IO[bytes], sha: str) -> str:
        """Sync the staged file and rename it to its hash (a blob already there is kept)."""
        handle.flush()
        os.fsync(handle.fileno())
        target = self.path(sha)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            follow_umask(Path(handle.name))
            os.replace(handle.name, target)
            fsync_dir(target.parent)
        return sha

    def add_file(self, source: Path) -> str:
        """Copy a local file into the store, hashing it on the way (one read of the file)."""
        digest = hashlib.sha256()
        with self.staging() as handle, source.open("rb") as src:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                digest.update(chunk)
                handle.write(chunk)
            return self._publish(handle, digest.hexdigest())

    def add_many(self, items: Sequence[bytes]) -> list[str]:
        """Store a batch of byte strings (a batch's page images) under their hashes, which
        are returned in order; an existing blob is kept. Two syncs of the filesystem for the
        whole batch instead of two fsyncs per blob: every staged file is durable before any
        is renamed, so a blob under its final name is always complete."""
        shas = [hashlib.sha256(data).hexdigest() for data in items]
        staged: dict[str, Path] = {}
        try:
            for data, sha in zip(items, shas, strict=True):
                if sha in staged or self.path(sha).exists():
                    continue
                fd, name = tempfile.mkstemp(dir=self.tmp, suffix=".part")
                staged[sha] = Path(name)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
            if staged:
                sync_filesystem(self.root)
                for sha, tmp in staged.items():
                    target = self.path(sha)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    follow_umask(tmp)
                    os.replace(tmp, target)
                sync_filesystem(self.root)
        finally:
            for tmp in staged.values():
                tmp.unlink(missing_ok=True)
        return shas

    def add_link(self, source: Path) -> str:
        """Store a local file without copying it: a hard link on the same filesystem, else a
        symbolic link to its absolute path. The blob is hashed through the link, so its name
        matches what was linked; since it shares the user's file, `intact` re-checks it."""
        self.tmp.mkdir(parents=True, exist_ok=True)
        staged = self.tmp / f"{os.getpid()}-{source.name[-100:]}.link"
        staged.unlink(missing_ok=True)
        try:
            os.link(source, staged)
        except OSError:  # another filesystem, or links refused
            os.symlink(source.resolve(), staged)
        try:
            sha = sha256_file(staged)
            target = self.path(sha)
            if not self.intact(sha):
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staged, target)
                fsync_dir(target.parent)
        finally:
            staged.unlink(missing_ok=True)
        return sha

    def discard_download(self, sha256: str) -> bool:
        """Delete a blob the store owns (a download, not a link to a user's file); returns
        whether it did."""
        path = self.path(sha256)
        if path.is_symlink() or not path.is_file() or path.stat().st_nlink > 1:
            return False
        path.unlink()
        return True

    def intact(self, sha256: str) -> bool:
        """Whether the blob still holds the bytes of its name. A file of the store's own is
        trusted; one shared with the user's file (a link) is hashed again, since the user
        may have changed or removed it."""
        path = self.path(sha256)
        try:
            if not path.is_symlink() and path.stat().st_nlink == 1:
                return True
            return sha256_file(path) == sha256
        except OSError:
            return False

    def clean_staging(self) -> int:
        """Remove temporary files left by a crashed run; returns how many."""
        count = 0
        for leftover in [*self.tmp.glob("*.part"), *self.tmp.glob("*.link")]:
            leftover.unlink(missing_ok=True)
            count += 1
        return count
