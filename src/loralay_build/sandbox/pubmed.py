"""PMC's services over generated biomedical articles: OAI-PMH (`pmc_fm`, namespaced JATS front
matter) and the PMC Cloud Service bucket (S3 listing, per-version metadata JSON, PDFs).

Articles carry structured abstracts, Author Summaries, a French `trans-abstract`, MathML,
character references and `%`/`&`/`~`/`$` in their text. Faults (with `faults` on): OAI 503 +
Retry-After and an expired resumption token (once each), a deleted header, and cloud records
that are retracted, not open access, without a PDF, or whose PDF does not match its MD5.
Full-text failures are set per article by tests: a bucket `.xml` that is missing (S3's 404
NoSuchKey) or corrupt (bytes that fail the metadata's MD5), and a `pmc` GetRecord that PMC
does not disseminate or does not know yet.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from loralay_build.sandbox import oai
from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.pubmed_jats import FakeRef, back_xml, body_xml
from loralay_build.sandbox.server import FakeService, Reply, Request, SandboxServer
from loralay_build.sandbox.textgen import ProseGenerator

CLOUD_HOST = "pmc-oa-opendata.s3.amazonaws.com"
JATS_NS = "https://jats.nlm.nih.gov/ns/archiving/1.3/"
MML_NS = "http://www.w3.org/1998/Math/MathML"
BEHAVIOURS = ("ok", "retracted", "not_oa", "no_pdf", "md5_mismatch", "two_versions")
LABELS = ("Background", "Methods", "Results", "Conclusions")
PAGE_SIZE = 3
FIRST_PMCID = 5_000_001
FIRST_CITED_ONLY = 7_000_001
CITED_ONLY = 4


@dataclass
class Article:
    pmcid: int
    datestamp: str
    published: date
    title: str
    authors: list[str]
    sections: list[tuple[str, str]]  # abstract (label, text) pairs; one with label "" if plain
    jats_extra: str  # MathML / character-reference sentence, as JATS
    printed_extra: str  # the same sentence as the PDF prints it
    summary: str  # Author Summary ("" = none)
    french: str  # trans-abstract ("" = none; never printed)
    body: list[tuple[str, list[str]]]
    behaviour: str = "ok"
    split: str = ""
    deleted: bool = False
    refs: list[FakeRef] = field(default_factory=list)
    bmc: bool = False
    pdf_cache: bytes = field(default=b"", repr=False)

    @property
    def name(self) -> str:
        return f"PMC{self.pmcid}"

    @property
    def versions(self) -> list[int]:
        return [1, 2] if self.behaviour == "two_versions" else [1]

    def printed_abstract(self) -> str:
        text = " ".join(f"{label}: {t}" if label else t for label, t in self.sections)
        return f"{text} {self.printed_extra}"

    def pdf(self) -> bytes:
        if not self.pdf_cache:
            abstracts = [("Abstract", self.printed_abstract())]
            if self.summary:
                abstracts.append(("Author Summary", self.summary))
            self.pdf_cache = render_article(ArticleSpec(
                title=self.title, authors=self.authors, abstracts=abstracts,
                sections=self.body, columns=1 + self.pmcid % 2,
                running_header=f"PLoS One | www.plosone.org | {self.published.year}",
            ))
        return self.pdf_cache

    def jats(self, full: bool = False) -> str:
        if len(self.sections) == 1 and not self.sections[0][0]:
            main = f"<p>{escape(self.sections[0][1])} {self.jats_extra}</p>"
        else:
            main = "".join(f"<sec><title>{label}</title><p>{escape(t)}</p></sec>"
                           for label, t in self.sections[:-1])
            label, last = self.sections[-1]
            main += f"<sec><title>{label}</title><p>{escape(last)} {self.jats_extra}</p></sec>"
        summary = (f'<abstract abstract-type="summary"><title>Author Summary</title>'
                   f"<p>{escape(self.summary)}</p></abstract>") if self.summary else ""
        french = (f'<trans-abstract xml:lang="fr"><title>Résumé</title><p>{escape(self.french)}'
                  "</p></trans-abstract>") if self.french else ""
        journal, publisher = (("BMC Biology", "BioMed Central") if self.bmc
                              else ("PLoS ONE", "Public Library of Science"))
        rest = body_xml(self.body) + back_xml(self.refs) if full else ""
        return (
            f'<article xmlns="{JATS_NS}" xmlns:mml="{MML_NS}" article-type="research-article" '
            'xml:lang="en"><front><journal-meta><journal-title-group><journal-title>'
            f"{journal}</journal-title></journal-title-group><publisher><publisher-name>"
            f"{publisher}</publisher-name></publisher></journal-meta><article-meta>"
            f'<article-id pub-id-type="pmid">{self.pmcid + 20_000_000}</article-id>'
            f'<article-id pub-id-type="pmc">{self.pmcid}</article-id>'
            f'<article-id pub-id-type="doi">10.1371/journal.pone.{self.pmcid:07d}</article-id>'
            f"<title-group><article-title>{escape(self.title)}</article-title></title-group>"
            f"{self._dates()}"
            f"<abstract>{main}</abstract>{summary}{french}"
            f"</article-meta></front>{rest}</article>"
        )

    def xml(self) -> bytes:
        """The bucket's full-text XML (un-namespaced, as PMC's .xml files are)."""
        return self.jats(full=True).replace(f' xmlns="{JATS_NS}"', "").encode()

    def _dates(self) -> str:
        """JATS 1.0 `pub-type` dates, or (even PMCIDs, as current PMC) the JATS 1.1 spelling
        with the year-only collection date first."""
        d = self.published
        full = f"<day>{d.day}</day><month>{d.month}</month><year>{d.year}</year>"
        collection = f'<pub-date pub-type="collection"><year>{d.year}</year></pub-date>'
        if self.pmcid % 2:
            return f'<pub-date pub-type="epub">{full}</pub-date>{collection}'
        collection = collection.replace('pub-type="collection"', 'date-type="collection"')
        return (f'{collection}<pub-date publication-format="electronic" date-type="pub">'
                f"{full}</pub-date>")

    def cloud_metadata(self, version: int) -> dict[str, Any]:
        key = f"{self.name}.{version}/{self.name}.{version}"
        md5 = hashlib.md5(self.pdf()).hexdigest()
        if self.behaviour == "md5_mismatch":
            md5 = hashlib.md5(b"another file").hexdigest()
        meta: dict[str, Any] = {
            "pmcid": self.name, "version": version, "pmid": self.pmcid + 20_000_000,
            "doi": f"10.1371/journal.pone.{self.pmcid:07d}",
            "is_pmc_openaccess": self.behaviour != "not_oa",
            "is_manuscript": self.behaviour == "not_oa", "is_historical_ocr": False,
            "is_retracted": self.behaviour == "retracted",
            "license_code": None if self.behaviour == "not_oa" else
            ("CC BY" if self.pmcid % 2 else "CC BY-NC"),
            "xml_url": f"s3://pmc-oa-opendata/{key}.xml?md5={hashlib.md5(self.xml()).hexdigest()}",
        }
        if self.behaviour != "no_pdf":
            meta["pdf_url"] = f"s3://pmc-oa-opendata/{key}.pdf?md5={md5}"
        return meta


class PubmedSandbox(FakeService):
    """Generates articles and serves PMC's OAI-PMH and Cloud Service on a `SandboxServer`."""

    def __init__(self, server: SandboxServer, n_docs: int = 8, seed: int = 13,
                 faults: bool = True) -> None:
        super().__init__(server, seed, faults)
        self.articles: dict[int, Article] = {}
        self.cited_only: dict[int, Article] = {}  # GetRecord knows them; never listed
        self.tokens = oai.TokenBook()
        self.n_docs = n_docs
        self.xml_faults: dict[str, str] = {}  # article name -> "missing" | "corrupt"
        self.oai_full_text: dict[str, str] = {}  # name -> "refused" | "unknown" (pmc prefix)
        for k in range(CITED_ONLY):
            cited = self._make(1000 + k, "ok")
            cited.pmcid = FIRST_CITED_ONLY + k
            self.cited_only[cited.pmcid] = cited
        for i in range(n_docs):
            self._add(i, BEHAVIOURS[i] if faults and i < len(BEHAVIOURS) else "ok")
        if faults:
            self._add(n_docs, "ok").deleted = True
        server.route("/pmc/api/oai/v1/mh/", self._oai)
        server.route("/pmc/tools/idconv/api/v1/articles/", self._idconv)
        server.route(f"/_host/{CLOUD_HOST}/", self._cloud)

    @property
    def oai_url(self) -> str:
        return f"{self.server.base_url}/pmc/api/oai/v1/mh/"

    def client_config(self, **source: Any) -> dict[str, Any]:
        return {
            "source": {"oai_url": self.oai_url,
                       "idconv_url": f"{self.server.base_url}/pmc/tools/idconv/api/v1/articles/",
                       **source},
            "http": {"url_rewrite": {f"https://{CLOUD_HOST}/":
                                     f"{self.server.base_url}/_host/{CLOUD_HOST}/"},
                     "min_interval": 0.0, "allowed_hosts": [], "backoff_base": 0.1},
        }

    def add_articles(self, n: int) -> list[str]:
        """New articles, stamped after everything already served."""
        start = len(self.articles)
        return [self._add(start + i, "ok").name for i in range(n)]

    def _add(self, i: int, behaviour: str) -> Article:
        article = self._make(i, behaviour)
        article.refs = self._refs(i)
        with self._lock:
            self.articles[article.pmcid] = article
        return article

    def _refs(self, i: int) -> list[FakeRef]:
        """R1/R7 cite crawled articles by PMCID, R2 by DOI only; R3/R4 cited-only articles
        (GetRecord); R5 a PMCID PMC does not know, R6 a PMID only, R8 an unknown DOI; R9 a
        PMID only, of a cited-only article (the ID converter gives its PMCID)."""
        gen = ProseGenerator(self.seed * 104729 + i)
        n = max(1, self.n_docs)
        crawl = [FIRST_PMCID + (i + k) % n for k in (1, 2, 3)]
        return [
            FakeRef(gen.title("en"), pmcid=crawl[0], pmid=crawl[0] + 20_000_000),
            FakeRef(gen.title("en"), doi=f"10.1371/journal.pone.{crawl[1]:07d}"),
            FakeRef(gen.title("en"), pmcid=FIRST_CITED_ONLY + i % CITED_ONLY),
            FakeRef(gen.title("en"), pmcid=FIRST_CITED_ONLY + (i + 1) % CITED_ONLY),
            FakeRef(gen.title("en"), pmcid=9_000_000 + i),
            FakeRef(gen.title("en"), pmid=30_000_000 + i),
            FakeRef(gen.title("en"), pmcid=crawl[2]),  # cited author-year
            FakeRef(gen.title("en"), doi=f"10.9999/unknown.{i}"),
            FakeRef(gen.title("en"), pmid=FIRST_CITED_ONLY + 20_000_000 + (i + 2) % CITED_ONLY),
        ]

    def _make(self, i: int, behaviour: str) -> Article:
        gen = ProseGenerator(self.seed * 7919 + i)
        rng = gen.rng
        if i % 2:
            sections = [(label, gen.paragraph("en", 2)) for label in LABELS]
        else:
            sections = [("", gen.paragraph("en", 4) +
                         " The response rate was 45% in group A & B, at ~$12 per patient.")]
        article = Article(
            pmcid=FIRST_PMCID + i,
            datestamp=(date(2025, 3, 1) + timedelta(days=i)).isoformat(),
            published=date(2012, 1, 10) + timedelta(days=37 * i),
            title=gen.title("en"), authors=gen.authors(), sections=sections,
            jats_extra=("Risk rose (OR&#x0200a;=&#x0200a;7.3; <italic>p</italic>"
                        f'<inline-formula><mml:math xmlns:mml="{MML_NS}"><mml:mo>&lt;</mml:mo>'
                        "<mml:mn>0.001</mml:mn></mml:math></inline-formula>)."),
            printed_extra="Risk rose (OR = 7.3; p<0.001).",
            summary=gen.paragraph("en", 3) if i % 3 == 0 else "",
            french="Nous proposons une approche nouvelle." if i == 2 else "",
            body=[(f"{n} {gen.title('en').split(' of ')[0]}",
                   [gen.paragraph("en", rng.randint(5, 8)) for _ in range(2)])
                  for n in range(1, 4)],
            behaviour=behaviour,
            split="validation" if i % 5 == 3 else "test" if i % 5 == 4 else "train",
            bmc=i % 3 == 0,
        )
        return article

    def write_split_dir(self, directory: Path) -> Path:
        """Split files as the original PubMed dataset has them (JSON lines, `article_id`)."""
        directory.mkdir(parents=True, exist_ok=True)
        for split, name in (("train", "train.txt"), ("validation", "val.txt"),
                            ("test", "test.txt")):
            rows = [json.dumps({"article_id": a.name}) for a in self.articles.values()
                    if a.split == split and not a.deleted]
            (directory / name).write_text("".join(r + "\n" for r in rows), encoding="utf-8")
        return directory

    # -- OAI-PMH -----------------------------------------------------------------------------

    def _record(self, a: Article, full: bool = False) -> str:
        head = oai.header(f"oai:pubmedcentral.nih.gov:{a.pmcid}", a.datestamp,
                          ["plosone", "pmc-open"], a.deleted)
        return oai.record(head, "" if a.deleted else a.jats(full))

    def _oai(self, req: Request) -> Reply:
        base = self.oai_url
        verb = req.arg("verb")
        if verb == "Identify":
            return oai.envelope(req, base, "<Identify><repositoryName>PubMed Central"
                                "</repositoryName><granularity>YYYY-MM-DD</granularity>"
                                "</Identify>")
        if verb == "GetRecord":
            return self._get_record(req, base)
        if verb != "ListRecords":
            return oai.error(req, base, "badVerb", f"unsupported verb {verb!r}")

        def items_for(params: dict[str, str]) -> list[tuple[str, str]]:
            return [(a.datestamp, self._record(a)) for a in self.articles.values()
                    if params["set"] in ("", "pmc-open")]

        return oai.list_records(req, base, self.tokens, "pmc_fm", self._once, items_for,
                                PAGE_SIZE)

    def _get_record(self, req: Request, base: str) -> Reply:
        """`pmc_fm` for every article; `pmc` (full text) for open-access ones only."""
        prefix = req.arg("metadataPrefix")
        if prefix not in ("pmc_fm", "pmc"):
            return oai.error(req, base, "cannotDisseminateFormat", prefix)
        found = re.fullmatch(r"oai:pubmedcentral\.nih\.gov:(\d+)", req.arg("identifier"))
        number = int(found.group(1)) if found else 0
        article = self.articles.get(number) or self.cited_only.get(number)
        if article is None:
            return oai.error(req, base, "idDoesNotExist", req.arg("identifier"))
        fault = self.oai_full_text.get(article.name) if prefix == "pmc" else None
        if prefix == "pmc" and (article.behaviour == "not_oa" or article.deleted
                                or fault == "refused"):
            return oai.error(req, base, "cannotDisseminateFormat", prefix)
        if fault == "unknown":  # not in PMC's OAI yet
            return oai.error(req, base, "idDoesNotExist", req.arg("identifier"))
        return oai.envelope(req, base, f"<GetRecord>{self._record(article, prefix == 'pmc')}"
                            "</GetRecord>")

    # -- ID converter ------------------------------------------------------------------------

    def _idconv(self, req: Request) -> Reply:
        """JSON records per requested id; 400 for more than 200 ids or mixed id types
        without `idtype`, as the real converter answers."""
        ids = [i for i in req.arg("ids").split(",") if i]
        kinds = {"pmcid" if i.upper().startswith("PMC") else "doi" if "/" in i else "pmid"
                 for i in ids}
        if not ids or len(ids) > 200 or (len(kinds) > 1 and not req.arg("idtype")):
            return Reply(400, b'{"status": "error", "message": "bad ids"}',
                         {"Content-Type": "application/json"})
        by_pmid = {str(a.pmcid + 20_000_000): a
                   for a in [*self.articles.values(), *self.cited_only.values()]}
        records: list[dict[str, Any]] = []
        for requested in ids:
            article = by_pmid.get(requested)
            if article is None:
                records.append({"requested-id": requested, "pmid": requested,
                                "status": "error", "errmsg": "Identifier not found in PMC"})
            else:
                records.append({"requested-id": requested, "pmcid": article.name,
                                "pmid": int(requested),
                                "doi": f"10.1371/journal.pone.{article.pmcid:07d}"})
        body = {"status": "ok", "responseDate": "2026-03-02 10:00:00", "records": records}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    # -- Cloud Service bucket ----------------------------------------------------------------

    def _cloud(self, req: Request) -> Reply:
        path = req.path.removeprefix(f"/_host/{CLOUD_HOST}")
        if path == "/" and req.arg("list-type") == "2":
            return self._listing(req.arg("prefix"))
        meta = re.fullmatch(r"/metadata/PMC(\d+)\.(\d+)\.json", path)
        pdf = re.fullmatch(r"/PMC(\d+)\.(\d+)/PMC\1\.\2\.(pdf|xml)", path)
        found = meta or pdf
        article = self.articles.get(int(found.group(1))) if found else None
        xml = bool(pdf and pdf.group(3) == "xml")
        fault = self.xml_faults.get(article.name, "") if article and xml else ""
        if found is None or article is None or int(found.group(2)) not in article.versions \
                or fault == "missing":
            return Reply(404, b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey"
                         b"</Code></Error>", {"Content-Type": "application/xml"})
        if meta:
            return Reply(200, json.dumps(article.cloud_metadata(int(found.group(2)))).encode(),
                         {"Content-Type": "application/json"})
        if xml:
            body = article.xml()
            if fault == "corrupt":  # well-formed, but not the file the MD5 lists
                body = body.replace(b"<article", b"<Article", 1).replace(b"</article>",
                                                                           b"</Article>")
            return Reply(200, body, {"Content-Type": "application/xml"})
        return Reply(200, article.pdf(), {"Content-Type": "application/pdf"})

    def _listing(self, prefix: str) -> Reply:
        groups = sorted(f"{a.name}.{v}/" for a in self.articles.values() for v in a.versions
                        if not a.deleted and f"{a.name}.{v}/".startswith(prefix))
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"<Name>pmc-oa-opendata</Name><Prefix>{escape(prefix)}</Prefix>"
                f"<KeyCount>{len(groups)}</KeyCount><MaxKeys>1000</MaxKeys>"
                "<Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>"
                + "".join(f"<CommonPrefixes><Prefix>{g}</Prefix></CommonPrefixes>"
                          for g in groups) + "</ListBucketResult>")
        return Reply(200, body.encode(), {"Content-Type": "application/xml"})
