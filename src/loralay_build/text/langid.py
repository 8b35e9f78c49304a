"""Language identification of a document body with CLD2.

CLD2 raises on control characters and on text that is not valid UTF-8 (lone
surrogates), both of which PDF text layers produce; the text is cleaned first and any
remaining CLD2 error means "unknown" rather than a crashed document.
"""

from __future__ import annotations

import re

import pycld2

MAX_CHARS = 100_000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
UNKNOWN = ("un", 0.0)


def detect_language(text: str) -> tuple[str, float]:
    """ISO 639-1 code of the main language and a confidence in [0, 1], or ("un", 0.0).

    The confidence is the share of the text CLD2 attributes to the top language
    (its percent / 100), halved when CLD2 itself flags the result as unreliable.
    Only the first 100,000 characters are examined.
    """
    sample = text[:MAX_CHARS]
    if not sample.isprintable():  # control characters and surrogates are not printable
        sample = _SURROGATE.sub("", _CONTROL.sub(" ", sample))
    if not sample.strip():
        return UNKNOWN
    try:
        reliable, _, details = pycld2.detect(sample)
    except pycld2.error:
        return UNKNOWN
    _name, code, percent, _score = details[0]
    if code in ("un", "xx") or percent <= 0:
        return UNKNOWN
    confidence = min(1.0, percent / 100.0) * (1.0 if reliable else 0.5)
    return str(code), confidence
