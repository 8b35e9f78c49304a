"""arXiv identifiers and metadata records, from any of the three places they come from.

The Kaggle snapshot (two layouts), OAI-PMH `arXivRaw` and the Atom API all become one
`ArxivMeta`. Identifiers are normalised to arXiv's own form: new style `1001.0063`, old style
with its slash `astro-ph/9702020` (Cohan et al.'s files drop the slash; it is put back).
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from loralay_build.safexml import child, children, local, text_of

NEW_ID = re.compile(r"^(\d{4})\.(\d{4,5})(?:v\d+)?$")
OLD_ID = re.compile(r"^([a-z]+(?:-[a-z]+)*(?:\.[A-Z]{2})?)/?(\d{7})(?:v\d+)?$")
_PREFIXES = ("oai:arxiv.org:", "arxiv:", "https://arxiv.org/abs/", "http://arxiv.org/abs/")
_WRAP = re.compile(r"[ \t]*\n[ \t]*")
_VERSION = re.compile(r"v(\d+)$")


def normalise_id(raw: str) -> str | None:
    """arXiv id without version, old style with its slash; None when it is not an arXiv id."""
    value = raw.strip()
    for prefix in _PREFIXES:
        if value.lower().startswith(prefix):
            value = value[len(prefix):]
    if found := NEW_ID.match(value):
        return f"{found.group(1)}.{found.group(2)}"
    if found := OLD_ID.match(value):
        return f"{found.group(1)}/{found.group(2)}"
    return None


def yymm(arxiv_id: str) -> str:
    """The year-month folder of an id: `0906` for `0906.5594` and for `quant-ph/0602109`."""
    return arxiv_id.split("/")[-1][:4]


def date_from_id(arxiv_id: str) -> str:
    """YYYY-MM from the id itself, the fallback when no version date is known."""
    folder = yymm(arxiv_id)
    year = int(folder[:2])
    return f"{1900 + year if year >= 91 else 2000 + year}-{folder[2:]}"


def unwrap(text: str) -> str:
    """Hard wraps become spaces and leading/trailing spaces go (Kaggle, arXivRaw, old Atom)."""
    return _WRAP.sub(" ", text).strip()


def _rfc_date(value: str) -> str:
    """`Mon, 2 Apr 2007 19:18:42 GMT` (or an ISO timestamp) as YYYY-MM-DD; "" if unreadable."""
    value = value.strip()
    if re.match(r"^\d{4}-\d{2}-\d{2}", value):
        return value[:10]
    try:
        return email.utils.parsedate_to_datetime(value).strftime("%Y-%m-%d")
    except (TypeError, ValueError):
        return ""


@dataclass(frozen=True)
class ArxivMeta:
    id: str
    title: str
    abstract: str  # as published (LaTeX), wraps removed
    created: str  # v1 date, YYYY-MM-DD ("" when unknown)
    version: int  # the latest version the metadata knows: the one its abstract belongs to
    categories: list[str] = field(default_factory=list)  # first = primary
    licence: str = ""
    doi: str = ""


def from_kaggle(record: dict[str, Any]) -> ArxivMeta | None:
    """One snapshot line, current layout (`versions` of dicts) or older (`versions_dates`)."""
    arxiv_id = normalise_id(str(record.get("id", "")))
    if arxiv_id is None:
        return None
    versions = record.get("versions") or []
    if versions and isinstance(versions[0], dict):
        dates = [str(v.get("created", "")) for v in versions]
    else:
        dates = [str(d) for d in record.get("versions_dates") or []]
    categories = record.get("categories") or ""
    if isinstance(categories, list):
        categories = " ".join(str(c) for c in categories)
    return ArxivMeta(
        id=arxiv_id,
        title=unwrap(str(record.get("title") or "")),
        abstract=unwrap(str(record.get("abstract") or "")),
        created=_rfc_date(dates[0]) if dates else "",
        version=max(len(versions), 1),
        categories=str(categories).split(),
        licence=str(record.get("license") or ""),
        doi=str(record.get("doi") or ""),
    )


def from_arxiv_raw(element: etree._Element) -> ArxivMeta | None:
    """An OAI-PMH `arXivRaw` payload."""
    arxiv_id = normalise_id(text_of(element, "id"))
    if arxiv_id is None:
        return None
    versions = children(element, "version")
    first = text_of(versions[0], "date") if versions else ""
    return ArxivMeta(
        id=arxiv_id,
        title=unwrap(_raw_text(element, "title")),
        abstract=unwrap(_raw_text(element, "abstract")),
        created=_rfc_date(first),
        version=max(len(versions), 1),
        categories=text_of(element, "categories").split(),
        licence=text_of(element, "license"),
        doi=text_of(element, "doi"),
    )


def _raw_text(element: etree._Element, name: str) -> str:
    found = child(element, name)
    return "".join(found.itertext()) if found is not None else ""


def from_atom_entry(entry: etree._Element) -> ArxivMeta | None:
    """An Atom API `<entry>`; the error entry (title `Error`) and unknown shapes give None."""
    url = text_of(entry, "id")
    arxiv_id = normalise_id(url)
    if arxiv_id is None or text_of(entry, "title") == "Error":
        return None
    version = _VERSION.search(url)
    primary = child(entry, "primary_category")
    categories = [c.get("term", "") for c in entry if isinstance(c.tag, str)
                  and local(c) == "category"]
    if primary is not None and primary.get("term") in categories:
        categories.remove(primary.get("term", ""))
        categories.insert(0, primary.get("term", ""))
    return ArxivMeta(
        id=arxiv_id,
        title=unwrap(_raw_text(entry, "title")),
        abstract=unwrap(_raw_text(entry, "summary")),
        created=_rfc_date(text_of(entry, "published")),
        version=int(version.group(1)) if version else 1,
        categories=[c for c in categories if c],
        doi=text_of(entry, "doi"),
    )
