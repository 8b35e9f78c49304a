"""What makes a candidate the same document from one run to the next: what its row is made
of, never where its file is.

A candidate's identity is its metadata without its location: the file's URL (or path), its
record page, and whatever else a source names as saying where or how the file is fetched
(or only when the record was listed). Two candidates with one identity make the same row
from the same bytes, so a folder moved, a manifest renamed or a PDF served from a new URL
re-processes nothing; the new location is still stored, for the next fetch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from loralay_build.records import Candidate

EXTRA = "extra."  # prefix naming a key of `Candidate.extra` in `Identity.excluded`


@dataclass(frozen=True)
class Identity:
    """A source's rule: `excluded` names the candidate fields (or `extra.<key>` entries) left
    out of the identity: where its file is, and what only dates a listing. The record page
    is one by default: it enters no row of a downloaded PDF, whose row names the PDF's URL."""

    excluded: tuple[str, ...] = ("file_url", "landing_url")

    def payload(self, candidate: Candidate) -> dict[str, Any]:
        """The candidate's fields without the excluded ones."""
        fields = {f.name: getattr(candidate, f.name) for f in dataclasses.fields(candidate)}
        extra_keys = {name[len(EXTRA):] for name in self.excluded if name.startswith(EXTRA)}
        for name in self.excluded:
            fields.pop(name, None)
        if extra_keys:
            fields["extra"] = {k: v for k, v in candidate.extra.items() if k not in extra_keys}
        return fields

    def of(self, candidate: Candidate) -> str:
        """The identity's hash: what a work key is made from, with the file's sha256."""
        text = json.dumps(self.payload(candidate), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    def same_file(self, old: Candidate, new: Candidate, blob_sha: str) -> bool:
        """Whether `new`'s location still serves the stored file `blob_sha`, which `old`'s
        gave. A remote file is judged by its metadata (a version, a checksum, a date), which
        the identity holds: a new URL for it is a mirror, not a new file."""
        return True


DEFAULT = Identity()


def identity_of(source: object) -> Identity:
    """The identity rule a source declares (`identity`), or the default one."""
    found = getattr(source, "identity", DEFAULT)
    if not isinstance(found, Identity):
        raise TypeError(f"{type(source).__name__}.identity is a {type(found).__name__}, "
                        "not an Identity")
    return found
