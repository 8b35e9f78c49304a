"""KoreaScience's advanced search and article pages (HTML only, no API), from generated
Korean articles. Markup follows the selectors of the scrapers that used the site: result rows
`article.srched-box`, a `N / M pages` pager absent on the last page, untagged abstract boxes
split by `<br>`, pages served in UTF-8 or EUC-KR (by header, or by `<meta charset>` only).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.server import FakeService, Reply, Request, SandboxServer, retry_after
from loralay_build.sandbox.textgen import ProseGenerator

PREFIX = "/koreascience"
KOREAN_FONT = "HYSMyeongJo-Medium"  # reportlab's built-in CID font with Hangul
YEARS = (2019, 2020)

VARIANTS = (
    "euckr_header",  # Content-Type: text/html; charset=EUC-KR
    "euckr_meta",  # EUC-KR bytes, charset only in <meta>
    "swapped",  # English box first
    "ko_only",  # no English abstract
    "en_only",  # no Korean abstract: never downloaded
    "no_pdf",  # no contents-table link
    "html_pdf",  # the PDF link answers 200 with HTML
    "no_preview",  # empty preview in the listing: its page is never visited
    "throttled",  # the article page answers 503 + Retry-After once
)


@dataclass
class KoreaArticle:
    article_id: str
    year: int
    title: str
    journal: str
    abstracts: list[tuple[str, str]]  # (lang, text) in page order
    keywords: list[str]
    published: str
    spec: ArticleSpec
    variant: str = "plain"
    served: dict[str, int] = field(default_factory=dict)

    @cached_property
    def pdf(self) -> bytes:
        return render_article(self.spec)


class KoreaScienceSandbox(FakeService):
    def __init__(self, server: SandboxServer, n_docs: int = 24, seed: int = 7,
                 faults: bool = True) -> None:
        super().__init__(server, seed, faults)
        self.articles: dict[str, KoreaArticle] = {}
        self.page_size = 4
        variants = list(VARIANTS) if faults else []
        for i in range(n_docs):
            self._add(i, variants[i] if i < len(variants) else "plain")
        server.route(f"{PREFIX}/", self._serve)
        server.disallow(f"{PREFIX}/admin/")

    def client_config(self) -> dict[str, Any]:
        return {
            "source": {"search_url": f"{self.server.base_url}{PREFIX}/search/advanced.page",
                       "first_year": YEARS[0], "last_year": YEARS[-1],
                       "page_size": self.page_size, "download_delay": 0.0,
                       "retry_after_max": 2.0},
            "http": {"min_interval": 0.0, "backoff_base": 0.05, "backoff_max": 0.2},
        }

    # -- catalogue ---------------------------------------------------------------------------

    def _add(self, index: int, variant: str) -> None:
        gen = ProseGenerator(self.seed * 104_729 + index)
        rng = gen.rng
        year = YEARS[index % len(YEARS)]
        article_id = f"JAKO{year}{rng.randint(10**10, 10**11 - 1):011d}"
        ko = gen.paragraph("ko", rng.randint(4, 6))
        en = gen.paragraph("en", rng.randint(3, 5))
        abstracts = [("ko", ko), ("en", en)]
        if variant == "swapped":
            abstracts.reverse()
        elif variant == "ko_only":
            abstracts = [("ko", ko)]
        elif variant == "en_only":
            abstracts = [("en", en)]
        title = gen.title("ko")
        headings = {"ko": "초록", "en": "Abstract"}
        spec = ArticleSpec(
            title=title, authors=["김민준", "이서연"][: 1 + index % 2],
            abstracts=[(headings[lang], text) for lang, text in abstracts],
            sections=[(f"{n}. {gen.title('ko').split(' 분야의')[0]}",
                       [gen.paragraph("ko", rng.randint(5, 8)) for _ in range(rng.randint(2, 4))])
                      for n in range(1, rng.randint(3, 5))],
            columns=2 if index % 2 else 1,
            font=KOREAN_FONT,
        )
        self.articles[article_id] = KoreaArticle(
            article_id, year, title, f"Journal of the Korean Society of {index % 4 + 1}",
            abstracts, [gen.rng.choice(["데이터", "모형", "신호"]), "analysis"],
            f"{year}.{index % 12 + 1:02d}.{index % 27 + 1:02d}", spec, variant,
        )

    # -- pages -------------------------------------------------------------------------------

    def _serve(self, req: Request) -> Reply:
        path = req.path[len(PREFIX):]
        if path == "/search/advanced.page":
            return self._search(req)
        found = re.fullmatch(r"/article/([A-Z]{4}\d{15})\.(page|pdf)", path)
        article = self.articles.get(found.group(1)) if found else None
        if found is None or article is None:
            return Reply(404, b"<html><body>Not found</body></html>", {"Content-Type": "text/html"})
        with self._lock:
            key = found.group(2)
            seen = article.served.get(key, 0)
            article.served[key] = seen + 1
        if key == "pdf":
            if article.variant == "html_pdf":
                return Reply(200, "<html><body>로그인이 필요합니다</body></html>".encode(),
                             {"Content-Type": "text/html; charset=UTF-8"})
            return Reply(200, article.pdf, {"Content-Type": "application/pdf"})
        if article.variant == "throttled" and seen == 0:
            return Reply(503, b"Service Unavailable", {"Retry-After": retry_after()})
        return self._article_page(article)

    def _search(self, req: Request) -> Reply:
        call = self._calls.next("search")
        if self.faults and call == 1:
            return Reply(429, b"Too Many Requests", {"Retry-After": retry_after()})
        year = int(req.arg("pubYr", "0") or 0)
        size = int(req.arg("pageSize", "10"))
        page = int(req.arg("pageNo", "1"))
        matches = [a for a in self.articles.values()
                   if a.year == year and "korean" in req.arg("pubs").lower()]
        pages = max(1, -(-len(matches) // size))
        rows = "".join(self._row(a) for a in matches[(page - 1) * size : page * size])
        pager = (
            f'<nav aria-label="Page Navigation"><ul class="list-inline">'
            f'<li class="list-inline-item float-right "><span>{page:,} / {pages:,} pages</span>'
            f"</li></ul></nav>" if page < pages else ""
        )
        body = (f'<html><head><meta charset="utf-8"></head><body><div id="search-result">'
                f"<section>{rows}</section>{pager}</div></body></html>")
        return Reply(200, body.encode(), {"Content-Type": "text/html; charset=UTF-8"})

    @staticmethod
    def _row(article: KoreaArticle) -> str:
        preview = html.escape(article.abstracts[0][1][:80])
        if article.variant == "no_preview":
            preview = ""
        return (
            f'<article class="srched-box"><h3 class="h4"><a class="u-link-v5" '
            f'href="{PREFIX}/article/{article.article_id}.page">{html.escape(article.title)}</a>'
            f'</h3><div class="d-lg-flex justify-content-between align-items-center">'
            f'<ul class="list-unstyled"><li class="list-item">김민준;이서연</li>'
            f'<li class="list-item"><ul><li>{article.journal}</li><li>v.32 no.2</li>'
            f"<li>{article.year}</li></ul></li>"
            f'<li class="list-item"><p>{preview}</p></li></ul></div></article>'
        )

    @staticmethod
    def _licence(article: KoreaArticle) -> str:
        """Some journals state a Creative Commons licence on the article page; most do not."""
        if sum(map(ord, article.article_id)) % 3:
            return ""
        return ('<p class="license"><a rel="license" '
                'href="http://creativecommons.org/licenses/by-nc/4.0/">CC BY-NC 4.0</a></p>')

    def _article_page(self, article: KoreaArticle) -> Reply:
        boxes = ""
        for _lang, text in article.abstracts:
            words = html.escape(text).split(" ")
            half = len(words) // 2  # `<br>` splits a paragraph into several text nodes
            boxes += (f'<div class="article-box"><h4>Abstract</h4><p>{" ".join(words[:half])}'
                      f'<br>{" ".join(words[half:])}</p></div>')
        keywords = "".join(f'<li><a href="#">{k}</a></li>' for k in article.keywords)
        pdf = ("" if article.variant == "no_pdf" else
               f'<div class="contents-table"><a href="/koreascience/article/'
               f'{article.article_id}.pdf">PDF</a></div>')
        encoding = "euc-kr" if article.variant.startswith("euckr") else "utf-8"
        meta = f'<meta charset="{encoding}">' if article.variant != "euckr_header" else ""
        page = (
            f"<html><head>{meta}<title>{html.escape(article.title)}</title></head><body>"
            f'<div id="article-view"><h1 class="h2">{html.escape(article.title)}</h1>'
            f'<ul class="list-inline"><li class="list-inline-item">Published : '
            f"{article.published}</li></ul>"
            f'<a class="btn btn-link pl0" href="https://doi.org/10.7776/{article.article_id}">'
            f"DOI</a>{boxes}"
            f'<div class="article-box"><h4>Keywords</h4><ul>{keywords}</ul></div>{pdf}'
            f"{self._licence(article)}"
            f"</div></body></html>"
        )
        content_type = ("text/html; charset=EUC-KR" if article.variant == "euckr_header"
                        else "text/html")
        return Reply(200, page.encode(encoding), {"Content-Type": content_type})
