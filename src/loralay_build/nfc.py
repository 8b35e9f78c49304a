"""Unicode NFC for everything published.

Text layers and metadata hold the same letter in two forms: "é" as one code point, or "e"
followed by U+0301 (a decomposed font encoding, poppler's own accent composition, metadata
typed on another system). Published text is always NFC, so that an exact comparison, a
tokenizer or a search sees one form.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from loralay_build.native import native_module


def nfc(text: str) -> str:
    """`text` in NFC (itself when it already is: the quick check costs little)."""
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def nfc_words(words: list[str]) -> list[str]:
    """Every word in NFC; the same list when all already are (most pages), found in one
    check of the words joined by spaces: a space composes with nothing and is a starter, so
    that string is NFC exactly when every word is. The compiled core, when built, first
    leaves out the ASCII words (most of them), which are NFC."""
    native = native_module()
    joined = " ".join(words if native is None else native.non_ascii(words))
    if joined.isascii() or unicodedata.is_normalized("NFC", joined):
        return words
    return [nfc(word) for word in words]


def nfc_values(value: Any) -> Any:
    """Strings inside a column value (lists, structs) in NFC; other values unchanged."""
    if isinstance(value, str):
        return nfc(value)
    if isinstance(value, list):
        return [nfc_values(v) for v in value]
    if isinstance(value, dict):
        return {k: nfc_values(v) for k, v in value.items()}
    return value
