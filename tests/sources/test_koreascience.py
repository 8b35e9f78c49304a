"""KoreaScience: page parsing (encodings, <br>-split boxes, pager) and whole Scrapy-driven
builds against the sandbox, including a resumed crawl."""

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
from loralay_build.sources.koreascience import KoreaScienceSource, abstracts_by_language
from loralay_build.sources.koreascience.spider import (
    parse_article,
    parse_listing,
    script_language,
)
from loralay_build.state import State
from tests.helpers.cli_runner import assert_dataset_schema

KO = "본 연구는 한국어 문서의 요약 방법을 제안한다"
ARTICLE = (
    '<html><head>{meta}</head><body><h1 class="h2">제목</h1>'
    '<ul class="list-inline"><li class="list-inline-item">Published : 2019.12.31</li></ul>'
    '<a class="btn btn-link pl0" href="https://doi.org/10.5392/JKCA.2019.19.12.001">DOI</a>'
    '<div class="article-box"><h4>Abstract</h4><p>We propose <i>a</i> method<br>for '
    "summaries.</p></div>"
    '<div class="article-box"><h4>Abstract</h4><p>' + KO + "<br>결과를 보였다.</p></div>"
    '<div class="article-box"><h4>Keywords</h4><ul><li><a>요약</a></li></ul></div>'
    '<div class="contents-table"><a href="/article/JAKO201912261946958.pdf">PDF</a></div>'
    "</body></html>"
)


def _response(body: bytes, content_type: str) -> HtmlResponse:
    return HtmlResponse("https://koreascience.kr/article/JAKO201912261946958.page",
                        body=body, headers={"Content-Type": content_type})


@pytest.mark.parametrize(("meta", "content_type", "encoding"), [
    ('<meta charset="utf-8">', "text/html", "utf-8"),
    ("", "text/html; charset=EUC-KR", "euc-kr"),
    ('<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">', "text/html",
     "euc-kr"),
    ('<meta charset="cp949">', "text/html", "cp949"),
])
def test_article_pages_decode_in_every_encoding(meta: str, content_type: str,
                                                encoding: str) -> None:
    item = parse_article(_response(ARTICLE.format(meta=meta).encode(encoding), content_type),
                         "JAKO201912261946958")
    # every text node of a box, the English box first on the page, languages from the script
    assert item["abstracts"] == [("en", "We propose a method for summaries."),
                                 ("ko", KO + " 결과를 보였다.")]
    assert item["published"] == "2019-12-31"
    assert item["doi"] == "10.5392/JKCA.2019.19.12.001"
    assert item["keywords"] == ["요약"]
    assert item["pdf_url"] == "https://koreascience.kr/article/JAKO201912261946958.pdf"


def test_script_language_and_duplicate_languages_are_kept() -> None:
    assert script_language(KO + " (方法) with 3 English words") == "ko"
    assert script_language("A study of 데이터 in English") == "en"
    assert abstracts_by_language([["ko", "가"], ["ko", "나"], ["en", "x"]]) == {
        "ko": "가", "ko-2": "나", "en": "x"
    }


def test_pager_with_separators_and_absent_on_the_last_page() -> None:
    row = ('<article class="srched-box"><h3><a href="/article/JAKO201912261946958.page">t</a>'
           '</h3><div class="d-lg-flex justify-content-between align-items-center"><ul>'
           "<li>A;B</li><li><ul><li>Journal of Korean Data</li></ul></li><li><p>preview</p>"
           "</li></ul></div></article>")
    pager = ('<nav aria-label="Page Navigation"><ul><li class="list-inline-item float-right ">'
             "<span>2 / 1,234 pages</span></li></ul></nav>")
    page = f'<div id="search-result"><section>{row}</section>{pager}</div>'
    rows, found = parse_listing(_response(page.encode(), "text/html; charset=utf-8"))
    assert found == (2, 1234)
    assert rows == [{"id": "JAKO201912261946958", "journal": "Journal of Korean Data",
                     "preview": "preview",
                     "url": "https://koreascience.kr/article/JAKO201912261946958.page"}]
    last = f'<div id="search-result"><section>{row}</section></div>'
    assert parse_listing(_response(last.encode(), "text/html"))[1] is None


# -- whole builds -------------------------------------------------------------------------------


@pytest.fixture
def box() -> Iterator[Sandbox]:
    with Sandbox(docs=11, seed=4) as sandbox:
        yield sandbox


def _overrides(box: Sandbox) -> dict[str, Any]:
    overrides = box.koreascience.client_config()
    overrides["run"] = {"executor": "serial", "timeout": 30.0}
    overrides["filters"] = {"enabled": False}
    overrides["source"]["batch_size"] = 1
    return overrides


def _page_requests(box: Sandbox) -> Counter[str]:
    return Counter(e.path for e in box.server.requests("/koreascience/article/")
                   if e.path.endswith(".page") and e.status == 200)


def test_build_resumes_a_killed_crawl_without_refetching(box: Sandbox, tmp_path: Path) -> None:
    ks = box.koreascience
    # --limit stops discovery after three items: the crawl subprocess is killed mid-way.
    build("koreascience", tmp_path, None, None, _overrides(box), limit=3)
    state = State(tmp_path)
    try:
        committed = [r.candidate.source_id for r in state.rows("koreascience")]
    finally:
        state.close()
    assert len(committed) == 3
    assert build("koreascience", tmp_path, None, None, _overrides(box)) == 0
    assert_dataset_schema(tmp_path / "koreascience", KoreaScienceSource)
    pages = _page_requests(box)
    state = State(tmp_path)
    try:
        rows = {r.candidate.source_id: r for r in state.rows("koreascience")}
    finally:
        state.close()
    # pages whose items were committed before the kill are not fetched again
    assert all(pages[f"/koreascience/article/{i}.page"] == 1 for i in committed), pages
    by_variant = {a.variant: a for a in ks.articles.values()}
    assert f"/koreascience/article/{by_variant['no_preview'].article_id}.page" not in pages
    assert box.server.requests("/robots.txt")
    search = [e.status for e in box.server.requests("/koreascience/search/")]
    assert search[0] == 429 and 200 in search  # Retry-After honoured, then retried
    # every article but the empty-preview one became a candidate, Korean text decoded
    assert set(rows) == {a.article_id for a in ks.articles.values()} - {
        by_variant["no_preview"].article_id
    }
    for variant in ("euckr_header", "euckr_meta", "swapped"):
        article = by_variant[variant]
        assert rows[article.article_id].candidate.abstracts == dict(article.abstracts), variant
    assert rows[by_variant["en_only"].article_id].reason == "abstract_missing_in_metadata"
    assert rows[by_variant["no_pdf"].article_id].reason == "unavailable"
    assert rows[by_variant["html_pdf"].article_id].reason == "not_pdf"
    assert not any(e.path.endswith(f"{by_variant['en_only'].article_id}.pdf")
                   for e in box.server.requests("/koreascience/article/"))

    published = []
    for shard in sorted((tmp_path / "koreascience").glob("*.parquet")):
        published += pq.read_table(shard).to_pylist()
    assert published
    for row in published:
        assert row["lang_detected"] == "ko" and row["language"] == "ko"
        assert all(m["found"] for m in row["matches"])
        assert {m["lang"] for m in row["matches"]} == {a["lang"] for a in row["abstracts"]}
        # Hangul words keep their spacing through parsing
        assert sum(1 for w in row["article_words"] if any("가" <= c <= "힣" for c in w)) > 50
        assert all(len(w) < 40 for w in row["article_words"])
