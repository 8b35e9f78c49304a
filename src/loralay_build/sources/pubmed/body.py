"""JATS body -> sections of paragraphs whose citation markers are kept as structured groups.

Boilerplate is removed by element, never by regex: figures, tables, captions, formulas,
footnotes, supplementary material, acknowledgements and the reference list never reach the
text. A run of `<xref ref-type="bibr">` separated only by commas, semicolons or dashes is one
marker group; a dash between two numbered markers ("[3]-[5]") is a range and expands to every
reference between them in reference-list order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from loralay_build.safexml import child, children, local
from loralay_build.sources.pubmed.jats import SKIP, flatten, normalise_pmcid

# Elements whose content is never body text.
DROP = frozenset({
    "fig", "fig-group", "table-wrap", "table-wrap-group", "table", "caption", "label",
    "disp-formula", "disp-formula-group", "inline-formula", "fn", "fn-group", "ack",
    "ref-list", "supplementary-material", "floats-group", "graphic", "media",
    "inline-graphic", "chem-struct-wrap", "boxed-text", "array", "alternatives", "math",
    "tex-math", *SKIP,
})
# Back-matter sections some publishers put in the body (BMC), matched by sec-type or title.
DROP_SEC_TYPES = frozenset({"supplementary-material", "coi-statement", "author-contributions",
                            "acknowledgement", "acknowledgements", "funding-information",
                            "data-availability", "abbreviations", "display-objects"})
DROP_TITLES = frozenset({"competing interests", "authors' contributions", "authors contributions",
                         "author contributions", "acknowledgements", "acknowledgments",
                         "acknowledgement", "supplementary material", "supporting information",
                         "funding", "abbreviations", "declarations", "conflict of interest",
                         "conflicts of interest", "pre-publication history", "disclosure",
                         "disclosures"})
BLOCKS = frozenset({"p", "list", "list-item", "def-list", "disp-quote", "statement"})
# Private-use characters stand for marker groups inside paragraph text: no punctuation or
# digits, so sentence splitting and digit replacement never touch them.
MARK_BASE = 0xE000
MARK_RE = re.compile("[\ue000-\uf8ff]")
_JOINER = re.compile(r"^\s*([,;]|[-\u2013\u2014]|and)?\s*$")
_DASH = re.compile(r"^\s*[-\u2013\u2014]\s*$")
_OPEN = re.compile(r"[\[(]\s*$")
_CLOSE = re.compile(r"^\s*[\])]")
_NUM_RANGE = re.compile(r"^\s*(\d+)\s*[-\u2013\u2014]\s*(\d+)\s*$")


@dataclass(frozen=True)
class Reference:
    ref_id: str
    label: str
    title: str
    pmid: str
    pmcid: str
    doi: str


@dataclass
class Marker:
    """One citation group as printed ("[3-5]", "(Smith 2001; Lee 2003)") and what it cites."""

    ref_ids: list[str]
    raw: str


@dataclass
class Paragraph:
    text: str  # marker groups are single private-use characters (see `marker_at`)
    markers: list[Marker] = field(default_factory=list)


@dataclass
class Section:
    title: str
    level: int
    paragraphs: list[Paragraph] = field(default_factory=list)


@dataclass
class Body:
    sections: list[Section]
    references: dict[str, Reference]  # in reference-list order


def marker_char(index: int) -> str:
    return chr(MARK_BASE + index)


def marker_index(char: str) -> int:
    return ord(char) - MARK_BASE


def read_references(article: etree._Element) -> dict[str, Reference]:
    out: dict[str, Reference] = {}
    for ref_list in article.iter("{*}ref-list", "ref-list"):
        for ref in ref_list.iter("{*}ref", "ref"):
            ref_id = ref.get("id", "")
            if not ref_id or ref_id in out:
                continue
            ids: dict[str, str] = {}
            for pub_id in ref.iter("{*}pub-id", "pub-id"):
                ids.setdefault(pub_id.get("pub-id-type", ""), flatten(pub_id))
            title = next(ref.iter("{*}article-title", "article-title"), None)
            if title is None:
                title = next(ref.iter("{*}source", "source"), None)
            label = child(ref, "label")
            pmcid = ids.get("pmcid") or ids.get("pmc") or ""
            out[ref_id] = Reference(
                ref_id=ref_id,
                label=flatten(label) if label is not None else "",
                title=flatten(title) if title is not None else "",
                pmid=ids.get("pmid", ""),
                pmcid=(normalise_pmcid(pmcid) or "") if pmcid else "",
                doi=ids.get("doi", "").lower(),
            )
    return out


class _ParagraphBuilder:
    """Flattens one block into text, turning runs of bibliography xrefs into marker groups."""

    def __init__(self, refs: dict[str, Reference], order: dict[str, int]) -> None:
        self.refs = refs
        self.order = order
        self.parts: list[str | Marker] = []

    def add_text(self, text: str) -> None:
        if text:
            self.parts.append(text)

    def add_xref(self, node: etree._Element) -> None:
        rids = [r for r in (node.get("rid") or "").split() if r in self.refs]
        shown = flatten(node)
        found = _NUM_RANGE.match(shown)
        if found and len(rids) == 1:  # one xref printed as "3-5"
            rids = self._label_range(found.group(1), found.group(2)) or rids
        previous = self._open_group()
        if previous is None:
            self.parts.append(Marker(rids, shown))
            return
        marker, between = previous
        if _DASH.match(between) and marker.ref_ids and rids:
            rids = self._order_range(marker.ref_ids[-1], rids[0]) + rids[1:]
        marker.ref_ids += [r for r in rids if r not in marker.ref_ids]
        marker.raw += between + shown

    def _open_group(self) -> tuple[Marker, str] | None:
        """The marker group this xref continues, with the text between them (consumed)."""
        if self.parts and isinstance(self.parts[-1], Marker):
            return self.parts[-1], ""
        if (len(self.parts) >= 2 and isinstance(self.parts[-2], Marker)
                and isinstance(self.parts[-1], str) and _JOINER.match(self.parts[-1])):
            between = self.parts.pop()
            assert isinstance(between, str)
            marker = self.parts[-1]
            assert isinstance(marker, Marker)
            return marker, between
        return None

    def _order_range(self, first: str, last: str) -> list[str]:
        """Reference ids strictly after `first` up to `last`, in reference-list order."""
        ids = list(self.refs)
        a, b = self.order.get(first), self.order.get(last)
        if a is None or b is None or b <= a:
            return [last]
        return ids[a + 1:b + 1]

    def _label_range(self, start: str, end: str) -> list[str]:
        by_label = {r.label.strip(".[]"): r.ref_id for r in self.refs.values() if r.label}
        if not by_label:
            by_label = {str(i + 1): rid for i, rid in enumerate(self.refs)}
        span = range(int(start), int(end) + 1)
        if len(span) > 200:
            return []
        return [by_label[str(n)] for n in span if str(n) in by_label]

    def walk(self, node: etree._Element) -> None:
        self.add_text(node.text or "")
        for sub in node:
            if isinstance(sub.tag, str):
                name = local(sub)
                if name == "xref" and sub.get("ref-type") == "bibr":
                    self.add_xref(sub)
                elif name == "xref" and sub.get("ref-type") in ("fn", "table-fn"):
                    pass  # a footnote mark; the footnote itself is dropped
                elif name not in DROP:
                    self.walk(sub)
            self.add_text(sub.tail or "")

    def build(self) -> Paragraph:
        """Brackets that enclose only a marker group are folded into it."""
        text: list[str] = []
        markers: list[Marker] = []
        parts = self.parts
        for i, part in enumerate(parts):
            if isinstance(part, Marker):
                if not part.ref_ids:  # an xref to nothing in the reference list: keep its text
                    text.append(part.raw)
                    continue
                before = text[-1] if text else ""
                after = parts[i + 1] if i + 1 < len(parts) else ""
                if (isinstance(after, str) and _OPEN.search(before) and _CLOSE.match(after)):
                    opened = _OPEN.search(before)
                    closed = _CLOSE.match(after)
                    assert opened is not None and closed is not None
                    text[-1] = before[:opened.start()]
                    part.raw = before[opened.start():] + part.raw + after[:closed.end()]
                    parts[i + 1] = after[closed.end():]
                part.raw = " ".join(part.raw.split())
                text.append(marker_char(len(markers)))
                markers.append(part)
            else:
                text.append(part)
        joined = " ".join("".join(text).split())
        joined = re.sub(r"\s+([.,;:])", r"\1", joined)
        return Paragraph(joined, markers)


def _blocks(node: etree._Element) -> list[etree._Element]:
    """Paragraph-like elements directly under a section (lists give one block per item)."""
    out: list[etree._Element] = []
    for sub in node:
        if not isinstance(sub.tag, str) or local(sub) in DROP:
            continue
        name = local(sub)
        if name == "p":
            out.append(sub)
        elif name in BLOCKS:
            out += _blocks(sub)
    return out


def _sections(node: etree._Element, refs: dict[str, Reference], order: dict[str, int],
              level: int, out: list[Section]) -> None:
    title = child(node, "title")
    name = flatten(title) if title is not None else ""
    if (node.get("sec-type", "").lower() in DROP_SEC_TYPES
            or name.lower().rstrip(":.") in DROP_TITLES):
        return
    section = Section(name, level)
    out.append(section)
    for block in _blocks(node):
        builder = _ParagraphBuilder(refs, order)
        builder.walk(block)
        paragraph = builder.build()
        if paragraph.text:
            section.paragraphs.append(paragraph)
    for sub in children(node, "sec"):
        _sections(sub, refs, order, level + 1, out)


def read_body(article: etree._Element) -> Body:
    """Sections in document order (nested ones after their parent's own paragraphs)."""
    refs = read_references(article)
    order = {rid: i for i, rid in enumerate(refs)}
    body = child(article, "body")
    out: list[Section] = []
    if body is not None:
        _sections(body, refs, order, 0, out)
        if out and not out[0].paragraphs and not out[0].title:
            out.pop(0)
    return Body([s for s in out if s.paragraphs or s.title], refs)


def render(paragraph_text: str, markers: list[Marker], cit: str | None) -> str:
    """Paragraph text with each marker group replaced by `cit`, or by its printed form."""
    return MARK_RE.sub(lambda m: cit if cit is not None else markers[marker_index(m.group())].raw,
                       paragraph_text)
