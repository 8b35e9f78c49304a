"""SciELO `--via site`: the Scrapy crawl of the collection websites against the sandbox
(classic and new page shapes, UTF-8 and ISO-8859-1), compared with the ArticleMeta route."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from scrapy.http import HtmlResponse

from loralay_build.cli import build
from loralay_build.sandbox import Sandbox
from loralay_build.sources.scielo.spider import parse_abstract_page, parse_article
from loralay_build.state import State
from loralay_build.text import prepare_abstract

DATASETS = {"es": "scielo-es", "pt": "scielo-pt"}
PID = "S0034-89102010000400007"
CLASSIC = (
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
    '<meta name="citation_title" content="Estudio de los suelos">'
    '<meta name="citation_date" content="08/2010">'
    '<meta name="citation_doi" content="10.1590/S0034-89102010000400007">'
    '<meta name="citation_pdf_url" language="es" default="true" '
    'content="http://www.scielo.org.co/pdf/rsp/v44n4/07.pdf">'
    '<meta name="citation_pdf_url" language="en" '
    'content="http://www.scielo.org.co/pdf/rsp/v44n4/en_07.pdf"></head><body>'
    '<div class="index,es"><h4>Resumen</h4><p>Rev. 2010</p>'
    "<p><b>RESUMEN</b> Descripción de <i>los</i> suelos<br>del país &#8211; café.</p>"
    "<p><b>Palabras clave</b>: suelo</p></div></body></html>"
)


def _response(url: str, body: bytes, content_type: str) -> HtmlResponse:
    return HtmlResponse(url, body=body, headers={"Content-Type": content_type})


def test_classic_pages_decode_latin1_and_give_every_field() -> None:
    url = f"http://www.scielo.org.co/scielo.php?script=sci_arttext&pid={PID}"
    for content_type in ("text/html; charset=ISO-8859-1", "text/html"):
        page = _response(url, CLASSIC.encode("iso-8859-1"), content_type)
        item = parse_article(page, PID, url)
        assert (item["language"], item["title"], item["published"]) == (
            "es", "Estudio de los suelos", "201008")
        assert item["pdf_urls"] == {"es": "http://www.scielo.org.co/pdf/rsp/v44n4/07.pdf",
                                    "en": "http://www.scielo.org.co/pdf/rsp/v44n4/en_07.pdf"}
        assert not item["new_site"]
        # every text node, <br> as a space, entities decoded, keyword line left out
        assert parse_abstract_page(page, "es") == (
            "RESUMEN Descripción de los suelos del país – café.")


def test_new_site_pages_carry_their_abstracts() -> None:
    url = "https://www.scielo.br/j/rsp/a/JNgwxBLSnHQnSJbzhkRbCBq/?lang=pt"
    page = (
        '<html><head><meta name="citation_language" content="pt">'
        '<meta name="citation_publication_date" content="2021-05">'
        '<meta name="citation_pdf_url" content="https://www.scielo.br/j/rsp/a/'
        'JNgwxBLSnHQnSJbzhkRbCBq/?lang=pt&amp;format=pdf"></head><body>'
        '<ul><li><a href="/j/rsp/a/JNgwxBLSnHQnSJbzhkRbCBq/?lang=en&amp;format=pdf">'
        "Download PDF (Inglês)</a></li></ul>"
        '<div class="articleSection articleSection--resumo" data-anchor="Resumo">'
        "<h1>Resumo</h1><p>Um <i>estudo</i>.</p><p>Dois.</p></div>"
        '<div class="articleSection articleSection--abstract" data-anchor="Abstract">'
        "<h1>Abstract</h1><p>A study.</p></div></body></html>"
    )
    item = parse_article(_response(url, page.encode(), "text/html; charset=utf-8"), PID, url)
    assert item["new_site"] and item["language"] == "pt"
    assert item["abstracts"] == [("pt", "Um estudo. Dois."), ("en", "A study.")]
    assert set(item["pdf_urls"]) == {"pt", "en"}
    assert item["pdf_urls"]["en"].startswith("https://www.scielo.br/j/rsp/a/")


# -- whole builds -------------------------------------------------------------------------------


@pytest.fixture
def box() -> Iterator[Sandbox]:
    with Sandbox(docs=12, seed=5) as sandbox:
        yield sandbox


def _overrides(box: Sandbox, via: str) -> dict[str, Any]:
    overrides = box.scielo.client_config()
    overrides["source"].update(via=via, batch_size=1)
    overrides["run"] = {"executor": "serial", "timeout": 30.0}
    overrides["filters"] = {"enabled": False}
    overrides["http"]["backoff_base"] = 0.05
    return overrides


def _candidates(out: Path) -> dict[str, Any]:
    state = State(out)
    try:
        return {r.candidate.id: r for name in DATASETS.values() for r in state.rows(name)}
    finally:
        state.close()


def _article_pages(box: Sandbox) -> Counter[str]:
    """Article page requests by PID (classic and redirected new-site ones)."""
    return Counter(e.query.split("pid=")[1].split("&")[0]
                   for e in box.server.requests("/_scielo/")
                   if "script=sci_arttext" in e.query)


def test_site_route_matches_the_api_route(box: Sandbox, tmp_path: Path) -> None:
    for via in ("api", "site"):
        for name in DATASETS.values():
            assert build("scielo", tmp_path / via, name, None, _overrides(box, via)) == 0
    api, site = _candidates(tmp_path / "api"), _candidates(tmp_path / "site")
    assert set(site) == set(api)
    for cid, row in site.items():
        expected = api[cid].candidate
        assert row.candidate.dataset == expected.dataset and row.candidate.language == \
            expected.language
        assert {k: prepare_abstract(v, "html") for k, v in row.candidate.abstracts.items()} \
            == {k: prepare_abstract(v, "html") for k, v in expected.abstracts.items()}, cid
    articles = box.scielo.articles.values()
    shapes = {a.collection: site[f"scielo:{a.collection}:{a.pid}"].candidate.extra["new_site"]
              for a in articles if f"scielo:{a.collection}:{a.pid}" in site}
    assert shapes["scl"] and not shapes["ecu"]  # both page shapes were read; ecu is Latin-1
    assert box.server.requests("/robots.txt")
    assert not box.server.requests("/_scielo/www.scielo.br/cgi-bin/")
    # every abstract language is found and removed from the published documents
    published = 0
    for name in DATASETS.values():
        for shard in sorted((tmp_path / "site" / name).glob("*.parquet")):
            for row in pq.read_table(shard).to_pylist():
                published += 1
                assert {m["lang"] for m in row["matches"]} == {a["lang"] for a in
                                                              row["abstracts"]}
                assert all(m["found"] for m in row["matches"])
    assert published >= 6


def test_killed_site_crawl_resumes_without_refetching(box: Sandbox, tmp_path: Path) -> None:
    overrides = _overrides(box, "site")
    # --limit stops discovery after three items: the crawl subprocess is killed mid-way.
    build("scielo", tmp_path, "scielo-es", None, overrides, limit=3)
    committed = {r.candidate.source_id for r in _candidates(tmp_path).values()}
    assert len(committed) == 3
    for name in DATASETS.values():
        assert build("scielo", tmp_path, name, None, overrides) == 0
    pages = _article_pages(box)
    assert all(pages[pid] == 1 for pid in committed), pages
    expected = {f"scielo:{a.collection}:{a.pid}" for a in box.scielo.articles.values()
                if a.lang in DATASETS}
    translations = {f"scielo:{a.collection}:{a.pid}:{lang}" for a in box.scielo.articles.values()
                    for lang in a.translations.values()}
    assert translations and set(_candidates(tmp_path)) == expected | translations
