"""PubMed/PMC source: JATS front matter, the safe XML parser, and `build-corpus pubmed` end to
end against the PMC sandbox (OAI-PMH + Cloud Service)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loralay_build.parse import parse_pdf
from loralay_build.safexml import XmlRejected, parse_xml
from loralay_build.sandbox.pubmed import PubmedSandbox
from loralay_build.sandbox.server import SandboxServer
from loralay_build.sources.pubmed import PubmedSource
from loralay_build.sources.pubmed.jats import normalise_pmcid, read_front
from loralay_build.text import MatchSettings, strip_abstracts
from tests.helpers.cli_runner import (
    FAST,
    assert_dataset_schema,
    invoke_cli,
    published_splits,
    rejects,
    rows,
    status,
    write_config,
)

JATS = b"""<?xml version="1.0"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving DTD v1.0 20120330//EN"
  "JATS-archivearticle1.dtd">
<article xmlns:mml="http://www.w3.org/1998/Math/MathML" xml:lang="en"><front><article-meta>
<article-id pub-id-type="pmc">3585041</article-id>
<article-id pub-id-type="doi">10.1371/journal.pntd.0002065</article-id>
<title-group><article-title>Rift <italic>Valley</italic> fever</article-title></title-group>
<pub-date pub-type="collection"><year>2013</year></pub-date>
<pub-date pub-type="epub"><day>7</day><month>3</month><year>2013</year></pub-date>
<abstract><title>Abstract</title>
 <sec><title>Background</title><p>Cases rose 45% (OR&#x0200a;=&#x0200a;7.3).</p></sec>
 <sec><title>Methods</title><p>We used <inline-formula><mml:math><mml:mi>&#x003bb;</mml:mi>
 <mml:annotation encoding="TeX">\\lambda</mml:annotation></mml:math></inline-formula>
 &amp; H<sub>2</sub>O.</p></sec>
</abstract>
<abstract abstract-type="summary"><title>Author Summary</title><p>A mosquito disease.</p>
</abstract>
<trans-abstract xml:lang="fr"><p>Une maladie.</p></trans-abstract>
</article-meta></front>
<back><ref-list><ref><abstract><p>Never this one.</p></abstract></ref></ref-list></back>
</article>"""


def test_front_matter_and_every_abstract() -> None:
    front = read_front(parse_xml(JATS), "en")
    assert front.pmcid == "PMC3585041"
    assert front.title == "Rift Valley fever"
    assert front.published == "2013-03-07"  # epub before collection
    assert front.doi == "10.1371/journal.pntd.0002065"
    assert front.abstracts == {
        "en": "Background: Cases rose 45% (OR = 7.3). Methods: We used λ & H2O.",
        "en-summary": "A mosquito disease.",
        "fr": "Une maladie.",
    }


@pytest.mark.parametrize(("dates", "expected"), [
    # JATS 1.1+ (current PMC): date-type="pub" with a publication format
    ('<pub-date date-type="collection"><year>2021</year></pub-date>'
     '<pub-date publication-format="electronic" date-type="pub">'
     "<day>9</day><month>6</month><year>2021</year></pub-date>", "2021-06-09"),
    ('<pub-date pub-type="collection"><year>2021</year></pub-date>'
     '<pub-date publication-format="print" date-type="pub">'
     "<month>6</month><year>2021</year></pub-date>", "2021-06"),
    ('<pub-date publication-format="print" date-type="pub"><day>1</day><month>7</month>'
     "<year>2021</year></pub-date>"
     '<pub-date publication-format="electronic" date-type="pub"><day>9</day><month>6</month>'
     "<year>2021</year></pub-date>", "2021-06-09"),  # electronic before print
    # a full day beats a year-only collection date whatever its spelling
    ('<pub-date pub-type="collection"><year>2011</year></pub-date>'
     '<pub-date pub-type="pmc-release"><day>2</day><month>8</month><year>2011</year>'
     "</pub-date>", "2011-08-02"),
    ('<pub-date pub-type="collection"><year>2011</year></pub-date>', "2011"),
])
def test_publication_dates_in_every_jats_spelling(dates: str, expected: str) -> None:
    xml = (f"<article><front><article-meta>{dates}<abstract><p>x</p></abstract>"
           "</article-meta></front></article>").encode()
    assert read_front(parse_xml(xml), "en").published == expected


def test_namespaced_jats_reads_the_same() -> None:
    namespaced = JATS.replace(b"<article xmlns:mml",
                              b'<article xmlns="https://jats.nlm.nih.gov/ns/archiving/1.3/" '
                              b"xmlns:mml")
    assert read_front(parse_xml(namespaced), "en") == read_front(parse_xml(JATS), "en")


def test_typed_abstract_keys_are_secondary_abstracts_for_the_matcher() -> None:
    words = ["Title", "A", "mosquito", "disease.", "Cases", "rose", "45%", "here.", "Body",
             "text", "follows", "on."]
    result = strip_abstracts(words, [0] * len(words),
                             {"en": "Cases rose 45% here.", "en-summary": "A mosquito disease.",
                              "fr": "Une maladie tout autre."}, "en", MatchSettings())
    assert [words[i] for i in result.keep] == ["Title", "Body", "text", "follows", "on."]
    assert {m.lang: m.found for m in result.matches} == {"en": True, "en-summary": True,
                                                        "fr": False}


def test_pmcid_forms() -> None:
    assert normalise_pmcid("PMC12855588.1") == "PMC12855588"
    assert normalise_pmcid("oai:pubmedcentral.nih.gov:3585041") == "PMC3585041"
    assert normalise_pmcid("12855588") == "PMC12855588"
    assert normalise_pmcid("astro-ph9702020") is None


def test_entity_attacks_are_refused_quickly() -> None:
    laughs = (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
              + b"".join(f'<!ENTITY a{i} "{"&a;" * 10 if i == 0 else f"&a{i - 1};" * 10}">'
                         .encode() for i in range(9))
              + b"]><l>&a8;</l>")
    external = b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>'
    for payload in (laughs, external):  # refused before any expansion or fetch
        with pytest.raises(XmlRejected):
            parse_xml(payload)


@pytest.fixture
def pmc_box() -> Iterator[PubmedSandbox]:
    with SandboxServer() as server:
        yield PubmedSandbox(server, n_docs=7)


EXPECTED = {"retracted": "unavailable", "not_oa": "unavailable", "no_pdf": "unavailable",
            "md5_mismatch": "corrupted"}


def test_preset_splits_licences_and_fault_statuses(pmc_box: PubmedSandbox,
                                                   tmp_path: Path) -> None:
    splits = pmc_box.write_split_dir(tmp_path / "splits")
    (tmp_path / "ids.txt").write_text("PMC9999999\n")  # unknown: idDoesNotExist, skipped
    config = write_config(tmp_path / "c.toml", pmc_box.client_config(), FAST)
    out = tmp_path / "data"
    result = invoke_cli("pubmed", "--out", str(out), "--config", str(config), "--split-ids",
                        str(splits), "--ids", str(tmp_path / "ids.txt"))
    assert result.exit_code == 0, result.output
    assert_dataset_schema(out / "pubmed", PubmedSource)
    published = published_splits(out / "pubmed")
    dropped = rejects(out / "pubmed")
    for article in pmc_box.articles.values():
        key = f"pubmed:{article.name}"
        if article.deleted:
            assert key not in published and key not in dropped
        elif article.behaviour in EXPECTED:
            assert dropped[key] == EXPECTED[article.behaviour], key
        else:
            assert published[key] == article.split, key
    assert status(out, "pubmed")["rejects"] == {"corrupted": 1, "unavailable": 3}
    by_id = rows(out / "pubmed")
    plain = by_id["pubmed:PMC5000001"]
    assert (plain["licence"], plain["licence_source"]) == ("LicenseRef-CC-BY", "CC BY")
    assert "45% in group A & B, at ~$12 per patient." in plain["abstract"]  # nothing truncated
    assert plain["abstract"].endswith("Risk rose (OR = 7.3; p<0.001).")
    structured = by_id["pubmed:PMC5000006"]  # two versions: the newest is taken
    assert structured["abstract"].startswith("Background: ")
    assert (structured["licence"], structured["licence_source"]) == (
        "LicenseRef-CC-BY-NC", "CC BY-NC")
    assert structured["article_pdf_url"].endswith("/PMC5000006.2/PMC5000006.2.pdf")
    assert {a["lang"] for a in plain["abstracts"]} == {"en", "en-summary"}
    assert structured["published"].count("-") == 2
    for row in by_id.values():  # "Abstract" and "Author Summary" went with their abstracts
        assert not {"Abstract", "Author", "Summary"} & set(row["article_words"])


def test_incremental_harvest_adds_only_new_records(pmc_box: PubmedSandbox,
                                                   tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", pmc_box.client_config(), FAST)
    out = tmp_path / "data"
    args = ("pubmed", "--out", str(out), "--config", str(config))
    assert invoke_cli(*args).exit_code == 0
    oai = pmc_box.server.requests("/pmc/api/oai/v1/mh/")
    assert oai[0].status == 503 and all(e.status == 200 for e in oai[1:])
    # The expired token made the client start again from its checkpoint, not from scratch.
    restarts = [e for e in oai[2:] if "resumptionToken" not in e.query]
    assert restarts and all("from=" in e.query for e in restarts)
    mark = max(a.datestamp for a in pmc_box.articles.values())
    new = pmc_box.add_articles(2)
    before = len(pmc_box.server.requests("/pmc/api/oai/v1/mh/"))
    assert invoke_cli(*args).exit_code == 0
    again = pmc_box.server.requests("/pmc/api/oai/v1/mh/")[before:]
    assert f"from={mark}" in again[0].query
    report = status(out, "pubmed")
    assert report["last_run"]["counts"]["new"] == len(new)
    assert set(published_splits(out / "pubmed")) >= {f"pubmed:{n}" for n in new}


def test_the_demo_layout_reads_the_author_line_before_the_columns(tmp_path: Path) -> None:
    """PMC5000001 of the demo (24 documents, seed 7): a centred author line, then two columns
    whose first row holds the "Abstract" heading beside a line carried over in the right
    column. The author is read first, then the heading and the abstract."""
    with SandboxServer() as server:
        article = PubmedSandbox(server, n_docs=24, seed=7).articles[5000001]
        path = tmp_path / "article.pdf"
        path.write_bytes(article.pdf())
    text = " ".join(parse_pdf(path).words)
    assert f"{article.title} {', '.join(article.authors)} Abstract We " in text


def test_unsupported_metadata_format_is_a_configuration_error(pmc_box: PubmedSandbox,
                                                              tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml",
                          pmc_box.client_config(metadata_prefix="pmc"), FAST)
    result = invoke_cli("pubmed", "--out", str(tmp_path / "data"), "--config", str(config))
    assert result.exit_code == 2
