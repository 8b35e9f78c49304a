"""KoreaScience: the advanced search per publication year, then each article page.

Pages are decoded by Scrapy from the Content-Type header, then `<meta charset>`, so UTF-8
and EUC-KR/CP949 pages both arrive as text. Abstract boxes carry no language: it is taken
from the script (share of Hangul syllables), and two boxes of one language both survive.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from scrapy import Request, Spider
from scrapy.http import Response

ROWS = '//div[@id="search-result"]/section/article[contains(@class, "srched-box")]'
ARTICLE_ID = re.compile(r"/article/([A-Za-z_0-9.-]+)\.page")
PAGER = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+)\s*/\s*(\d{1,3}(?:,\d{3})+|\d+)\s*pages")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
LETTER = re.compile(r"\w")
KOREAN_SHARE = 0.3
LABELS = {"abstract": ("Abstract", "초록"), "keywords": ("Keywords", "키워드"),
          "published": ("Published", "발행")}


def script_language(text: str) -> str:
    """`ko` when Hangul syllables make up at least 30 % of the letters, else `en`."""
    letters = len(LETTER.findall(text))
    return "ko" if letters and len(HANGUL.findall(text)) / letters >= KOREAN_SHARE else "en"


def _box_xpath(kind: str) -> str:
    tests = " or ".join(f'contains(normalize-space(.), "{label}")' for label in LABELS[kind])
    classes = 'concat(" ", normalize-space(@class), " ")'
    return f'//div[contains({classes}, " article-box ")][h4[{tests}]]'


def parse_listing(response: Response) -> tuple[list[dict[str, str]], tuple[int, int] | None]:
    """Result rows (id, url, journal, preview) and the pager (page, pages), None when absent."""
    rows = []
    for box in response.xpath(ROWS):
        href = box.xpath("./h3/a/@href").get("")
        found = ARTICLE_ID.search(href)
        if not found:
            continue
        items = box.xpath('.//div[contains(@class, "d-lg-flex")]/ul/li')
        journal = items[1].xpath("./ul/li[1]//text()").get("") if len(items) > 1 else ""
        preview = " ".join(items[2].xpath("./p//text()").getall()) if len(items) > 2 else ""
        rows.append({"id": found.group(1), "url": response.urljoin(href),
                     "journal": journal.strip(), "preview": " ".join(preview.split())})
    pager = None
    text = " ".join(response.xpath(
        '//nav[@aria-label="Page Navigation"]//li[contains(@class, "float-right")]/span//text()'
    ).getall())
    if (found := PAGER.search(text)):
        pager = (int(found.group(1).replace(",", "")), int(found.group(2).replace(",", "")))
    return rows, pager


def parse_article(response: Response, article_id: str) -> dict[str, Any]:
    """Every field the source needs from an article page; abstracts as (language, text)."""
    abstracts: list[tuple[str, str]] = []
    for box in response.xpath(_box_xpath("abstract")):
        text = " ".join(" ".join(box.xpath("./p//text()").getall()).split())
        if text.strip():
            abstracts.append((script_language(text), text.strip()))
    keywords = [k.strip() for k in response.xpath(_box_xpath("keywords") + "/ul/li/a//text()")
                .getall() if k.strip()]
    published = ""
    for item in response.xpath('//ul[contains(@class, "list-inline")]/li//text()').getall():
        if any(label in item for label in LABELS["published"]):
            published = item.split(":", 1)[-1].strip()
    pdf = response.xpath('//div[@class="contents-table"]/a/@href').get("")
    doi = response.xpath('//a[@class="btn btn-link pl0"]/@href').get("")
    title = " ".join(response.xpath("//h1//text()").getall()).strip()
    licence = (response.xpath('//a[@rel="license"]/@href').get("")
               or response.xpath('//meta[translate(@name, "DCRIGHTS", "dcrights")="dc.rights"]'
                                 "/@content").get(""))
    return {
        "id": article_id, "url": response.url, "title": " ".join(title.split()),
        "abstracts": abstracts, "keywords": keywords,
        "published": published.replace(".", "-"),
        "doi": re.sub(r"^https?://(dx\.)?doi\.org/", "", doi.strip()),
        "pdf_url": response.urljoin(pdf) if pdf.strip() else "",
        "licence": licence.strip(),
        "encoding": getattr(response, "encoding", ""),
    }


class KoreaScienceSpider(Spider):
    """Listing pages per year, article pages not yet in the state database."""

    name = "koreascience"

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.skip = set(config.get("skip", []))

    def _listing(self, year: int, page: int) -> Request:
        query = urlencode({"pubs": self.config.get("publisher", "korean"), "pubYr": year,
                           "pageSize": self.config.get("page_size", 50), "pageNo": page,
                           "lang": "en"})
        return Request(f"{self.config['search_url']}?{query}", callback=self.parse_listing,
                       cb_kwargs={"year": year, "page": page})

    async def start(self) -> Any:
        for year in range(int(self.config["first_year"]), int(self.config["last_year"]) + 1):
            yield self._listing(year, 1)

    def parse_listing(self, response: Response, year: int,
                      page: int) -> Iterator[Request | dict[str, Any]]:
        rows, pager = parse_listing(response)
        if not rows and pager is not None and pager[1] > 0:
            yield {"error": "layout", "url": response.url,
                   "detail": "the pager reports results but no result row was recognised"}
            return
        for row in rows:
            if not row["preview"] or row["id"] in self.skip:
                continue
            yield Request(row["url"], callback=self.parse_article,
                          cb_kwargs={"row": row, "year": year})
        if pager is not None and pager[0] < pager[1]:
            yield self._listing(year, page + 1)

    def parse_article(self, response: Response, row: dict[str, str],
                      year: int) -> Iterator[dict[str, Any]]:
        item = parse_article(response, row["id"])
        item.update(journal=row["journal"], year=year)
        yield item
