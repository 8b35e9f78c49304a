"""SciELO collection websites: listing pages -> issue tables of contents -> article pages.

Links are followed in the sites' own URL space and requested through `url_rewrite` (the
HTTP client's mirror table), so items carry the public URLs the API route also yields.
Classic article pages (`scielo.php?script=sci_arttext`) give the `citation_*` metadata and
one PDF per language; their abstracts come from one `sci_abstract&tlng=<l>` page per language
listed in the table of contents. New-site pages (`/j/<acronym>/a/<id>/`, where the legacy
URLs redirect) carry every abstract block themselves. The PID is the one of the followed
`pid=` link, so both routes share ids. Pages are decoded by header, then `<meta>` (many
classic pages are ISO-8859-1).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from parsel import Selector
from scrapy import Request, Spider
from scrapy.http import Response

PID = re.compile(r"^S\d{4}-\d{3}[\dXx]\d{13}$")
LISTING_SCRIPTS = ("sci_alphabetic", "sci_serial", "sci_issues", "sci_issuetoc")
SECTION_LANGS = {"resumo": "pt", "abstract": "en", "resumen": "es"}
KEYWORD_LINE = re.compile(r"^\s*(key\s*words|palavras[- ]chave|palabras[- ]clave)\b", re.I)
DATE = re.compile(r"^(\d{1,2})/(\d{4})$")


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def block_text(block: Selector) -> str:
    """Every text node of a block, `<br>` as a space, whitespace collapsed."""
    parts = [node.root if isinstance(node.root, str) else " "
             for node in block.xpath(".//text() | .//br")]
    return " ".join("".join(parts).split())


def site_date(value: str) -> str:
    """`citation_date` (`MM/YYYY`, `00` = unknown) as YYYYMM; other forms unchanged."""
    found = DATE.match(value.strip())
    return f"{found.group(2)}{int(found.group(1)):02d}" if found else value.strip()


def parse_toc(response: Response, base: str, host: str) -> tuple[list[str], dict[str, list[str]]]:
    """Listing links to follow, and PID -> abstract languages of the articles on the page."""
    listings: list[str] = []
    articles: dict[str, list[str]] = {}
    for href in response.xpath("//a/@href").getall():
        url = urljoin(base, href.strip())
        if urlsplit(url).hostname != host:
            continue
        args = query(url)
        script, pid = args.get("script", ""), args.get("pid", "")
        if script in LISTING_SCRIPTS and script != "sci_alphabetic":
            listings.append(url)
        elif script in ("sci_arttext", "sci_abstract") and PID.match(pid):
            langs = articles.setdefault(pid, [])
            lang = args.get("tlng", "").lower()
            if script == "sci_abstract" and lang and lang not in langs:
                langs.append(lang)
    return listings, articles


def parse_article(response: Response, pid: str, base: str) -> dict[str, Any]:
    """Metadata of an article page of either shape (`base`: its public URL); new-site pages
    include their abstracts."""
    meta = {name: response.xpath(f'//meta[@name="{name}"]/@content').get("").strip()
            for name in ("citation_title", "citation_doi", "citation_date",
                         "citation_publication_date", "citation_language")}
    pdfs: dict[str, str] = {}
    language = ""
    for tag in response.xpath('//meta[@name="citation_pdf_url"]'):
        content = tag.attrib.get("content", "").strip()
        url = urljoin(base, content)
        lang = (tag.attrib.get("language") or query(url).get("lang", "")).lower()
        if content and lang:
            pdfs.setdefault(lang, url)
            if tag.attrib.get("default") == "true":
                language = lang
    for href in response.xpath('//a[contains(@href, "format=pdf")]/@href').getall():
        url = urljoin(base, href.strip())
        if (lang := query(url).get("lang", "").lower()):
            pdfs.setdefault(lang, url)
    sections = response.xpath('//div[contains(concat(" ", normalize-space(@class), " "),'
                              ' " articleSection ")]')
    abstracts: list[tuple[str, str]] = []
    for section in sections:
        kind = next((k for k in SECTION_LANGS
                     if f"articleSection--{k}" in section.attrib.get("class", "")), "")
        lang = (section.attrib.get("lang") or SECTION_LANGS.get(kind, "")).lower()
        text = " ".join(block_text(p) for p in section.xpath("./p"))
        if kind and lang and text:
            abstracts.append((lang, text))
    return {
        "pid": pid, "title": meta["citation_title"], "doi": meta["citation_doi"],
        "published": site_date(meta["citation_publication_date"] or meta["citation_date"]),
        "language": (meta["citation_language"] if sections else language).lower(),
        "pdf_urls": pdfs, "abstracts": abstracts, "new_site": bool(sections),
        "encoding": getattr(response, "encoding", ""),
    }


def parse_abstract_page(response: Response, lang: str) -> str:
    """The abstract of a `sci_abstract` page: its `index,<lang>` block after the heading and
    the bibliographic line, keyword lines left out."""
    block = response.xpath(f'//div[@class="index,{lang}"]')
    paragraphs = [block_text(p) for p in block.xpath("./p[position() > 1]")]
    return " ".join(p for p in paragraphs if p and not KEYWORD_LINE.match(p))


class SciELOSiteSpider(Spider):
    """Listing pages per collection, then the article pages not yet in the state database."""

    name = "scielo_site"

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.skip = set(config.get("skip", []))
        self.hosts: dict[str, str] = dict(config["hosts"])
        self.rewrite: dict[str, str] = dict(config.get("url_rewrite", {}))

    def _request(self, url: str, callback: Any, **kwargs: Any) -> Request:
        """A request for the public `url`, sent to its mirror when one is configured."""
        physical = next((repl + url[len(prefix):] for prefix, repl in self.rewrite.items()
                         if url.startswith(prefix)), url)
        return Request(physical, callback=callback, cb_kwargs={"url": url, **kwargs})

    async def start(self) -> Any:
        for collection, urls in self.config["listings"].items():
            for url in urls:
                yield self._request(url, self.parse_listing, collection=collection)

    def parse_listing(self, response: Response, url: str,
                      collection: str) -> Iterator[Request]:
        listings, articles = parse_toc(response, url, self.hosts[collection])
        for listing in listings:
            yield self._request(listing, self.parse_listing, collection=collection)
        for pid, langs in articles.items():
            if f"scielo:{collection}:{pid}" in self.skip:
                continue
            article = (f"http://{self.hosts[collection]}/scielo.php?script=sci_arttext"
                       f"&pid={pid}&lng=en&nrm=iso")
            yield self._request(article, self.parse_article, collection=collection,
                                langs=langs)

    def parse_article(self, response: Response, url: str, collection: str,
                      langs: list[str]) -> Iterator[Request | dict[str, Any]]:
        public = self._public(response.url)
        item = parse_article(response, query(url)["pid"], public)
        item.update(collection=collection, url=public)
        if item["new_site"]:
            yield item
            return
        yield from self._next_abstract(item, list(langs))

    def parse_abstract(self, response: Response, url: str, item: dict[str, Any], lang: str,
                       rest: list[str]) -> Iterator[Request | dict[str, Any]]:
        if (text := parse_abstract_page(response, lang)):
            item["abstracts"].append((lang, text))
        yield from self._next_abstract(item, rest)

    def _next_abstract(self, item: dict[str, Any],
                       rest: list[str]) -> Iterator[Request | dict[str, Any]]:
        """One `sci_abstract` page after the other; the item once every language is read."""
        if not rest:
            yield item
            return
        lang = rest[0]
        page = (f"http://{self.hosts[item['collection']]}/scielo.php?script=sci_abstract"
                f"&pid={item['pid']}&lng=en&nrm=iso&tlng={lang}")
        yield self._request(page, self.parse_abstract, item=item, lang=lang, rest=rest[1:])

    def _public(self, physical: str) -> str:
        """The public URL of a mirrored one (a redirect's target)."""
        for prefix, replacement in self.rewrite.items():
            if physical.startswith(replacement):
                return prefix + physical[len(replacement):]
        return physical
