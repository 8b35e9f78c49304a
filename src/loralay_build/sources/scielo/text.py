"""What both SciELO routes share: repairs for metadata text (abstracts that start with their
heading, carry double-encoded entities or mojibake, ISIS dates with `00` for an unknown month
or day) and the candidate ids."""

from __future__ import annotations

import contextlib
import re

HEADING_WORDS = (
    "abstract|resumen|resumo|resúmen|resume|résumé|summary|synopsis|sinopsis|sumario|sumário"
)
# "RESUMO  OBJETIVO ...", "Resumen: ...", "ABSTRACT\n..." ; a heading word inside a sentence
# ("Resumen de los resultados") is kept.
_HEADING = re.compile(
    rf"^\s*(?:(?i:{HEADING_WORDS})\s*[:.]\s*|(?i:{HEADING_WORDS})(?:\s{{2,}}|\n)\s*"
    rf"|(?:{HEADING_WORDS.upper()})\s+)"
)
_DOUBLE_ENTITY = re.compile(r"&amp;(#\d+;|#[xX][0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9]*;)")
_MOJIBAKE = re.compile(r"Ã[\u0080-\u00bf]|â€")
_ISIS_DATE = re.compile(r"^(\d{4})(\d{2})?(\d{2})?$")


def clean_abstract(text: str) -> str:
    """The record's abstract without its heading, one entity layer left for the HTML step."""
    previous = None
    while previous != text:
        previous, text = text, _DOUBLE_ENTITY.sub(r"&\1", text)
    if _MOJIBAKE.search(text):
        with contextlib.suppress(UnicodeError):  # not mojibake after all: keep it
            text = text.encode("cp1252").decode("utf-8")
    return _HEADING.sub("", text, count=1).strip()


def partial_date(value: str) -> str:
    """`YYYYMMDD` (ISIS, `00` = unknown), `YYYY-MM-DD` or `YYYY` as YYYY[-MM[-DD]]."""
    found = _ISIS_DATE.match(value.replace("-", "").strip())
    if not found:
        return ""
    year, month, day = found.groups()
    if not 1000 < int(year) < 3000:
        return ""
    if not month or not 1 <= int(month) <= 12:
        return year
    if not day or not 1 <= int(day) <= 31:
        return f"{year}-{month}"
    return f"{year}-{month}-{day}"


def candidate_id(collection: str, pid: str, lang: str, original: str) -> str:
    """The article's id in the dataset of its original language; a translation's id names its
    language, so a record feeding both datasets has one id in each."""
    base = f"scielo:{collection}:{pid}"
    return base if lang == original else f"{base}:{lang}"
