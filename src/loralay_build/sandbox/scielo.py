"""SciELO's ArticleMeta API (identifiers, article records, change history) and the collection
sites (PDFs, the `sci_pdf` interstitial, and the HTML pages of `scielo_site`), from generated
articles.

Record shapes follow the recorded ArticleMeta answers: ISIS fields (`v40`, `v83`, `v12`,
`v65`, `v702`...), `fulltexts.pdf` keyed by language (absent on some records), abstracts that
start with their heading or carry numeric and double-encoded entities.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from typing import Any

from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.scielo_site import SciELOSite, pid_v3
from loralay_build.sandbox.server import FakeService, Reply, Request, SandboxServer
from loralay_build.sandbox.textgen import ProseGenerator

HOSTS = {
    "ecu": "scielo.senescyt.gob.ec", "col": "www.scielo.org.co", "pry": "scielo.iics.una.py",
    "ury": "www.scielo.edu.uy", "bol": "www.scielo.org.bo", "per": "www.scielo.org.pe",
    "prt": "www.scielo.pt", "esp": "scielo.isciii.es", "scl": "www.scielo.br",
}
ES_COLLECTIONS = ("ecu", "col", "pry", "ury", "bol", "per", "esp")
PT_COLLECTIONS = ("scl", "prt")
HEADINGS = {"es": "RESUMEN", "pt": "RESUMO", "en": "ABSTRACT"}
PROCESSING_EPOCH = date(2020, 1, 1)
JSON_HEADERS = {"Content-Type": "application/json"}

# How a record is shaped or served (the first ones appear once each when faults are on).
VARIANTS = (
    "heading",  # every abstract starts with its heading and two spaces
    "entities",  # numeric entities, one of them double-encoded
    "no_fulltexts",  # no `fulltexts`: the PDF URL is built from v4 + v702
    "v720",  # no `fulltexts`, old-style full-text links in v720
    "interstitial",  # fulltexts.pdf is the sci_pdf HTML page; the article page names the PDF
    "english",  # v40 = en: belongs to neither dataset
    "no_main_abstract",  # only an English abstract
    "mismatch",  # declared Spanish/Portuguese, printed in the other language
    "missing",  # the PDF answers 404
)


@dataclass
class SciELOArticle:
    pid: str
    collection: str
    lang: str
    processed: str  # processing_date, YYYY-MM-DD
    record: dict[str, Any]
    spec: ArticleSpec
    variant: str = "plain"
    events: list[tuple[str, str]] = field(default_factory=list)  # (timestamp, event)
    abstracts: dict[str, str] = field(default_factory=dict)  # plain text, as the sites show it

    @cached_property
    def pdf(self) -> bytes:
        return render_article(self.spec)


class SciELOSandbox(FakeService):
    """Generates articles in the paper's nine collections and serves ArticleMeta + sites."""

    def __init__(self, server: SandboxServer, n_docs: int = 24, seed: int = 7,
                 faults: bool = True) -> None:
        super().__init__(server, seed, faults)
        self.articles: dict[str, SciELOArticle] = {}
        self.reverse = False  # serve identifier listings in reverse order (index reshuffled)
        self._day = 0
        self._last = datetime(2000, 1, 1)
        variants = list(VARIANTS) if faults else []
        for i in range(n_docs):
            self.add_article(i, variants[i] if i < len(variants) else "plain")
        server.route("/api/v1/article/identifiers/", self._identifiers)
        server.route("/api/v1/article/history/", self._history)
        server.route("/api/v1/article/", self._article)
        server.route("/_scielo/", self._site)
        self.site = SciELOSite(self.articles, HOSTS, server.base_url)
        for host in HOSTS.values():
            server.disallow(f"/_scielo/{host}/cgi-bin/")

    # -- configuration for clients -----------------------------------------------------------

    def client_config(self) -> dict[str, Any]:
        base = self.server.base_url
        return {
            "source": {
                "articlemeta_url": f"{base}/api/v1/", "page_size": 5, "from": "2019-01-01",
                "site_listings": {
                    c: [f"http://{h}/scielo.php?script=sci_alphabetic&lng=en&nrm=iso"]
                    for c, h in HOSTS.items()
                },
                "download_delay": 0.0, "retry_after_max": 2.0,
            },
            "http": {
                "url_rewrite": {f"{scheme}://{h}/": f"{base}/_scielo/{h}/"
                                for h in HOSTS.values() for scheme in ("http", "https")},
                "min_interval": 0.0, "host_intervals": {},
            },
        }

    # -- catalogue ---------------------------------------------------------------------------

    def add_articles(self, n: int) -> list[str]:
        """Publish `n` new regular articles, processed after everything already served."""
        start = 1000 + len(self.articles)
        return [self.add_article(start + i, "plain") for i in range(n)]

    def delete(self, pid: str) -> None:
        with self._lock:
            self.articles[pid].events.append((self._stamp(), "delete"))

    def _stamp(self) -> str:
        """The server's clock (UTC), strictly increasing, in the history's format."""
        now = datetime.now(UTC).replace(tzinfo=None)
        self._last = max(now, self._last + timedelta(microseconds=1))
        return self._last.isoformat(timespec="microseconds")

    def add_article(self, index: int, variant: str) -> str:
        with self._lock:
            self._day += 1
            day = self._day
        pool = PT_COLLECTIONS if index % 2 else ES_COLLECTIONS  # alternate the two datasets
        collection = pool[index // 2 % len(pool)]
        gen = ProseGenerator(self.seed * 7919 + index)
        rng = gen.rng
        lang = "pt" if collection in ("prt", "scl") else "es"
        other = "es" if lang == "pt" else "pt"
        declared = "en" if variant == "english" else lang
        printed = other if variant == "mismatch" else lang
        year = 2008 + index % 13
        issn = f"{1000 + index % 97:04d}-{2000 + index:04d}"[:9]
        pid = f"S{issn}{year}{index % 9 + 1:04d}{index % 90 + 1:05d}"
        acronym = f"r{collection}{index % 5}"
        issue = f"v{year - 1990}n{index % 4 + 1}"
        stem = f"{index % 90 + 1:02d}"
        abstracts = {declared: gen.paragraph(printed if declared != "en" else "en",
                                             rng.randint(4, 6))}
        abstracts["en"] = abstracts.get("en") or gen.paragraph("en", rng.randint(3, 5))
        if index % 3 == 0 and declared != "en":
            abstracts[other] = gen.paragraph(other, rng.randint(3, 5))
        if variant == "no_main_abstract":
            abstracts = {"en": abstracts["en"]}
        title = gen.title(printed)
        v83 = [{"l": lng, "a": self._shown(text, lng, variant)} for lng, text in abstracts.items()]
        v83.append({"l": "fr", "_": ""})  # entries without `a` exist
        host = HOSTS[collection]
        month = index % 12 + 1
        article: dict[str, Any] = {
            "v40": [{"_": declared}],
            "v880": [{"_": pid}],
            "v12": [{"l": declared, "_": title}, {"l": "en", "t": gen.title("en")}],
            "v65": [{"_": f"{year}{month:02d}00" if index % 4 else f"{year}0000"}],
            "v71": [{"_": "oa"}],
            "v83": v83,
            "v4": [{"_": issue}],
            "v702": [{"_": f"V:\\Scielo\\serial\\{acronym}\\{issue}\\markup\\{stem}.htm"}],
            "v992": [{"_": collection}],
        }
        if index % 5 == 2:
            article["v223"] = [{"_": f"{year}{month:02d}{index % 27 + 1:02d}"}]
        pdf_url = f"http://{host}/pdf/{acronym}/{issue}/{stem}.pdf"
        record: dict[str, Any] = {
            "code": pid, "collection": collection,
            "doi": f"10.{4000 + index % 50}/{pid}" if index % 6 else "",
            "publication_year": str(year),
            "processing_date": str(PROCESSING_EPOCH + timedelta(days=day)),
            "license": "by" if index % 2 else "by-nc",
            "title": {"v68": [{"_": acronym.upper()}]},
            "article": article,
        }
        if variant == "v720":
            article["v720"] = [{"f": "pdf", "l": declared, "u": pdf_url}]
        elif variant == "interstitial":
            record["fulltexts"] = {"pdf": {declared: self._sci_pdf(host, pid, declared)}}
        elif variant != "no_fulltexts":
            record["fulltexts"] = {
                "pdf": {declared: pdf_url, "en": f"http://{host}/pdf/{acronym}/{issue}/en_{stem}.pdf"},
                "html": {declared: f"http://{host}?script=sci_arttext&pid={pid}&tlng={declared}"},
            }
        printed_abstracts = [(HEADINGS[printed if lng == declared and lng != "en" else lng], text)
                             for lng, text in abstracts.items()]
        spec = ArticleSpec(
            title=title, authors=gen.authors(), abstracts=printed_abstracts,
            sections=[
                (f"{n}. {gen.title(printed).split(' de')[0]}",
                 [gen.paragraph(printed, rng.randint(5, 8)) for _ in range(rng.randint(2, 4))])
                for n in range(1, rng.randint(3, 6))
            ],
            columns=2 if index % 2 else 1,
            running_header=f"{acronym.upper()} {issue}",
        )
        item = SciELOArticle(pid, collection, declared, record["processing_date"], record,
                             spec, variant, abstracts={
                                 lng: text for lng, text in abstracts.items()})
        with self._lock:
            item.events.append((self._stamp(), "add"))
            self.articles[pid] = item
        return pid

    @staticmethod
    def _shown(text: str, lang: str, variant: str) -> str:
        """The abstract as the record stores it (heading prefix, entities)."""
        if variant == "heading":
            return f"{HEADINGS[lang]}  {text}"
        if variant == "entities":
            encoded = html.escape(text).replace("á", "&#225;").replace("ó", "&#243;")
            return encoded.replace("é", "&amp;#233;")
        return text

    @staticmethod
    def _sci_pdf(host: str, pid: str, lang: str) -> str:
        return f"http://{host}/scielo.php?script=sci_pdf&pid={pid}&lng={lang}&nrm=iso&tlng={lang}"

    # -- ArticleMeta ---------------------------------------------------------------------------

    def _paging(self, req: Request) -> tuple[int, int] | Reply:
        try:
            limit, offset = int(req.arg("limit", "1000")), int(req.arg("offset", "0"))
        except ValueError:
            return Reply(400, b"offset and limit must be integers", {"Content-Type": "text/plain"})
        if limit <= 0 or offset < 0:
            return Reply(400, b"invalid limit or offset", {"Content-Type": "text/plain"})
        return min(limit, 1000), offset

    def _identifiers(self, req: Request) -> Reply:
        paging = self._paging(req)
        if isinstance(paging, Reply):
            return paging
        limit, offset = paging
        low, high = req.arg("from", "1500-01-01"), req.arg("until", "9999-12-31")
        with self._lock:
            rows = sorted(
                (a for a in self.articles.values()
                 if a.collection == req.arg("collection", a.collection)
                 and low <= a.processed <= high and a.events[-1][1] != "delete"),
                key=lambda a: (a.processed, a.pid), reverse=self.reverse,
            )
        objects = [{"code": a.pid, "collection": a.collection, "doi": a.record["doi"],
                    "processing_date": a.processed} for a in rows[offset:offset + limit]]
        meta = {"filter": {"processing_date": {"$lte": high, "$gte": low}},
                "limit": limit, "offset": offset}
        return Reply(200, json.dumps({"meta": meta, "objects": objects}).encode(), JSON_HEADERS)

    def _history(self, req: Request) -> Reply:
        paging = self._paging(req)
        if isinstance(paging, Reply):
            return paging
        limit, offset = paging
        low = req.arg("from", "1500-01-01T00:00:00")
        with self._lock:
            events = sorted(
                (stamp, a.pid, event, a.collection)
                for a in self.articles.values() for stamp, event in a.events
                if a.collection == req.arg("collection", a.collection) and stamp > low
            )
        objects = [{"date": s, "code": p, "event": e, "collection": c}
                   for s, p, e, c in events[offset:offset + limit]]
        meta = {"filter": {"date": {"$gt": low}}, "total": len(events), "limit": limit,
                "offset": offset}
        return Reply(200, json.dumps({"meta": meta, "objects": objects}).encode(), JSON_HEADERS)

    def _article(self, req: Request) -> Reply:
        if req.arg("body", "false") not in ("true", "false"):
            return Reply(400, b"body must be true or false", {"Content-Type": "text/plain"})
        article = self.articles.get(req.arg("code"))
        if article is None or article.collection != req.arg("collection", article.collection):
            return Reply(200, b"null", JSON_HEADERS)
        body = json.dumps(article.record, ensure_ascii=False).encode()
        return Reply(200, body, {"Content-Type": "application/json; charset=utf-8"})

    # -- collection sites --------------------------------------------------------------------

    def _site(self, req: Request) -> Reply:
        match = re.fullmatch(r"/_scielo/([^/]+)/(.*)", req.path)
        if not match:
            return Reply(404, b"not found")
        host, rest = match.groups()
        if rest == "scielo.php":
            return self._classic(host, req)
        new_page = re.fullmatch(r"j/([^/]+)/a/([A-Za-z0-9]{23})/", rest)
        if new_page:
            article = next((a for a in self.articles.values()
                            if pid_v3(a.pid) == new_page.group(2)), None)
            pdf = article.pdf if article is not None and article.variant != "missing" else None
            return self.site.new_page(host, new_page.group(1), new_page.group(2), req, pdf)
        found = re.fullmatch(r"pdf/([^/]+)/([^/]+)/([^/]+)\.pdf", rest)
        article = next(
            (a for a in self.articles.values() if found and HOSTS[a.collection] == host
             and f"\\{found.group(1)}\\{found.group(2)}\\markup\\{found.group(3)}.htm"
             in a.record["article"]["v702"][0]["_"]),
            None,
        )
        if article is None or article.variant == "missing":
            return Reply(404, b"<html><body>Not Found</body></html>", {"Content-Type": "text/html"})
        return Reply(200, article.pdf, {"Content-Type": "application/pdf"})

    def _classic(self, host: str, req: Request) -> Reply:
        if req.arg("script") in ("sci_alphabetic", "sci_issues", "sci_issuetoc"):
            return self.site.listing(host, req)
        article = self.articles.get(req.arg("pid"))
        if article is None:
            return Reply(404, b"<html><body>Not Found</body></html>", {"Content-Type": "text/html"})
        record = article.record["article"]
        acronym, issue = record["v702"][0]["_"].split("\\")[3:5]
        stem = record["v702"][0]["_"].rsplit("\\", 1)[1].removesuffix(".htm")
        pdf = f"http://{host}/pdf/{acronym}/{issue}/{stem}.pdf"
        if req.arg("script") == "sci_pdf":
            page = (f'<html><head><script>setTimeout(function(){{window.location="{pdf}"}},5000)'
                    f"</script></head><body>Loading PDF...</body></html>")
            return Reply(200, page.encode(), {"Content-Type": "text/html; charset=utf-8"})
        return self.site.article(host, req, pdf)
