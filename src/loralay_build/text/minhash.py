"""MinHash signatures of a document body, and the banded index that finds similar pairs.

Why: the same paper reaches a corpus folder through several sources (HAL mirrors arXiv, PMC
carries SciELO journals) and under several ids, with a different PDF each time, so neither
the file hash nor the title finds it. Word 5-gram sets of two extractions of one text overlap
far more than those of two papers sharing a template; MinHash estimates that overlap (the
Jaccard similarity) from 128 numbers per document, computed once in the worker.

The hashes are deterministic across processes and machines (CRC-32 of the words, fixed
permutation parameters), so signatures stored in the state compare with those of any later run.
"""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from collections.abc import Sequence
from typing import cast

import numpy as np
import numpy.typing as npt

from loralay_build.native import native_module

NUM_PERM = 128
SHINGLE = 5  # words per shingle
BANDS, ROWS = 42, 3  # 126 of the 128 values; a pair at Jaccard 0.5 is a candidate 99.6% of times
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
# Multiply-shift hashing, one (odd a, b) pair per permutation: ((a * x + b) mod 2^64) >> 32.
_params = np.random.default_rng(20_240_601).integers(0, np.iinfo(np.uint64).max,
                                                     size=(2, NUM_PERM), dtype=np.uint64)
_A, _B = (_params[0] | np.uint64(1))[:, None], _params[1][:, None]
_WORD = re.compile(r"\w+")
_MULT = np.uint64(0x100000001B3)  # FNV-style multiplier combining a shingle's word hashes
_A_BYTES, _B_BYTES = _A.tobytes(), _B.tobytes()  # for the compiled core (native byte order)

Signature = npt.NDArray[np.uint32]


def signature(words: Sequence[str]) -> Signature | None:
    """The document's MinHash over word 5-grams; None when it has fewer than five words."""
    return text_signature(" ".join(words))


def text_signature(text: str) -> Signature | None:
    """`signature` of the words joined by spaces (a text the caller made already).

    The words signed are the runs of word characters (`_WORD`) of the case-folded text:
    punctuation does not survive a re-typesetting. Accents stay: two extractions of one text
    carry the same ones (words are published NFC).
    """
    folded = text.casefold()
    native = native_module()
    if native is not None:  # the words cut, hashed and signed in one pass, without arrays
        values = native.minhash(folded, _A_BYTES, _B_BYTES, SHINGLE, int(_MULT))
        return None if values is None else np.frombuffer(values, dtype=np.uint32).copy()
    tokens = cast(list[str], _WORD.findall(folded))
    return signature_python(tokens) if len(tokens) >= SHINGLE else None


def signature_python(tokens: list[str]) -> Signature:
    """The MinHash of at least five tokens, in numpy (the compiled core's reference)."""
    hashes = np.fromiter((zlib.crc32(t.encode()) for t in tokens), dtype=np.uint64,
                         count=len(tokens))
    shingles = np.zeros(len(tokens) - SHINGLE + 1, dtype=np.uint64)
    for offset in range(SHINGLE):
        shingles = shingles * _MULT + hashes[offset:len(hashes) - SHINGLE + 1 + offset]
    values = np.unique(shingles)
    result: Signature = ((_A * values[None, :] + _B) >> _SHIFT).min(axis=1).astype(np.uint32)
    return result


def to_text(sig: Signature) -> str:
    """A signature as stored in the state (hex of its little-endian bytes)."""
    return to_bytes(sig).hex()


def from_text(text: str) -> Signature:
    return from_bytes(bytes.fromhex(text))


def to_bytes(sig: Signature) -> bytes:
    """A signature's little-endian bytes: band `b` is bytes 4 * ROWS * b onwards."""
    return sig.astype("<u4").tobytes()


def from_bytes(data: bytes) -> Signature:
    return np.frombuffer(data, dtype="<u4").astype(np.uint32)


def bucket(sig: Signature, band: int) -> bytes:
    """The bucket a signature falls in for one band (the band's values, as bytes)."""
    return sig[band * ROWS:(band + 1) * ROWS].astype("<u4", copy=False).tobytes()


def jaccard(a: Signature, b: Signature) -> float:
    """Estimated Jaccard similarity of the two documents' shingle sets."""
    return float(np.count_nonzero(a == b)) / NUM_PERM


def candidate_pairs(signatures: dict[str, Signature]) -> list[tuple[str, str, float]]:
    """Every pair that shares a bucket in some band, with its estimated Jaccard similarity.
    Sorted, each pair once with its ids in order."""
    seen: set[tuple[str, str]] = set()
    pairs = []
    for band in range(BANDS):  # one band's buckets in memory at a time
        buckets: dict[bytes, list[str]] = defaultdict(list)
        for key, sig in signatures.items():
            buckets[bucket(sig, band)].append(key)
        for members in buckets.values():
            for i, a in enumerate(members):
                for b in members[i + 1:]:
                    pair = (a, b) if a < b else (b, a)
                    if pair not in seen:
                        seen.add(pair)
                        pairs.append((*pair, jaccard(signatures[a], signatures[b])))
    return sorted(pairs)


def similar_pairs(signatures: dict[str, Signature],
                  threshold: float) -> list[tuple[str, str, float]]:
    """Pairs whose estimated Jaccard reaches `threshold`: banded buckets propose candidates,
    the full signatures confirm them."""
    return [pair for pair in candidate_pairs(signatures) if pair[2] >= threshold]
