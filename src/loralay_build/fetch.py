"""Downloading a document into the blob store, with the checks that keep bad bytes out."""

from __future__ import annotations

from typing import IO

from loralay_build.blobs import BlobStore
from loralay_build.errors import Reason, Reject
from loralay_build.http import HttpClient, TransientHttpError, excerpt

PDF_MAGIC = b"%PDF-"
HEAD_BYTES = 1024  # "%PDF-" may follow a little junk, but not more than this
TAIL_BYTES = 4096  # "%%EOF" must appear this close to the end


def check_pdf(handle: IO[bytes], url: str) -> None:
    """Raise unless the staged bytes look like a complete PDF.

    No magic means the server sent something else (an HTML error page, a captcha): a reject.
    No end-of-file marker means the body was cut: a transient failure, worth another try.
    """
    handle.seek(0, 2)
    size = handle.tell()
    if size == 0:
        raise Reject(Reason.NOT_PDF, "empty body")
    handle.seek(0)
    head = handle.read(HEAD_BYTES)
    if PDF_MAGIC not in head:
        raise Reject(Reason.NOT_PDF, f"no %PDF- header; starts with {excerpt(head, 60)!r}")
    handle.seek(max(0, size - TAIL_BYTES))
    if b"%%EOF" not in handle.read():
        raise TransientHttpError(url, f"truncated: no %%EOF in the last {TAIL_BYTES} bytes")


def fetch_pdf(url: str, client: HttpClient, blobs: BlobStore) -> str:
    """Download `url`, check it is a whole PDF, store it and return its sha256."""
    with blobs.staging() as handle:
        client.download(url, handle, headers={"Accept": "application/pdf"}, validate=check_pdf)
        return blobs.commit(handle)
