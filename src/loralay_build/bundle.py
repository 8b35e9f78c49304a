"""A document made of several files: a small JSON manifest stored as a blob.

Most sources store one PDF per candidate. A source that also keeps a reference text (EUR-Lex:
the act's XHTML beside its Official Journal PDF), or has only the text, stores a manifest that
names its parts by sha256. The manifest is content-addressed like any blob, so a change in any
part changes the candidate's blob and re-processes it.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from loralay_build.blobs import SHA256_HEX, BlobStore

MAGIC = "loralay-bundle/1"


@dataclass(frozen=True)
class Bundle:
    """The parts of one document; a None part is missing (and `missing` says why)."""

    pdf: str | None = None  # sha256 of the PDF
    reference: str | None = None  # sha256 of the reference text (UTF-8 plain text)
    raw: list[str] = field(default_factory=list)  # sha256 of raw source files kept (XHTML)
    info: dict[str, str] = field(default_factory=dict)  # e.g. {"html_family": "oj"}


def store_bundle(blobs: BlobStore, bundle: Bundle) -> str:
    payload = {"format": MAGIC, "pdf": bundle.pdf, "reference": bundle.reference,
               "raw": bundle.raw, "info": bundle.info}
    data = json.dumps(payload, sort_keys=True).encode()
    with blobs.staging() as handle:
        handle.write(data)
        return blobs.commit(handle)


def store_bytes(blobs: BlobStore, data: bytes) -> str:
    with blobs.staging() as handle:
        handle.write(data)
        return blobs.commit(handle)


def store_text(blobs: BlobStore, text: str) -> str:
    return store_bytes(blobs, text.encode("utf-8"))


def read_bundle(path: str | Path) -> Bundle | None:
    """The manifest at `path`, or None when the blob is an ordinary file (a PDF)."""
    with open(path, "rb") as handle:
        head = handle.read(len(MAGIC) + 16)
        if not head.startswith(b"{") or MAGIC.encode() not in head:
            return None
        handle.seek(0)
        payload = json.load(io.TextIOWrapper(handle, encoding="utf-8"))
    return Bundle(payload.get("pdf"), payload.get("reference"), list(payload.get("raw", [])),
                  dict(payload.get("info", {})))


def part_path(bundle_path: str | Path, sha: str) -> Path:
    """Where a part of the bundle at `bundle_path` lives: the same store, `root/ab/abcd...`.

    Only a sha256 is accepted, so a damaged manifest cannot point outside the store.
    """
    if not SHA256_HEX.fullmatch(sha):
        raise ValueError(f"not a sha256 hex digest: {sha[:80]!r}")
    return Path(bundle_path).parent.parent / sha[:2] / sha
