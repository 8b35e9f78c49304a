"""Turn a metadata abstract (plain text, HTML/JATS/MathML or LaTeX) into plain text.

The result is both the published summary and the query of the matcher, so nothing of
the text may be lost: newlines become spaces (never deleted), inline markup is flattened
without inserting spaces inside words, and LaTeX conversion never truncates.
"""

from __future__ import annotations

import html
import re
from typing import Literal

from loralay_build.text.latex import latex_to_text

Format = Literal["plain", "html", "latex", "markdown"]

_SPACE = re.compile(r"\s+")
_COMMENT = re.compile(r"<!--.*?-->|<!\[CDATA\[|\]\]>", re.S)
# Alternative renderings duplicate the text next to them (TeX next to MathML, etc.).
_DUPLICATE = re.compile(
    r"<((?:\w+:)?(?:annotation|annotation-xml|tex-math|script|style))\b[^>]*>.*?</\1\s*>",
    re.S | re.I,
)
# Block-level elements separate words; every other tag is inline and vanishes.
_BLOCK_TAG = re.compile(
    r"</?(?:\w+:)?(?:p|br|div|sec|title|li|ul|ol|tr|td|th|table|h[1-6]|label|caption|"
    r"abstract|trans-abstract|list|list-item|blockquote|section|mtable|mtr|mtd)\b[^>]*>",
    re.I,
)
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
# Markdown markup that never prints: emphasis, code ticks, link targets, heading marks.
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_MARK = re.compile(r"(?<![\\\w])(\*\*|__|\*|`+)(?=\S)|(?<=\S)(\*\*|__|\*|`+)(?!\w)")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.M)


def prepare_abstract(text: str, fmt: Format) -> str:
    """Plain, whitespace-collapsed text of a metadata abstract in the given format."""
    if fmt == "html":
        text = html_to_text(text)
    elif fmt == "latex":
        text = latex_to_text(text)
    elif fmt == "markdown":  # OpenReview: Markdown with inline LaTeX maths
        text = latex_to_text(markdown_to_text(text))
    elif fmt != "plain":
        raise ValueError(f"unknown abstract format {fmt!r}")
    return _SPACE.sub(" ", text).strip()


def html_to_text(text: str) -> str:
    """Text of an HTML or JATS fragment: entities decoded, inline markup flattened."""
    text = _COMMENT.sub("", text)
    text = _DUPLICATE.sub("", text)
    text = _BLOCK_TAG.sub(" ", text)
    text = _TAG.sub("", text)
    return html.unescape(text)


def markdown_to_text(text: str) -> str:
    """Text of a Markdown fragment: emphasis and code marks dropped, links kept as their text."""
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_HEADING.sub("", text)
    return _MD_MARK.sub("", text)
