"""JATS front matter (PMC): title, ids, date and every abstract, read from `front/article-meta`.

Only `article-meta` is read: `//abstract` would also hit sub-articles and the reference list.
Abstracts are flattened here, never LaTeX-decoded (a `%` is text in JATS). Keys of the
returned abstracts: the main language for the main abstract (no `abstract-type`), `<lang>-<type>`
for typed ones (`en-summary`, `en-graphical`...), and the `xml:lang` of each `trans-abstract`.
Structured abstracts keep their section labels inline ("Background: ... Methods: ..."), the
way most PDFs print them, so the matcher sees the same words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from loralay_build.safexml import child, children, local

XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
# Alternative renderings of content already present (TeX next to MathML, MathML annotations).
SKIP = frozenset({"annotation", "annotation-xml", "tex-math", "object-id"})
DATE_PREFERENCE = ("epub", "ppub", "pub", "collection", "pmc-release")
# JATS 1.1+ spells the publication date `date-type="pub"` with a `publication-format`.
PUB_FORMATS = {"electronic": "epub", "print": "ppub"}
MAIN_TYPES = frozenset({"", "abstract"})
_PMCID = re.compile(r"^(?:PMC)?(\d+)(?:\.\d+)?$", re.I)


@dataclass(frozen=True)
class JatsFront:
    pmcid: str  # "PMC1234567" ("" when the XML does not say)
    title: str
    doi: str
    published: str  # YYYY[-MM[-DD]]
    language: str
    abstracts: dict[str, str] = field(default_factory=dict)


def normalise_pmcid(raw: str) -> str | None:
    """`PMC123`, `123`, `PMC123.2` or an OAI identifier -> `PMC123`; None if none of these."""
    found = _PMCID.match(raw.strip().rsplit(":", 1)[-1])
    return f"PMC{found.group(1)}" if found else None


def flatten(element: etree._Element) -> str:
    """Text of an element with inline markup and MathML flattened, whitespace collapsed."""
    return " ".join(_text(element).split())


def _text(element: etree._Element) -> str:
    parts = [element.text or ""]
    for node in element:
        if isinstance(node.tag, str) and local(node) not in SKIP:
            parts.append(_text(node))
        parts.append(node.tail or "")
    return "".join(parts)


def abstract_text(element: etree._Element) -> str:
    """An abstract's text: paragraphs joined, `sec` titles kept as "Label:" before their text."""
    parts: list[str] = []
    for node in element:
        if not isinstance(node.tag, str):
            continue
        name = local(node)
        if name == "title" or name in SKIP:
            continue  # the abstract's own heading ("Abstract", "Author Summary")
        if name == "sec":
            label = flatten(child(node, "title")) if child(node, "title") is not None else ""
            body = abstract_text(node)
            parts.append(f"{label.rstrip(':')}: {body}" if label else body)
        else:
            parts.append(flatten(node))
    return " ".join(p for p in parts if p)


def _date(meta: etree._Element) -> str:
    """The publication date: a full day first (a year-only `collection` date moves an article
    in the chronological split), then by DATE_PREFERENCE."""
    found: dict[str, str] = {}
    for node in children(meta, "pub-date"):
        kind = node.get("pub-type") or node.get("date-type") or ""
        if kind == "pub":
            kind = PUB_FORMATS.get(node.get("publication-format") or "", kind)
        year, month, day = (flatten(c) if (c := child(node, n)) is not None else ""
                            for n in ("year", "month", "day"))
        if not year.isdigit() or len(year) != 4:
            continue
        value = year
        if month.isdigit() and 1 <= int(month) <= 12:
            value += f"-{int(month):02d}"
            if day.isdigit() and 1 <= int(day) <= 31:
                value += f"-{int(day):02d}"
        found.setdefault(kind, value)
    if not found:
        return ""
    rank = {kind: i for i, kind in enumerate(DATE_PREFERENCE)}
    best = min(found, key=lambda k: (found[k].count("-") < 2, rank.get(k, len(rank))))
    return found[best]


def _abstracts(meta: etree._Element, main_lang: str) -> dict[str, str]:
    out: dict[str, str] = {}

    def put(key: str, text: str) -> None:
        if not text:
            return
        name, n = key, 2
        while name in out:
            name, n = f"{key}-{n}", n + 1
        out[name] = text

    plain = [a for a in children(meta, "abstract") if a.get("abstract-type", "") in MAIN_TYPES]
    if plain:
        put(main_lang, abstract_text(plain[0]))
    for extra in plain[1:]:
        put(f"{main_lang}-abstract", abstract_text(extra))
    for typed in children(meta, "abstract"):
        kind = typed.get("abstract-type", "")
        if kind not in MAIN_TYPES:
            lang = (typed.get(XML_LANG) or main_lang).lower()
            put(f"{lang}-{kind.lower()}", abstract_text(typed))
    for trans in children(meta, "trans-abstract"):
        lang = (trans.get(XML_LANG) or "und").lower()
        put(f"{lang}-trans" if lang == main_lang else lang, abstract_text(trans))
    return out


def read_front(article: etree._Element, default_lang: str) -> JatsFront:
    """Front matter of a JATS `<article>` (namespaced or not)."""
    meta = child(child(article, "front"), "article-meta")
    if meta is None:
        return JatsFront("", "", "", "", default_lang)
    ids = {node.get("pub-id-type", ""): flatten(node) for node in children(meta, "article-id")}
    pmcid = normalise_pmcid(ids.get("pmcid") or ids.get("pmc") or "") or ""
    main = next((a for a in children(meta, "abstract")
                 if a.get("abstract-type", "") in MAIN_TYPES), None)
    lang = ((main.get(XML_LANG) if main is not None else None) or article.get(XML_LANG)
            or default_lang).lower()
    title_group = child(meta, "title-group")
    title = child(title_group, "article-title")
    return JatsFront(
        pmcid=pmcid,
        title=flatten(title) if title is not None else "",
        doi=ids.get("doi", ""),
        published=_date(meta),
        language=lang,
        abstracts=_abstracts(meta, lang),
    )
