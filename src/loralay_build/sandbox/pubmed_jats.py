"""Full-text JATS for the PMC fake: body sections with figures, tables, formulas, footnotes and
bibliography xrefs (single, ranges "[3–5]", author–year), plus back matter (acknowledgements,
reference list). References point at articles of the fake (resolvable from the crawl), at
cited-only articles GetRecord knows, at ids PMC does not know, or carry only a PMID.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

from loralay_build.sources.pubmed.sentences import split_sentences

CAPTION = "Caption text that must never reach a view"
TABLE_CELL = "Table cell text that must never reach a view"
FOOTNOTE = "Footnote text that must never reach a view"
ACK = "Acknowledgement text that must never reach a view"


@dataclass(frozen=True)
class FakeRef:
    title: str
    pmcid: int = 0
    pmid: int = 0
    doi: str = ""

    def xml(self, index: int) -> str:
        ids = "".join(
            f'<pub-id pub-id-type="{kind}">{value}</pub-id>'
            for kind, value in (("pmid", self.pmid), ("pmcid", f"PMC{self.pmcid}"),
                                ("doi", self.doi))
            if value and value != "PMC0"
        )
        return (f'<ref id="R{index}"><label>{index}</label><mixed-citation '
                f'publication-type="journal"><article-title>{escape(self.title)}'
                f"</article-title><source>J Test</source><year>2010</year>{ids}"
                "</mixed-citation></ref>")


def _xref(index: int, text: str = "") -> str:
    return f'<xref ref-type="bibr" rid="R{index}">{escape(text or str(index))}</xref>'


# Marker groups placed at the end of sentences, by (section, paragraph, sentence).
PLACES: dict[tuple[int, int, int], str] = {
    (0, 0, 0): "[" + _xref(1) + "]",
    (0, 0, 1): "[" + _xref(3) + "\u2013" + _xref(5) + "]",
    (0, 0, 2): "(" + _xref(7, "Smith et al., 2003") + ")",
    (0, 1, 0): "[" + _xref(6) + "]",
    (0, 1, 1): "[" + _xref(2) + "," + _xref(8) + "]",
    (1, 0, 0): "[" + _xref(1) + "]",
    (1, 1, 2): "[" + _xref(4) + "]",
    (2, 0, 1): "[" + _xref(9) + "]",  # PMID only: resolved through the ID converter
}


def _cite(sentence: str, marker: str) -> str:
    text = escape(sentence)
    if text.endswith("."):
        return f"{text[:-1]} {marker}."
    return f"{text} {marker}"


def body_xml(body: list[tuple[str, list[str]]]) -> str:
    """`<body>` with citations, a figure, a table, a formula and a footnote in the sections."""
    parts = ["<body>"]
    for s_index, (title, paragraphs) in enumerate(body):
        parts.append(f"<sec><title>{escape(title)}</title>")
        for p_index, paragraph in enumerate(paragraphs):
            sentences = [
                _cite(s, PLACES[(s_index, p_index, n)]) if (s_index, p_index, n) in PLACES
                else escape(s)
                for n, s in enumerate(split_sentences(paragraph))
            ]
            note = '<xref ref-type="fn" rid="fn1">a</xref>' if s_index == 1 else ""
            parts.append(f"<p>{' '.join(sentences)}{note}</p>")
        if s_index == 1:
            parts.append(
                f'<fig id="F1"><label>Figure 1</label><caption><p>{CAPTION}.</p></caption>'
                '<graphic/></fig>'
                f'<table-wrap id="T1"><label>Table 1</label><caption><p>{CAPTION} (table).'
                f"</p></caption><table><tr><td>{TABLE_CELL}</td></tr></table></table-wrap>"
                '<disp-formula id="E1"><mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML">'
                "<mml:mi>E</mml:mi><mml:mo>=</mml:mo><mml:mi>m</mml:mi></mml:math></disp-formula>")
        parts.append("</sec>")
    parts.append("</body>")
    return "".join(parts)


def back_xml(refs: list[FakeRef]) -> str:
    items = "".join(ref.xml(i) for i, ref in enumerate(refs, 1))
    return (f"<back><ack><p>{ACK}.</p></ack><fn-group><fn id=\"fn1\"><p>{FOOTNOTE}.</p></fn>"
            f"</fn-group><ref-list><title>References</title>{items}</ref-list></back>")
