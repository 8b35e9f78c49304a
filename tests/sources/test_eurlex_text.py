"""EUR-Lex pages as text, on the real recorded pages: the four act HTML families, a LEGISSUM
summary, the AWS WAF interstitial. Counts were checked by hand against the pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml.etree import _Element

from loralay_build.sources.eurlex import text as eurlex_text
from loralay_build.sources.eurlex.text import (
    act_text,
    decode,
    is_missing_page,
    is_waf_challenge,
    parse_summary,
)

LOCAL = Path(__file__).parent.parent / "fixtures" / "eurlex"
SHARED = Path("/work/shared/fixtures/eurlex")
ARTICLE = re.compile(r"(Article|Artículo) (\d+[a-z]?|premier|primero)")


def page(name: str) -> bytes:
    for folder in (LOCAL, SHARED):
        if (folder / name).is_file():
            return (folder / name).read_bytes()
    pytest.skip(f"fixture {name} absent")


def fixtures() -> list[Path]:
    names = {p.name: p for folder in (SHARED, LOCAL) if folder.is_dir()
             for p in sorted(folder.glob("*.html"))}
    return [names[n] for n in sorted(names)]


def text_nodes(root: _Element) -> list[str]:
    """Every text and tail under `root`, in document order, except what the extractor drops
    by design (scripts, markers and apparatus classes)."""
    out: list[str] = []

    def walk(node: _Element) -> None:
        if not isinstance(node.tag, str) or node.tag.lower() in eurlex_text.SKIP or (
                set(str(node.get("class") or "").split()) & eurlex_text.DROP_CLASSES):
            return
        out.append(node.text or "")
        for child in node:
            walk(child)
            out.append(child.tail or "")

    walk(root)
    return out


def squash(text: str) -> str:
    """Text without whitespace, table-cell bars and consolidation markers: what is left must
    be the same characters in the same order."""
    return re.sub(r"[\s|]", "", eurlex_text.MARKERS.sub("", text))


def articles(text: str) -> list[str]:
    return [line for line in text.split("\n") if ARTICLE.fullmatch(line)]


def test_convex_oj_xhtml_keeps_every_article_and_joins_numbered_recitals() -> None:
    act = act_text(page("visualiser-dga-32022R0868-OJ-EN.html"))
    assert act.family == "oj"
    lines = act.text.split("\n")
    # Regulation (EU) 2022/868 (Data Governance Act): 38 articles, 56 recitals.
    assert articles(act.text) == [f"Article {k}" for k in range(1, 39)]
    assert lines[0] == "REGULATION (EU) 2022/868 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL"
    assert sum(1 for line in lines if re.match(r"\(56\) ", line)) == 1
    assert any(line.startswith("(1) The Treaty on the Functioning of the European Union")
               for line in lines)
    assert "\xa0" not in act.text and not any(line == "(1)" for line in lines)


@pytest.mark.parametrize(("lang", "first", "count"), [
    ("EN", "Article 1", 48), ("ES", "Artículo 1", 48), ("FR", "Article premier", 48),
    ("PT", "Artigo 1.o", 48),
])
def test_older_oj_xhtml_inside_the_portal_page(lang: str, first: str, count: int) -> None:
    act = act_text(page(f"CELEX-32017R2403-{lang}-TXT.html"))
    assert act.family == "oj-legacy"
    lines = act.text.split("\n")
    heads = [line for line in lines if re.fullmatch(r"(Article|Artículo|Artigo) \S+", line)]
    # Regulation (EU) 2017/2403: 48 articles (p.ti-art); the portal's menus are not text.
    assert len(heads) == count and heads[0] == first
    assert lines[0].startswith("28.12.2017 | ") and "L 347/81" in lines[0]
    assert not any("Cookie" in line or "EUR-Lex home" in line for line in lines)


def test_legacy_plain_html_with_the_unregistered_charset() -> None:
    raw = page("reg_32004R0261-cellar-EN.html")
    assert b"charset=UNICODE-1-1-UTF-8" in raw
    act = act_text(raw)
    assert act.family == "legacy"
    # Regulation (EC) No 261/2004: Articles 1 to 19, then the Commission Statement.
    assert articles(act.text) == [f"Article {k}" for k in range(1, 20)]
    lines = act.text.split("\n")
    assert lines[0] == "Regulation (EC) No 261/2004 of the European Parliament and of the Council"
    assert lines[-2] == "Commission Statement"
    assert "&quot;" not in act.text and "Avis juridique" not in act.text


def test_legacy_stub_without_a_body_gives_no_text() -> None:
    act = act_text(page("lexparency-stub_2-32000L0012-EN.html"))
    assert (act.family, act.text) == ("legacy", "")


def test_consolidated_text_drops_markers_reference_and_disclaimer() -> None:
    act = act_text(page("visualiser-eprivacy_consolidated-02002L0058-20091219-EN.html"))
    assert act.family == "consolidated"
    heads = articles(act.text)
    # Directive 2002/58/EC as consolidated on 19.12.2009: Articles 1-21 plus 14a and 15a.
    assert len(heads) == 23 and {"Article 14a", "Article 15a"} <= set(heads)
    assert not re.search("[►▼◄]", act.text)
    assert "02002L0058" not in act.text and "documentation tool" not in act.text
    at = act.text.index("Security of processing")
    assert act.text[at:].split("\n")[1].startswith("1. The provider of a publicly available")


def test_lseu_summary_keeps_boilerplate_as_metadata() -> None:
    summary = parse_summary(page("legissum_l24173-summary-of-32004R0261-EN.html"))
    assert summary.format == "lseu"
    assert summary.title.startswith("EU air passenger rights in case of denied boarding")
    assert summary.last_modified == "2018-10-15"
    assert summary.acts == ["32004R0261"]
    assert set(summary.meta) == {"summary_of", "main_document", "related_documents"}
    assert summary.meta["main_document"][0].startswith("Regulation (EC) No 261/2004 of the")
    lines = summary.text.split("\n")
    assert lines[0] == summary.title
    # h1 + every p, li and h3 of the five content sections, and the two list items'
    # own words above their nested list ("compensation totalling:")
    assert len(lines) == 49
    assert "SUMMARY OF" not in summary.text and "last update" not in summary.text
    assert "MAIN DOCUMENT" not in summary.text and "Sturgeon" not in summary.text


def test_flat_summary_falls_back_to_every_block() -> None:
    raw = (b"<html><body><h1>Air safety</h1><p>The rules apply to all carriers.</p>"
           b"<ul><li>Checks</li></ul><p>Last update: 03.02.2015</p></body></html>")
    summary = parse_summary(raw)
    assert summary.format == "flat"
    assert summary.text.split("\n") == ["Air safety", "The rules apply to all carriers.",
                                        "Checks"]
    assert summary.last_modified == "2015-02-03"


def test_waf_challenge_is_recognised_by_status_header_or_body() -> None:
    body = page("aws-waf-challenge.html")
    assert is_waf_challenge(200, {}, body)  # markers alone
    assert is_waf_challenge(202, {"X-Amzn-Waf-Action": "challenge"}, b"")  # header alone
    assert not is_waf_challenge(200, {}, page("reg_32004R0261-cellar-EN.html"))
    assert not is_waf_challenge(202, {}, b"accepted")


def test_missing_pages_and_charsets() -> None:
    assert is_missing_page(b"<p>The requested document does not exist.</p>")
    assert is_missing_page(b'<div class="alert alert-warning">Nothing here</div>')
    assert not is_missing_page(page("legissum_l24173-summary-of-32004R0261-EN.html"))
    assert decode("café".encode("cp1252")) == "café"
    assert decode(b'<meta content="text/html; charset=UNICODE-1-1-UTF-8">\xc3\xa9').endswith("é")


@pytest.mark.parametrize("path", fixtures(), ids=lambda p: p.name)
def test_every_text_node_of_every_fixture_comes_out_exactly_once(path: Path) -> None:
    raw = path.read_bytes()
    tree = eurlex_text.parse_html(raw)
    sections = tree.xpath("//section[starts-with(@id,'lseu-section-')]")
    if sections:  # a summary: sections without their heading (h2); the text after the title,
        summary = parse_summary(raw)  # "SUMMARY OF", "MAIN DOCUMENT"... in the metadata
        for section in sections:
            for heading in section.xpath("./h2"):
                heading.drop_tree()
        meta = [s for s in sections if str(s.get("id")) in eurlex_text.META_SECTIONS]
        for section in meta:
            key = eurlex_text.META_SECTIONS[str(section.get("id"))]
            assert squash("".join(summary.meta[key])) == squash("".join(text_nodes(section)))
        expected = "".join(t for s in sections if s not in meta for t in text_nodes(s))
        got = summary.text.split("\n", 1)[1]
    else:  # an act: everything under the text's root
        expected = "".join(text_nodes(eurlex_text._act_root(tree)))
        got = act_text(raw).text
    assert squash(got) == squash(expected)


def test_a_list_item_keeps_its_own_words_above_its_nested_list() -> None:
    lines = parse_summary(page("legissum_l24173-summary-of-32004R0261-EN.html")).text.split("\n")
    at = [k for k, line in enumerate(lines) if line == "compensation totalling:"]
    assert len(at) == 2  # denied boarding and cancellation
    for k in at:
        assert lines[k + 1] == "€250 for all flights of 1,500 kilometres or less;"
        assert lines[k + 3] == "€600 for all other flights."


GLUED = re.compile(r"(?<!\S)(?:\d+(?:\.\d+)*\.|\(?[a-z]\)|·)[A-Za-z]")  # "2.1.The", "·Inclusion"


@pytest.mark.parametrize(("name", "heads"), [
    ("com-proposal-COM_2025_11-EN.html", ["1. Subject matter of the proposal",
                                          "2. Context of the proposal"]),
    ("com-proposal-COM_2025_43-EN.html", ["1. Subject matter of the proposal",
                                          "2.2. The Conference of the Parties"]),
])
def test_numbering_of_real_com_proposals_is_a_word_of_its_own(name: str,
                                                               heads: list[str]) -> None:
    lines = act_text(page(name)).text.split("\n")
    assert not [m.group(0) for line in lines for m in GLUED.finditer(line)]
    assert all(head in lines for head in heads)
    assert lines.index("EXPLANATORY MEMORANDUM") < lines.index(heads[0])
    if name.endswith("43-EN.html"):  # bullets sit in their own cell too
        assert sum(1 for line in lines if line.startswith("· Inclusion of ")) == 2


# A COM proposal as EUR-Lex renders it: each number and bullet in its own `span.num`, the
# text in the next span, word runs sometimes cut across spans.
COM_PROPOSAL = """<html><body><div class="contentWrapper"><div class="content">
<p class="Exposdesmotifstitre">BEGRÜNDUNG</p>
<p class="li ManualHeading1"><span class="num">1.</span><span>KONTEXT DES VORSCHLAGS</span></p>
<p class="li ManualHeading2"><span class="num">1.1.</span><span>Gründe und Ziele</span></p>
<p class="li Point0"><span class="num">a)</span><span>Verordnung (EU) 2016/679 gilt;</span></p>
<p class="li Bullet0"><span class="num">·</span><span>Es wird </span><span>ein Ver</span><span
>fahren eingeführt.</span></p>
<p class="Normal"><span style="display:inline-block;width:1cm">(1)</span><span>Zweck</span></p>
</div></div></body></html>""".encode()


def test_numbering_in_its_own_cell_is_a_word_of_its_own() -> None:
    lines = act_text(COM_PROPOSAL).text.split("\n")
    assert lines == ["BEGRÜNDUNG", "1. KONTEXT DES VORSCHLAGS", "1.1. Gründe und Ziele",
                     "a) Verordnung (EU) 2016/679 gilt;", "· Es wird ein Verfahren eingeführt.",
                     "(1) Zweck"]


# An older consolidated text as EUR-Lex served it in the legacy markup (`TexteOnly`,
# `TXT_TE`): reference line, disclaimer, ►B, the "Geändert durch:" table of amending acts.
OLD_CONSOLIDATED = """<html><head><meta name="DC.type" content="text/html;
charset=UNICODE-1-1-UTF-8"></head><body><div id="TexteOnly"><p><txt_te>
<p>1998F0699 — DE — 05.07.2001 — 001.001</p>
<p>Dieses Dokument ist lediglich eine Dokumentationsquelle, für deren Richtigkeit die Organe
der Gemeinschaften keine Gewähr übernehmen</p>
<p>►B</p>
<p>GEMEINSAMER STANDPUNKT vom 7. Dezember 1998</p>
<p>(ABl. L 333 vom 9.12.1998, S. 1)</p>
<p>Geändert durch:</p>
<table><tr><td></td><td></td><td colspan="3">Amtsblatt</td></tr>
<tr><td></td><td></td><td>Nr.</td><td>Seite</td><td>Datum</td></tr>
<tr><td>►M1</td><td>Gemeinsamer Standpunkt 2001/123/GASP des Rates vom 2. Juli 2001</td>
<td>L 180</td><td>1</td><td>3.7.2001</td></tr></table>
<p>Artikel 1</p>
<p>►M1 Die Mitgliedstaaten ergreifen die erforderlichen Maßnahmen. ◄</p>
</txt_te></p></div></body></html>""".encode()


def test_older_consolidated_text_in_legacy_markup_loses_its_apparatus() -> None:
    act = act_text(OLD_CONSOLIDATED)
    assert act.family == "consolidated"
    assert act.text.split("\n") == ["GEMEINSAMER STANDPUNKT vom 7. Dezember 1998",
                                     "(ABl. L 333 vom 9.12.1998, S. 1)", "Artikel 1",
                                     "Die Mitgliedstaaten ergreifen die erforderlichen "
                                     "Maßnahmen."]
