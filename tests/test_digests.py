"""Digest sets: exact membership at 32 bytes an entry, additions and questions interleaved."""

from __future__ import annotations

import hashlib

import pytest

from loralay_build.digests import DigestSet


def _sha(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def test_membership_is_exact_across_additions() -> None:
    # Digests ending in NUL bytes, which a fixed-width byte array reads back stripped.
    nul = [d for d in map(_sha, map(str, range(3000))) if d.endswith(b"\0")][:3]
    assert len(nul) == 3
    digests = [_sha(f"doc{i}") for i in range(500)] + nul
    found = DigestSet()
    for i, digest in enumerate(digests):
        found.add(digest)
        if i % 97 == 0:  # asked between additions: what was added since is found too
            assert all(d in found for d in digests[: i + 1])
            assert all(d not in found for d in digests[i + 1:])
    assert all(d in found for d in digests)
    assert _sha("elsewhere") not in found
    assert nul[0][:31] + b"\1" not in found


def test_only_32_byte_digests_are_taken() -> None:
    with pytest.raises(ValueError, match="32-byte"):
        DigestSet().add(b"abc")
