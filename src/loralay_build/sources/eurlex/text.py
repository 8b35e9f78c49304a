"""EUR-Lex pages as text: the act's XHTML in its four families, LEGISSUM summaries, WAF pages.

Extraction is block-aware (one line per paragraph, list item, heading or table row) because a
tag-agnostic `.text` glues articles, recitals and table cells together. Boilerplate that names
or leaks the act (the summary's "SUMMARY OF", "MAIN DOCUMENT", "RELATED DOCUMENTS", "last
update"; consolidated texts' reference line, disclaimer and ►B/▼M1 markers) goes to metadata
or is dropped, never into the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from lxml import html as lxml_html
from lxml.etree import ParserError, _Element

BLOCKS = frozenset({"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "tr", "caption",
                    "blockquote", "pre", "txt_te"})
STRUCTURE = BLOCKS | {"div", "section", "article", "body", "ul", "ol", "dl", "table", "tbody",
                      "thead", "tfoot", "td", "th", "main", "header", "footer", "center", "form"}
SKIP = frozenset({"script", "style", "noscript", "head", "nav", "button", "select", "img"})
DROP_CLASSES = frozenset({"arrow", "modref", "reference", "disclaimer", "hd-modifiers"})
CELL_CLASSES = frozenset({"num", "no-parag"})
CELL_STYLE = re.compile(r"display\s*:\s*(?:inline-block|table-cell|block)"
                        r"|float\s*:\s*(?:left|right)|position\s*:\s*absolute", re.IGNORECASE)
LISTS = frozenset({"ul", "ol", "dl", "table"})
ROW_LABEL = re.compile(r"^\(?[0-9ivxlcdmA-Za-z]{1,5}[.)]?$")
LEGACY_CHARSET = re.compile(rb"charset\s*=\s*[\"']?unicode-1-1-utf-8", re.IGNORECASE)
DECLARED_CHARSET = re.compile(rb"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", re.IGNORECASE)
WAF_MARKERS = (b"awswaf", b"gokuProps", b"AwsWafIntegration")
MISSING_MARKERS = ("The requested document does not exist", "No legislative summaries")
SPACE = re.compile(r"\s+")
MARKERS = re.compile(r"[►▼]\s*(?:[A-Z]\d*|[A-Z]{1,2}\d+)\b|◄")  # consolidated ►B ▼M1 ◄
META_SECTIONS = {
    "lseu-section-summary-of": "summary_of",
    "lseu-section-main-document": "main_document",
    "lseu-section-related-documents": "related_documents",
}
# Consolidated texts' reference line: "1998F0699 — DE — 05.07.2001 — 001.001".
REFERENCE_LINE = re.compile(r"^[0-9CE]?[0-9]{4}[A-Z]{1,2}[0-9]{4}(?:\([0-9]+\))?\s*[—–-]\s*[A-Z]{2}"
                            r"\s*[—–-]\s*\d{2}\.\d{2}\.\d{4}\s*[—–-]\s*\d{3}\.\d{3}$")
AMENDMENT_MARK = re.compile(r"^[►▼]\s*[MACR]\d+$")  # ►M1 amending, ►A1 accession, ►C1 corrigendum
CELEX_IN_URL = re.compile(r"(?:CELEX[:%]3A|CELEX:|celex/|uri=celex:)([0-9A-Z()]+)", re.IGNORECASE)
ELI_IN_URL = re.compile(r"/eli/([a-z_]+)/(\d{4})/(\d+)/")


def is_waf_challenge(status: int, headers: Mapping[str, str], body: bytes) -> bool:
    """An AWS WAF interstitial: HTTP 202, the `x-amzn-waf-action` header, or its script markers.

    Any one suffices: the page is never content, whatever host served it.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    if lowered.get("x-amzn-waf-action", "").strip().lower() == "challenge":
        return True
    head = body[:4096]
    if any(marker in head for marker in WAF_MARKERS):
        return True
    return status == 202 and b"challenge" in head.lower()


def is_missing_page(body: bytes) -> bool:
    """EUR-Lex's "does not exist" / "no summaries" answers, in English or by their alert box."""
    text = body[:200_000].decode("utf-8", "replace")
    if any(marker in text for marker in MISSING_MARKERS):
        return True
    return 'class="alert alert-warning"' in text and "lseu-section" not in text


def decode(raw: bytes) -> str:
    """Bytes to text; the legacy `UNICODE-1-1-UTF-8` label (not a registered name) is UTF-8."""
    if LEGACY_CHARSET.search(raw[:4096]):
        return raw.decode("utf-8", "replace")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        found = DECLARED_CHARSET.search(raw[:4096])
        name = found.group(1).decode("ascii") if found else "cp1252"
        try:
            return raw.decode(name, "replace")
        except LookupError:
            return raw.decode("cp1252", "replace")


def parse_html(raw: bytes) -> _Element:
    text = decode(raw)
    text = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)  # lxml refuses a str with an encoding decl
    try:
        return lxml_html.document_fromstring(text or "<html/>")
    except ParserError:
        return lxml_html.document_fromstring("<html/>")


def _classes(el: _Element) -> set[str]:
    return set(str(el.get("class") or "").split())


def _clean(text: str) -> str:
    return SPACE.sub(" ", MARKERS.sub(" ", text.replace("\xa0", " "))).strip()


def _is_cell(el: _Element) -> bool:
    """An inline element rendered as its own cell: COM proposals' and newer OJ pages' numbering
    (`<span class="num">1.</span><span>CONTEXT</span>`), or one styled as a box or tab stop.
    Its text is a separate word even when no space separates it in the markup."""
    if not isinstance(el.tag, str):
        return False
    if _classes(el) & CELL_CLASSES:
        return True
    return bool(CELL_STYLE.search(str(el.get("style") or "")))


def _has_block(el: _Element) -> bool:
    return any(isinstance(d.tag, str) and d.tag.lower() in STRUCTURE for d in el.iterdescendants())


def _inline_text(el: _Element) -> str:
    """Text of an element, dropped-class descendants (markers) left out."""
    parts: list[str] = []

    def walk(node: _Element) -> None:
        if not isinstance(node.tag, str) or node.tag.lower() in SKIP:
            return
        if _classes(node) & DROP_CLASSES:
            return
        if node.tag.lower() == "br":
            parts.append(" ")
        if node.text:
            parts.append(node.text)
        for child in node:
            cell = _is_cell(child)
            if cell:
                parts.append(" ")
            walk(child)
            if cell:
                parts.append(" ")
            if child.tail:
                parts.append(child.tail)

    walk(el)
    return _clean("".join(parts))


def _row(tr: _Element) -> list[str]:
    """A table row as one line: a layout row "(1) | text" reads "(1) text" (recitals)."""
    cells = [c for c in tr if isinstance(c.tag, str) and c.tag.lower() in ("td", "th")]
    texts = [" ".join(blocks(c)) for c in cells]
    texts = [t for t in texts if t]
    if len(texts) == 2 and ROW_LABEL.match(texts[0]):
        return [f"{texts[0]} {texts[1]}"]
    return [" | ".join(texts)] if texts else []


def blocks(root: _Element) -> Iterator[str]:
    """One string per block in document order. Inline text between blocks (a "1." label in a
    span before the paragraph's div) is prefixed to the next block rather than lost; text
    before a list (a list item's own words above its nested list) is a line of its own."""
    pending: list[str] = [root.text or ""]
    for node in root:
        if not isinstance(node.tag, str) or node.tag.lower() in SKIP or (
                _classes(node) & DROP_CLASSES):
            pending.append(node.tail or "")
            continue
        tag = node.tag.lower()
        if tag not in STRUCTURE:
            pending += [_inline_text(node), node.tail or ""]
            continue
        if tag == "tr":
            lines = _row(node)
        elif not _has_block(node):
            lines = [_inline_text(node)]
        else:
            lines = list(blocks(node))
        lines = [line for line in lines if line]
        if (prefix := _clean(" ".join(pending))):
            if tag in LISTS:  # "compensation totalling:" before its nested list: its own line
                yield prefix
            elif lines:
                lines[0] = f"{prefix} {lines[0]}"
            else:
                lines = [prefix]
        yield from lines
        pending = [node.tail or ""]
    if (rest := _clean(" ".join(pending))):
        yield rest


@dataclass(frozen=True)
class ActText:
    family: str  # oj | oj-legacy | legacy | consolidated
    text: str  # one block per line


def _reference_lines(tree: _Element) -> list[_Element]:
    """Paragraphs holding a consolidated text's reference line, whatever their markup."""
    return [p for p in tree.iter("p", "div", "td")
            if not _has_block(p) and REFERENCE_LINE.match(_clean(p.text_content()))]


def act_family(tree: _Element) -> str:
    """Which of the four HTML families a page is, by its markers. Older consolidated texts
    use the legacy markup and are known by their reference line."""
    if tree.xpath("//p[@class='reference' or @class='disclaimer']") or tree.xpath(
            "//*[@class='norm' or @class='title-article-norm']") or _reference_lines(tree):
        return "consolidated"
    if tree.xpath("//*[starts-with(@class,'oj-')]") or tree.xpath("//div[@class='eli-container']"):
        return "oj"
    if tree.xpath("//p[@class='normal' or @class='ti-art' or @class='doc-ti']"):
        return "oj-legacy"
    return "legacy"


def _act_root(tree: _Element) -> _Element:
    for path in ("//div[@id='docHtml']", "//div[@id='text']", "//div[@id='TexteOnly']",
                 "//div[contains(@class,'eli-container')]", "//body"):
        found = tree.xpath(path)
        if found:
            return found[0]
    return tree


def _drop_apparatus(tree: _Element) -> None:
    """A consolidated text in legacy markup: its reference line, the disclaimer that follows
    it, and the tables of amending acts ("Amended by:", "Corrected by:") with their label.
    Newer consolidated pages mark these by class (DROP_CLASSES)."""
    for line in _reference_lines(tree):
        follower = line.getnext()
        if follower is not None and isinstance(follower.tag, str) and not _has_block(
                follower) and not MARKERS.search(text := follower.text_content()) and (
                not REFERENCE_LINE.match(_clean(text))):
            follower.drop_tree()  # the disclaimer, in the page's language
        line.drop_tree()
    for table in list(tree.iter("table")):
        rows = [row for row in table.iter("tr") if len(row)]
        if not any(_is_marker(row[0]) for row in rows):
            continue
        label = table.getprevious()
        if label is not None and not _has_block(label) and (
                _clean(label.text_content()).endswith(":")):
            label.drop_tree()
        table.drop_tree()


def _is_marker(el: _Element) -> bool:
    return isinstance(el.tag, str) and bool(AMENDMENT_MARK.match(
        el.text_content().replace("\xa0", " ").strip()))


def act_text(raw: bytes) -> ActText:
    """The act's body text, one block a line, for any of the four families."""
    tree = parse_html(raw)
    family = act_family(tree)
    if family == "consolidated":
        _drop_apparatus(tree)
    return ActText(family, "\n".join(blocks(_act_root(tree))))


@dataclass
class Summary:
    """A LEGISSUM summary: the target text, and what names the act kept apart as metadata."""

    title: str
    text: str  # title + body blocks, one a line
    format: str  # lseu | flat
    last_modified: str = ""  # YYYY-MM-DD from "last update"
    meta: dict[str, list[str]] = field(default_factory=dict)
    acts: list[str] = field(default_factory=list)  # CELEX ids linked from "SUMMARY OF"


def _celex_links(section: _Element) -> list[str]:
    out: list[str] = []
    for href in section.xpath(".//a/@href"):
        if (found := CELEX_IN_URL.search(str(href))):
            out.append(found.group(1).upper())
        elif (eli := ELI_IN_URL.search(str(href))):
            kind = {"reg": "R", "dir": "L", "dec": "D", "reco": "H"}.get(eli.group(1), "")
            if kind:
                out.append(f"3{eli.group(2)}{kind}{int(eli.group(3)):04d}")
    return list(dict.fromkeys(out))


def parse_summary(raw: bytes) -> Summary:
    """Current "lseu" sections when present, else a generic pass over a flat older page."""
    tree = parse_html(raw)
    body = (tree.xpath("//body") or [tree])[0]
    title = _clean(" ".join(t.text_content() for t in tree.xpath("//h1")[:1]))
    if not title:
        title = _clean(" ".join(t.text_content() for t in tree.xpath("//title")[:1]))
    lastmod = ""
    for node in tree.xpath("//*[contains(@class,'lseu-lastmod')]"):
        stamp = node.xpath(".//time/@datetime")
        lastmod = str(stamp[0]) if stamp else ""
        node.drop_tree()
    sections = tree.xpath("//section[starts-with(@id,'lseu-section-')]")
    meta: dict[str, list[str]] = {}
    acts: list[str] = []
    if sections:
        lines = [title] if title else []
        for section in sections:
            for heading in section.xpath("./h2"):  # "KEY POINTS", "SUMMARY OF:": not content
                heading.drop_tree()
            key = META_SECTIONS.get(str(section.get("id")))
            if key:
                meta[key] = list(blocks(section))
                if key == "summary_of":
                    acts = _celex_links(section)
                continue
            lines += blocks(section)
        return Summary(title, "\n".join(lines), "lseu", lastmod, meta, acts)
    lines = []
    for text in blocks(body):
        low = text.lower()
        if low.startswith("last update"):
            found = re.search(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", text)
            if found:
                lastmod = f"{found.group(3)}-{int(found.group(2)):02d}-{int(found.group(1)):02d}"
            continue
        lines.append(text)
    return Summary(title, "\n".join(lines), "flat", lastmod, meta, acts)

