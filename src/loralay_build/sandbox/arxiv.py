"""arXiv's services over generated papers: OAI-PMH `arXivRaw`, the Atom API, the GCS bulk
bucket (JSON listing + objects, metadata snapshot) and the export host.

Faults, each served once when `faults` is on: OAI 503 + Retry-After, an expired resumption
token, the Atom API's plain-text 429 "Rate exceeded.", papers whose newest version is missing
from the bucket, papers only on the export host, and one the export host answers with its
403 robot page.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import tempfile
import textwrap
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from loralay_build.sandbox import oai
from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.server import FakeService, Reply, Request, SandboxServer
from loralay_build.sandbox.textgen import ProseGenerator

STORAGE_HOST = "storage.googleapis.com"
EXPORT_HOST = "export.arxiv.org"
SNAPSHOT_OBJECT = "metadata-v5/arxiv-metadata-oai.json"
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
CATEGORIES = ["cs.CL", "cs.LG", "stat.ML", "physics.soc-ph", "q-bio.PE"]
BEHAVIOURS = ("ok", "latest_missing", "export_only", "robot")
ROBOT_PAGE = (b"<!DOCTYPE html><html><head><title>Access Denied</title></head><body>"
              b"<h1>Access Denied</h1><p>Sadly, you do not currently appear to have permission "
              b"to access this page (user agent and IP logged).</p></body></html>")
PAGE_SIZE = 3


def _latex(printed: str) -> str:
    """An abstract as arXiv's metadata holds it: LaTeX escapes, hard-wrapped, two spaces."""
    latex = printed.replace("12%", "12\\%").replace("3–5", "3--5")
    return "  " + "\n".join(textwrap.wrap(latex, 78)) + "\n"


def rfc_date(day: date) -> str:
    return f"{DAYS[day.weekday()]}, {day.day} {MONTHS[day.month - 1]} {day.year} 14:57:58 GMT"


@dataclass
class Paper:
    id: str
    created: list[date]  # one per version
    categories: list[str]
    title: str
    authors: list[str]
    abstract_latex: str  # as the metadata holds it: hard-wrapped, LaTeX
    abstract_printed: str
    sections: list[tuple[str, list[str]]]
    datestamp: str
    behaviour: str = "ok"
    split: str = ""  # the original dataset's split ("" = in no list)
    pdfs: dict[int, bytes] = field(default_factory=dict)
    older: dict[int, str] = field(default_factory=dict)  # printed abstract of earlier versions

    def printed(self, version: int) -> str:
        """The abstract as version `version` prints it (revisions rewrite abstracts)."""
        return self.older.get(version, self.abstract_printed)

    def latex(self, version: int) -> str:
        """The abstract of version `version` as the metadata of that version holds it."""
        return _latex(self.older[version]) if version in self.older else self.abstract_latex

    def pdf(self, version: int) -> bytes:
        if version not in self.pdfs:
            day = self.created[version - 1]
            stamp = f"arXiv:{self.id}v{version} [{self.categories[0]}] {day.day} " \
                    f"{MONTHS[day.month - 1]} {day.year}"
            heading = "Abstract" if sum(map(ord, self.id)) % 2 else ""
            self.pdfs[version] = render_article(ArticleSpec(
                title=self.title, authors=self.authors,
                abstracts=[(heading, self.printed(version))], sections=self.sections,
                columns=2, side_stamp=stamp,
            ))
        return self.pdfs[version]

    @property
    def bucket_versions(self) -> list[int]:
        versions = list(range(1, len(self.created) + 1))
        if self.behaviour == "latest_missing":
            return versions[:-1]
        if self.behaviour in ("export_only", "robot"):
            return []
        return versions

    def object_name(self, version: int) -> str:
        if "/" in self.id:
            archive, number = self.id.split("/")
            return f"arxiv/{archive}/pdf/{number[:4]}/{number}v{version}.pdf"
        return f"arxiv/arxiv/pdf/{self.id[:4]}/{self.id}v{version}.pdf"


class ArxivSandbox(FakeService):
    """Generates papers and serves arXiv's protocols on a `SandboxServer`."""

    def __init__(self, server: SandboxServer, n_docs: int = 8, seed: int = 11,
                 faults: bool = True) -> None:
        super().__init__(server, seed, faults)
        self.papers: dict[str, Paper] = {}
        self.tokens = oai.TokenBook()
        self._files = tempfile.TemporaryDirectory(prefix="arxiv-sandbox-")
        for i in range(n_docs):
            self._add(i, BEHAVIOURS[i] if faults and i < len(BEHAVIOURS) else "ok")
        server.route("/arxiv/oai", self._oai)
        server.route("/arxiv/oai2", self._legacy_oai)
        server.route("/arxiv/api/query", self._atom)
        server.route(f"/_host/{STORAGE_HOST}/", self._storage)
        server.route(f"/_host/{EXPORT_HOST}/", self._export)

    # -- configuration for clients -----------------------------------------------------------

    def url_rewrite(self) -> dict[str, str]:
        return {f"https://{h}/": f"{self.server.base_url}/_host/{h}/"
                for h in (STORAGE_HOST, EXPORT_HOST)}

    @property
    def snapshot_url(self) -> str:
        """Where the bucket keeps its metadata snapshot (reached through url_rewrite)."""
        return f"https://{STORAGE_HOST}/arxiv-dataset/{SNAPSHOT_OBJECT}"

    def client_config(self, **source: Any) -> dict[str, Any]:
        return {
            "source": {"oai_url": f"{self.server.base_url}/arxiv/oai",
                       "api_url": f"{self.server.base_url}/arxiv/api/query", **source},
            "http": {"url_rewrite": self.url_rewrite(), "min_interval": 0.0,
                     "host_intervals": {}, "allowed_hosts": [], "backoff_base": 0.1},
        }

    def demo_config(self) -> dict[str, Any]:
        """Snapshot from the bucket, the original splits from a written split folder."""
        return self.client_config(metadata=self.snapshot_url,
                                  split_ids=str(self.write_split_dir(Path(self._files.name))))

    # -- catalogue ---------------------------------------------------------------------------

    def add_papers(self, n: int) -> list[str]:
        """New papers (in no split list), stamped after everything already served."""
        start = len(self.papers)
        return [self._add(start + i, "ok", split="").id for i in range(n)]

    def _add(self, i: int, behaviour: str, split: str | None = None) -> Paper:
        gen = ProseGenerator(self.seed * 7919 + i)
        rng = gen.rng
        created = date(2018, 1, 15) + timedelta(days=23 * i)
        if i == 1:
            arxiv_id, created = "hep-th/0101001", date(2001, 1, 9)
        else:
            arxiv_id = f"{created:%y%m}.{10000 + i:05d}"
        versions = [created] + ([created + timedelta(days=40)] if i % 2 else [])
        printed = gen.paragraph("en", rng.randint(4, 6)) + " Gains reach 12% on 3–5 day windows."
        wrapped = _latex(printed)
        # A revision rewrote the abstract: the first version prints one of its own.
        older = {1: ProseGenerator(self.seed * 7919 + i + 500_000).paragraph("en", 5)
                 + " A first version."} if len(versions) > 1 else {}
        if split is None:
            split = "" if i % 7 == 6 else ("validation" if i % 5 == 3 else
                                           "test" if i % 5 == 4 else "train")
        paper = Paper(
            id=arxiv_id, created=versions, categories=[CATEGORIES[i % len(CATEGORIES)]],
            title=gen.title("en"), authors=gen.authors(), abstract_latex=wrapped,
            abstract_printed=printed,
            sections=[(f"{n} {gen.title('en').split(' of ')[0]}",
                       [gen.paragraph("en", rng.randint(5, 8)) for _ in range(2)])
                      for n in range(1, 4)],
            datestamp=(date(2024, 1, 1) + timedelta(days=i)).isoformat(),
            behaviour=behaviour, split=split, older=older,
        )
        with self._lock:
            self.papers[arxiv_id] = paper
        return paper

    def snapshot_lines(self) -> list[str]:
        """Kaggle snapshot lines, alternating its current and older layouts."""
        lines = []
        for n, p in enumerate(self.papers.values()):
            record: dict[str, Any] = {"id": p.id, "submitter": p.authors[0],
                                      "authors": ", ".join(p.authors), "title": p.title,
                                      "abstract": p.abstract_latex, "doi": None}
            if n % 2:
                record |= {"categories": [" ".join(p.categories)],
                           "versions": [f"v{k + 1}" for k in range(len(p.created))],
                           "versions_dates": [rfc_date(d) for d in p.created]}
            else:
                record |= {"categories": " ".join(p.categories),
                           "license": "http://creativecommons.org/licenses/by/4.0/",
                           "versions": [{"version": f"v{k + 1}", "created": rfc_date(d)}
                                        for k, d in enumerate(p.created)],
                           "update_date": p.created[-1].isoformat()}
            lines.append(json.dumps(record))
        return lines

    def write_snapshot(self, path: Path) -> Path:
        path.write_text("\n".join(self.snapshot_lines()) + "\n", encoding="utf-8")
        return path

    def write_split_dir(self, directory: Path) -> Path:
        """Cohan-style split files: JSON lines, old-style ids without their slash."""
        directory.mkdir(parents=True, exist_ok=True)
        names = {"train": "train.txt", "validation": "val.txt", "test": "test.txt"}
        for split, name in names.items():
            rows = [json.dumps({"article_id": p.id.replace("/", ""), "abstract_text": []})
                    for p in self.papers.values() if p.split == split]
            (directory / name).write_text("".join(r + "\n" for r in rows), encoding="utf-8")
        return directory

    # -- OAI-PMH -----------------------------------------------------------------------------

    def _raw(self, p: Paper) -> str:
        versions = "".join(
            f'<version version="v{k + 1}"><date>{rfc_date(d)}</date><size>280kb</size>'
            f"<source_type>D</source_type></version>" for k, d in enumerate(p.created)
        )
        return (f'<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/"><id>{p.id}</id>{versions}'
                f"<title>{escape(p.title)}</title><categories>{' '.join(p.categories)}"
                "</categories><license>http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
                f"</license><abstract>{escape(p.abstract_latex)}</abstract></arXivRaw>")

    def _oai(self, req: Request) -> Reply:
        base = f"{self.server.base_url}/arxiv/oai"
        verb = req.arg("verb")
        if verb == "Identify":
            return oai.envelope(req, base, "<Identify><repositoryName>arXiv</repositoryName>"
                                "<granularity>YYYY-MM-DD</granularity></Identify>")
        if verb != "ListRecords":
            return oai.error(req, base, "badVerb", f"unsupported verb {verb!r}")

        def items_for(params: dict[str, str]) -> list[tuple[str, str]]:
            return [
                (p.datestamp, oai.record(
                    oai.header(f"oai:arXiv.org:{p.id}", p.datestamp,
                               [p.categories[0].split(".")[0]]),
                    self._raw(p)))
                for p in self.papers.values()
                if not params["set"] or p.categories[0].startswith(params["set"])
            ]

        return oai.list_records(req, base, self.tokens, "arXivRaw", self._once, items_for,
                                PAGE_SIZE)

    def _legacy_oai(self, req: Request) -> Reply:
        query = "&".join(f"{k}={v}" for k, v in req.query)
        return Reply(301, b"", {"Location": f"{self.server.base_url}/arxiv/oai?{query}"})

    # -- Atom API ----------------------------------------------------------------------------

    def _atom(self, req: Request) -> Reply:
        if self._once("atom-429"):
            return Reply(429, b"Rate exceeded.", {"Content-Type": "text/plain"})
        ids = [i for i in req.arg("id_list").split(",") if i]
        bad = [i for i in ids if not re.match(r"^([a-z-]+/\d{7}|\d{4}\.\d{4,5})(v\d+)?$", i)]
        if bad:
            entry = (f"<entry><id>https://arxiv.org/api/errors#incorrect_id_format_for_{bad[0]}"
                     f"</id><title>Error</title><summary>incorrect id format for {bad[0]}"
                     "</summary><author><name>arXiv api core</name></author></entry>")
            return self._feed([entry], 400)
        entries = []
        for arxiv_id in ids:  # a versioned id gets that version's record, else the latest
            asked = re.match(r"^(.+?)(?:v(\d+))?$", arxiv_id)
            assert asked is not None
            p = self.papers.get(asked.group(1))
            if p is None:
                continue
            n = int(asked.group(2) or len(p.created))
            if not 1 <= n <= len(p.created):
                continue
            entries.append(
                f"<entry><id>http://arxiv.org/abs/{p.id}v{n}</id>"
                f"<updated>{p.created[n - 1]}T14:57:58Z</updated>"
                f"<published>{p.created[0]}T14:57:58Z</published>"
                f"<title>{escape(p.title)}</title>"
                f"<summary>{escape(p.latex(n))}</summary>"
                + "".join(f"<author><name>{escape(a)}</name></author>" for a in p.authors)
                + f'<link href="https://arxiv.org/pdf/{p.id}v{n}" rel="related" '
                'type="application/pdf" title="pdf"/>'
                f'<arxiv:primary_category term="{p.categories[0]}"/>'
                + "".join(f'<category term="{c}" scheme="http://arxiv.org/schemas/atom"/>'
                          for c in p.categories) + "</entry>")
        return self._feed(entries, 200)

    @staticmethod
    def _feed(entries: list[str], status: int) -> Reply:
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n<feed '
                'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
                'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">'
                f"<opensearch:itemsPerPage>100</opensearch:itemsPerPage>"
                f"<opensearch:totalResults>{len(entries)}</opensearch:totalResults>"
                "<opensearch:startIndex>0</opensearch:startIndex>"
                + "".join(entries) + "</feed>")
        return Reply(status, body.encode(), {"Content-Type": "application/atom+xml"})

    # -- bucket and export host --------------------------------------------------------------

    def _objects(self) -> dict[str, tuple[Paper, int]]:
        return {p.object_name(v): (p, v) for p in list(self.papers.values())
                for v in p.bucket_versions}

    def _storage(self, req: Request) -> Reply:
        path = req.path.removeprefix(f"/_host/{STORAGE_HOST}")
        if path == "/storage/v1/b/arxiv-dataset/o":
            return self._listing(req)
        name = path.removeprefix("/arxiv-dataset/")
        if name == SNAPSHOT_OBJECT:
            body = ("\n".join(self.snapshot_lines()) + "\n").encode()
            return Reply(200, body, {"Content-Type": "application/json"})
        found = self._objects().get(name)
        if found is None:
            return Reply(404, b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey"
                         b"</Code></Error>", {"Content-Type": "application/xml"})
        return Reply(200, found[0].pdf(found[1]), {"Content-Type": "application/pdf"})

    def _listing(self, req: Request) -> Reply:
        prefix = req.arg("prefix")
        names = sorted(n for n in self._objects() if n.startswith(prefix))
        start = int(req.arg("pageToken") or 0)
        size = int(req.arg("maxResults") or 1)  # small pages, so clients must follow tokens
        items = []
        for name in names[start:start + size]:
            paper, version = self._objects()[name]
            pdf = paper.pdf(version)
            items.append({"kind": "storage#object", "name": name, "bucket": "arxiv-dataset",
                          "size": str(len(pdf)),
                          "md5Hash": base64.b64encode(hashlib.md5(pdf).digest()).decode(),
                          "updated": f"{paper.created[version - 1]}T00:00:00.000Z"})
        answer: dict[str, Any] = {"kind": "storage#objects"}
        if items:
            answer["items"] = items
        if start + size < len(names):
            answer["nextPageToken"] = str(start + size)
        return Reply(200, json.dumps(answer).encode(), {"Content-Type": "application/json"})

    def _export(self, req: Request) -> Reply:
        found = re.fullmatch(rf"/_host/{EXPORT_HOST}/pdf/(.+)v(\d+)", req.path)
        paper = self.papers.get(found.group(1)) if found else None
        if found is None or paper is None or int(found.group(2)) > len(paper.created):
            return Reply(404, b"<html><body>Not found</body></html>",
                         {"Content-Type": "text/html"})
        if paper.behaviour == "robot":
            return Reply(403, ROBOT_PAGE, {"Content-Type": "text/html"})
        return Reply(200, paper.pdf(int(found.group(2))), {"Content-Type": "application/pdf"})
