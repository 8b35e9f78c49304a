"""SciELO: ArticleMeta records -> candidates, and whole builds of scielo-es and scielo-pt
against the sandbox (real HTTP on loopback, real SQLite, real PDFs)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from loralay_build.cli import build
from loralay_build.records import Candidate
from loralay_build.sandbox import Sandbox
from loralay_build.sources.scielo import SciELOSource
from loralay_build.sources.scielo.discover import citation_pdf_url, to_candidates
from loralay_build.sources.scielo.text import clean_abstract, partial_date
from loralay_build.state import State
from loralay_build.text import prepare_abstract
from tests.helpers.cli_runner import assert_dataset_schema

DATASETS = {"es": "scielo-es", "pt": "scielo-pt"}


def record(**changes: Any) -> dict[str, Any]:
    """An ArticleMeta record shaped like the recorded ones (ISIS fields, fulltexts)."""
    base: dict[str, Any] = {
        "code": "S0034-89102010000400007", "collection": "scl",
        "doi": "10.1590/S0034-89102010000400007", "publication_year": "2010",
        "license": "by-nc",
        "fulltexts": {"pdf": {"en": "http://www.scielo.br/pdf/rsp/v44n4/en_07.pdf",
                              "pt": "http://www.scielo.br/pdf/rsp/v44n4/07.pdf"}},
        "article": {
            "v40": [{"_": "pt"}], "v65": [{"_": "20100800"}], "v4": [{"_": "v44n4"}],
            "v702": [{"_": "V:\\Scielo\\serial\\rsp\\v44n4\\markup\\07.htm"}],
            "v12": [{"l": "pt", "_": "Um estudo dos solos"}, {"l": "en", "t": "A soil study"}],
            "v83": [{"l": "pt", "a": "RESUMO  OBJETIVO Descrever os solos."},
                    {"l": "en", "a": "ABSTRACT  OBJECTIVE To describe soils."},
                    {"l": "es", "a": "OBJETIVO: Describir los suelos &amp;#8211; caf&#233;."},
                    {"l": "fr"}],
        },
    }
    base.update(changes)
    return base


def to_candidate(rec: dict[str, Any], datasets: dict[str, str]) -> Candidate | None:
    """The record's one candidate (these records feed a single dataset)."""
    found = to_candidates(rec, datasets)
    assert len(found) <= 1
    return found[0] if found else None


def test_record_maps_to_a_pid_keyed_candidate_with_every_abstract() -> None:
    cand = to_candidate(record(), DATASETS)
    assert cand is not None
    assert cand.id == "scielo:scl:S0034-89102010000400007"
    assert (cand.dataset, cand.language, cand.published) == ("scielo-pt", "pt", "2010-08")
    assert cand.file_url == "http://www.scielo.br/pdf/rsp/v44n4/07.pdf"
    assert set(cand.abstracts) == {"pt", "en", "es"}
    assert cand.abstracts["pt"] == "OBJETIVO Descrever os solos."
    assert prepare_abstract(cand.abstracts["es"], "html") == (
        "OBJETIVO: Describir los suelos – café."
    )
    assert cand.title == "Um estudo dos solos"


def test_pdf_url_falls_back_to_v720_then_to_the_markup_path() -> None:
    old_links = record(fulltexts={"html": {}})
    old_links["article"]["v720"] = [{"f": "pdf", "l": "pt", "u": "http://www.scielo.br/x.pdf"}]
    assert to_candidate(old_links, DATASETS).file_url == "http://www.scielo.br/x.pdf"  # type: ignore[union-attr]
    bare = record()
    del bare["fulltexts"]
    bare["article"]["v4"] = [{"_": "v23n3"}]
    bare["article"]["v702"] = [{"_": "V:\\scielo\\serial\\alb\\v23n3\\markup\\alb_aop_230302.htm"}]
    cand = to_candidate(bare, DATASETS)
    assert cand is not None
    assert cand.file_url == "http://www.scielo.br/pdf/alb/v23n3/alb_aop_230302.pdf"


def test_other_languages_feed_no_dataset() -> None:
    english = record(fulltexts={"pdf": {"en": "http://www.scielo.br/pdf/rsp/v44n4/en_07.pdf"}})
    english["article"]["v40"] = [{"_": "en"}]
    assert to_candidates(english, DATASETS) == []


def test_a_translation_pdf_feeds_the_dataset_of_its_language() -> None:
    english = record()
    english["article"]["v40"] = [{"_": "en"}]
    (cand,) = to_candidates(english, DATASETS)
    assert (cand.dataset, cand.language) == ("scielo-pt", "pt")
    assert cand.id == "scielo:scl:S0034-89102010000400007:pt"
    assert cand.file_url == "http://www.scielo.br/pdf/rsp/v44n4/07.pdf"
    assert cand.abstracts["pt"] == "OBJETIVO Descrever os solos."
    # a Spanish abstract without a Spanish PDF is no Spanish document
    assert "es" in cand.abstracts and not [c for c in to_candidates(english, DATASETS)
                                           if c.language == "es"]


def test_one_record_can_feed_both_datasets_with_one_id_in_each() -> None:
    both = record()
    both["fulltexts"]["pdf"]["es"] = "http://www.scielo.br/pdf/rsp/v44n4/es_07.pdf"
    found = {c.dataset: c for c in to_candidates(both, DATASETS)}
    assert set(found) == {"scielo-pt", "scielo-es"}
    assert found["scielo-es"].file_url.endswith("/es_07.pdf")
    assert found["scielo-es"].language == "es"
    assert len({c.id for c in found.values()}) == 2


def test_abstract_repairs() -> None:
    assert clean_abstract("RESUMEN  El estudio") == "El estudio"
    assert clean_abstract("Resumo: O estudo") == "O estudo"
    assert clean_abstract("Resumen de los resultados") == "Resumen de los resultados"
    assert clean_abstract("a &amp;amp;#233; b") == "a &#233; b"
    assert clean_abstract("os usuÃ¡rios") == "os usuários"
    assert [partial_date(v) for v in ("20180000", "20100800", "20180521")] == [
        "2018", "2010-08", "2018-05-21"
    ]


def test_citation_pdf_url_prefers_the_language() -> None:
    page = (b'<html><head><meta name="citation_pdf_url" language="en" content="http://h/en.pdf">'
            b'<meta name="citation_pdf_url" language="es" content="http://h/es.pdf"></head></html>')
    assert citation_pdf_url(page, "es") == "http://h/es.pdf"
    assert citation_pdf_url(b"", "es") == ""


# -- whole builds -------------------------------------------------------------------------------


@pytest.fixture
def box() -> Iterator[Sandbox]:
    with Sandbox(docs=12, seed=5) as sandbox:
        yield sandbox


def _overrides(box: Sandbox) -> dict[str, Any]:
    overrides = box.scielo.client_config()
    overrides["run"] = {"executor": "serial", "timeout": 30.0}
    overrides["filters"] = {"enabled": False}
    overrides["http"]["backoff_base"] = 0.05
    return overrides


def _build_both(box: Sandbox, out: Path) -> list[int]:
    return [build("scielo", out, name, None, _overrides(box)) for name in DATASETS.values()]


def _rows(folder: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for shard in sorted(folder.glob("*.parquet")):
        rows += pq.read_table(shard).to_pylist()
    return rows


def _article_requests(box: Sandbox) -> list[str]:
    return [e.query for e in box.server.requests("/api/v1/article/") if "code=" in e.query]


def test_one_crawl_builds_both_datasets(box: Sandbox, tmp_path: Path) -> None:
    assert _build_both(box, tmp_path) == [0, 0]
    # Every article record was asked for once: the second dataset re-crawled nothing.
    requested = _article_requests(box)
    assert len(requested) == len(set(requested)) == len(box.scielo.articles)
    for lang, name in DATASETS.items():
        rows = _rows(tmp_path / name)
        assert rows, name
        assert_dataset_schema(tmp_path / name, SciELOSource)
        for row in rows:
            assert row["language"] == lang and row["lang_detected"] == lang
            assert row["article_id"].startswith("scielo:")
            assert row["abstract"] == next(a["text"] for a in row["abstracts"]
                                           if a["lang"] == lang)
            # every abstract of the record was found and removed
            assert {m["lang"] for m in row["matches"]} == {a["lang"] for a in row["abstracts"]}
            assert all(m["found"] for m in row["matches"])
    rejects = {
        json.loads(line)["id"].rsplit(":", 1)[1]: json.loads(line)["reason"]
        for name in DATASETS.values()
        for line in (tmp_path / name / "rejects.jsonl").read_text().splitlines()
    }
    by_variant = {a.variant: a.pid for a in box.scielo.articles.values()}
    assert rejects[by_variant["mismatch"]] == "language_mismatch"
    assert rejects[by_variant["no_main_abstract"]] == "abstract_missing_in_metadata"
    assert rejects[by_variant["missing"]] == "unavailable"
    published = {r["article_id"].rsplit(":", 1)[1] for n in DATASETS.values()
                 for r in _rows(tmp_path / n)}
    # the sci_pdf interstitial was resolved through the article page's citation_pdf_url
    for variant in ("interstitial", "heading", "entities", "no_fulltexts", "v720"):
        assert by_variant[variant] in published, variant
    assert by_variant["english"] not in published | set(rejects)
    # v40 = en with a translation PDF and abstract: in the translation language's dataset
    translation = box.scielo.articles[by_variant["translation"]]
    lang = next(iter(translation.translations.values()))
    (row,) = [r for r in _rows(tmp_path / DATASETS[lang])
              if r["article_id"].endswith(f"{translation.pid}:{lang}")]
    assert row["language"] == lang
    assert row["abstract"] == next(a["text"] for a in row["abstracts"] if a["lang"] == lang)


def test_ids_are_stable_when_the_listing_is_reordered(box: Sandbox, tmp_path: Path) -> None:
    state_ids = []
    for reverse, out in ((False, tmp_path / "a"), (True, tmp_path / "b")):
        box.scielo.reverse = reverse
        _build_both(box, out)
        state = State(out)
        try:
            state_ids.append(sorted(r.candidate.id for n in DATASETS.values()
                                    for r in state.rows(n)))
        finally:
            state.close()
    assert state_ids[0] == state_ids[1]


def test_incremental_run_reads_the_change_history(box: Sandbox, tmp_path: Path) -> None:
    _build_both(box, tmp_path)
    before = len(_article_requests(box))
    added = box.scielo.add_articles(2)
    gone = next(a.pid for a in box.scielo.articles.values() if a.variant == "heading")
    box.scielo.delete(gone)
    assert _build_both(box, tmp_path) == [0, 0]
    new_requests = _article_requests(box)[before:]
    assert sorted(q.split("code=")[1].split("&")[0] for q in new_requests) == sorted(added)
    assert any("from=" in e.query for e in box.server.requests("/api/v1/article/history/"))
    state = State(tmp_path)
    try:
        rows = {r.candidate.source_id: r for n in DATASETS.values() for r in state.rows(n)}
    finally:
        state.close()
    assert rows[gone].status == "rejected"
    assert all(rows[pid].status == "published" for pid in added)


def test_a_crawl_never_feeds_another_source_s_dataset(box: Sandbox, tmp_path: Path) -> None:
    """The crawl for scielo-es also yields scielo-pt candidates: a scielo-pt built from
    another source is refused, not merged into."""
    state = State(tmp_path)
    state.claim("scielo-pt", "local")
    state.close()
    assert build("scielo", tmp_path, "scielo-es", None, _overrides(box)) == 2
    assert State(tmp_path).rows("scielo-pt") == []
