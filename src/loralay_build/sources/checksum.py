"""PDF downloads verified against the checksum the file host publishes.

A body that ends early is a transient failure (check_pdf); a complete PDF whose MD5 differs
from the published one is a corrupted object on the host, which another try will not fix,
so it is a reject (`corrupted`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import IO

from loralay_build.blobs import BlobStore
from loralay_build.errors import Reason, Reject
from loralay_build.fetch import check_pdf
from loralay_build.http import HttpClient

CHUNK = 1 << 20


def md5_validator(expected: str) -> Callable[[IO[bytes], str], None]:
    """check_pdf, then the MD5 (hex) of the whole body."""

    def validate(handle: IO[bytes], url: str) -> None:
        check_pdf(handle, url)
        handle.seek(0)
        digest = hashlib.md5(usedforsecurity=False)
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
        if digest.hexdigest() != expected.lower():
            raise Reject(Reason.CORRUPTED, f"md5 {digest.hexdigest()} != published {expected}")

    return validate


def fetch_verified_pdf(url: str, md5: str, client: HttpClient, blobs: BlobStore) -> str:
    """Download a PDF, verify it (and its MD5 when one is known), store it, return its sha256."""
    with blobs.staging() as handle:
        client.download(url, handle, headers={"Accept": "application/pdf"},
                        validate=md5_validator(md5) if md5 else check_pdf)
        return blobs.commit(handle)
