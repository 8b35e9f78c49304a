"""HAL's search API (Solr JSON, cursorMark paging) and its file hosts, served from generated
documents. Shapes follow HAL's real answers: string docids, list-valued text fields, partial
dates, abstracts in several languages, a cover page on every served PDF, several host names.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import cached_property
from http.server import BaseHTTPRequestHandler
from typing import Any

from loralay_build.sandbox.pdfgen import (
    ArticleSpec,
    CoverPage,
    escape,
    render_article,
    render_broken_font,
    render_scan,
    render_scanned,
)
from loralay_build.sandbox.server import FakeService, Reply, Request, SandboxServer, retry_after
from loralay_build.sandbox.textgen import ProseGenerator

HOSTS = ["hal.science", "shs.hal.science", "inria.hal.science", "hal.inrae.fr"]
LEGACY_HOST = "hal.archives-ouvertes.fr"
MODIFIED_EPOCH = datetime(2024, 1, 1)
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

# How the file of a record behaves when downloaded (the metadata is always served).
FILE_BEHAVIOURS = (
    "ok",  # PDF with a HAL cover page
    "no_cover",  # PDF as deposited (some old files have no cover)
    "scan",  # a short article scanned: image-only pages, read with --ocr (seconds a page)
    "html",  # 200 with an HTML page instead of the PDF
    "missing",  # 404
    "forbidden",  # 403 (embargo)
    "throttled",  # 429 with Retry-After once, then the PDF
    "unavailable",  # 503 once, then the PDF
    "truncated",  # first answer cut in half without Content-Length, then the PDF
    "legacy",  # linked on the legacy host, which redirects to hal.science
    "broken_font",  # set in a font whose ToUnicode map is scrambled: read with --ocr
)
# Set by tests on chosen records: 503 on every request, as long as the record keeps it.
OUTAGE = "down"


def hal_cover(hal_id: str, submitted: str, title: str, authors: list[str]) -> CoverPage:
    """What HAL prints on the page it adds in front of every deposited file (`submitted`:
    e.g. "5 Nov 2009")."""
    return CoverPage([
        (f"HAL Id: {hal_id}", "cover_title"),
        (f"https://hal.science/{hal_id}", "cover"),
        (f"Submitted on {submitted}", "cover"),
        (
            "HAL is a multi-disciplinary open access archive for the deposit and dissemination"
            " of scientific research documents, whether they are published or not.",
            "cover",
        ),
        (
            "L'archive ouverte pluridisciplinaire HAL, est destinée au dépôt et à la diffusion"
            " de documents scientifiques de niveau recherche, publiés ou non.",
            "cover",
        ),
        (escape(title), "cover_title"),
        (escape(", ".join(authors)), "cover"),
        (f"To cite this version: {escape(', '.join(authors))}. {escape(title)}.", "cover"),
    ])


@dataclass
class HalRecord:
    """One document: the Solr fields served by the search API and how its file behaves."""

    docid: int
    fields: dict[str, Any]
    spec: ArticleSpec | None
    behaviour: str = "ok"
    served: dict[str, int] = field(default_factory=dict)  # requests per behaviour key

    @property
    def hal_id(self) -> str:
        return str(self.fields["halId_s"])

    @cached_property
    def pdf(self) -> bytes:
        if self.spec is None:
            return render_scan(2, self.docid)
        if self.behaviour == "scan":
            return render_scanned(render_article(replace(self.spec,
                                                         sections=self.spec.sections[:1])))
        if self.behaviour == "broken_font":
            return render_broken_font(self.spec)
        return render_article(self.spec)


# `licence_s` as HAL serves it: Creative Commons URLs (older ones without a version) and
# HAL's own licence pages.
LICENCES = (
    "http://creativecommons.org/licenses/by/4.0/",
    "http://creativecommons.org/licenses/by-nc-nd/",
    "http://hal.archives-ouvertes.fr/licences/copyright/",
    "",
    "http://hal.archives-ouvertes.fr/licences/etalab/",
    "http://creativecommons.org/licenses/by/",
)


def cursor_mark(docid: int) -> str:
    return base64.b64encode(f"docid:{docid}".encode()).decode()


def _docid_from_mark(mark: str) -> int:
    return int(base64.b64decode(mark.encode()).decode().split(":", 1)[1])


def _solr_error(message: str, code: int = 400) -> Reply:
    body = json.dumps({"error": {"msg": message, "code": code}}).encode()
    return Reply(code, body, {"Content-Type": "application/json; charset=UTF-8"})


class HalSandbox(FakeService):
    """Generates a HAL-like collection and serves it on a `SandboxServer`."""

    def __init__(
        self, server: SandboxServer, n_docs: int = 24, seed: int = 7, faults: bool = True
    ) -> None:
        super().__init__(server, seed, faults)
        self.records: dict[int, HalRecord] = {}
        self._next_docid = 1_000_001
        self._clock = 0  # modifiedDate sequence: later additions are modified later
        self._add_catalogue(n_docs)
        server.route("/search/", self._search)
        server.route("/_host/", self._files)

    # -- configuration for clients -----------------------------------------------------------

    @property
    def search_url(self) -> str:
        return f"{self.server.base_url}/search/"

    def url_rewrite(self) -> dict[str, str]:
        """Where each real HAL host lives in the sandbox."""
        return {
            f"https://{host}/": f"{self.server.base_url}/_host/{host}/"
            for host in [*HOSTS, LEGACY_HOST]
        }

    def client_config(self) -> dict[str, Any]:
        """Config overlay that points the HAL source at this sandbox."""
        return {
            "source": {"search_url": self.search_url, "rows": 10},
            "http": {"url_rewrite": self.url_rewrite(), "min_interval": 0.0,
                     "backoff_base": 0.05, "backoff_max": 0.2},
        }

    # -- catalogue ---------------------------------------------------------------------------

    def _add_catalogue(self, n_docs: int) -> None:
        behaviours = list(FILE_BEHAVIOURS) if self.faults else ["ok", "no_cover"]
        for i in range(n_docs):
            behaviour = behaviours[i] if i < len(behaviours) else ("ok" if i % 3 else "no_cover")
            self.add_document(behaviour=behaviour, variant=i)
        # Records the default filters exclude, and metadata traps.
        self.add_document(variant=101, submit_type="notice")
        self.add_document(variant=102, language="en")
        self.add_document(variant=103, doc_type="REPORT")
        self.add_document(variant=104, mis_tagged=True)
        self.add_document(variant=105, without_abstract=True)
        # As on the real service, a record's last modification has nothing to do with its
        # docid (old deposits are edited every day), while the cursor walks in docid order.
        stamps = [r.fields["modifiedDate_tdate"] for r in self.records.values()]
        random.Random(self.seed).shuffle(stamps)
        for record, stamp in zip(self.records.values(), stamps, strict=True):
            record.fields["modifiedDate_tdate"] = stamp

    def add_documents(self, n: int) -> list[int]:
        """Deposit `n` new regular documents, modified after everything already served."""
        return [self.add_document(variant=1000 + self._next_docid + i) for i in range(n)]

    def add_document(
        self,
        behaviour: str = "ok",
        variant: int = 0,
        submit_type: str = "file",
        language: str = "fr",
        doc_type: str | None = None,
        mis_tagged: bool = False,
        without_abstract: bool = False,
    ) -> int:
        with self._lock:
            docid = self._next_docid
            self._next_docid += 1
            self._clock += 1
            clock = self._clock
        gen = ProseGenerator(self.seed * 100_003 + docid)
        rng = gen.rng
        hal_id = f"hal-{docid + 1_000_000:08d}"
        title_fr = gen.title("fr")
        title_en = gen.title("en")
        # Every fourth document has an abstract long enough to run into the second column.
        fr_sentences = rng.randint(24, 28) if variant % 4 == 3 else rng.randint(3, 7)
        abstract_fr = gen.paragraph("en" if mis_tagged else "fr", fr_sentences)
        abstract_en = gen.paragraph("en", rng.randint(3, 6))
        year = rng.randint(2003, 2022)
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        date_shape = variant % 7
        produced = (
            f"{year}" if date_shape == 3 else f"{year}-{month:02d}" if date_shape == 5
            else f"{year}-{month:02d}-{day:02d}"
        )
        host = HOSTS[variant % len(HOSTS)]
        if behaviour == "legacy":
            host = LEGACY_HOST
        file_name = f"{title_fr.split()[1].lower()}_{docid}.pdf"
        fields: dict[str, Any] = {
            "docid": str(docid),
            "halId_s": hal_id,
            "uri_s": f"https://hal.science/{hal_id}v1",
            "version_i": 1,
            "docType_s": doc_type or ("ART" if variant % 2 else "COMM"),
            "submitType_s": submit_type,
            "language_s": [language],
            "title_s": [title_fr, title_en],
            "fr_title_s": [title_fr],
            "en_title_s": [title_en],
            "producedDate_s": produced,
            "publicationDate_s": produced,
            "submittedDate_tdate": f"{year}-{month:02d}-{day:02d}T10:00:00Z",
            "modifiedDate_tdate": (MODIFIED_EPOCH + timedelta(minutes=clock)).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            ),
            "openAccess_bool": True,
        }
        if not without_abstract:
            shown = abstract_fr
            if variant % 5 == 1:  # metadata as HAL stores it: raw newlines, inline HTML
                words = shown.split(" ")
                words[3] = f"<i>{words[3]}</i>"
                shown = " ".join(words[:10]) + "\n" + " ".join(words[10:])
            fields["fr_abstract_s"] = [shown]
            fields["en_abstract_s"] = [abstract_en]
            fields["abstract_s"] = [shown, abstract_en]
        licence = LICENCES[docid % len(LICENCES)]
        if submit_type == "file" and licence:  # a file's licence; none on older deposits
            fields["licence_s"] = licence
        if submit_type == "file":
            fields["fileMain_s"] = f"https://{host}/{hal_id}/document"
            main_file = f"https://{host}/{hal_id}/file/{file_name}"
            fields["files_s"] = (
                [f"https://{host}/{hal_id}/file/annexe_{docid}.pdf", main_file]
                if variant % 4 == 2 else [main_file]
            )
        columns = 2 if variant % 2 else 1
        spec = ArticleSpec(
            title=title_fr,
            authors=gen.authors(),
            abstracts=[("Résumé", abstract_fr), ("Abstract", abstract_en)],
            sections=[
                (f"{n} {gen.title('fr').split(' des ')[0]}",
                 [gen.paragraph("fr", rng.randint(5, 9)) for _ in range(rng.randint(2, 5))])
                for n in range(1, rng.randint(4, 9))
            ],
            columns=columns,
            running_header=f"Cahiers de la recherche {year}",
            cover=None if behaviour == "no_cover" else hal_cover(
                hal_id, f"{day} {MONTHS[month - 1]} {year + 1}", title_fr, []
            ),
        )
        if without_abstract:
            spec.abstracts = []
        self.records[docid] = HalRecord(docid, fields, spec, behaviour)
        return docid

    # -- search API --------------------------------------------------------------------------

    def _search(self, req: Request) -> Reply:
        call = self._calls.next("search")
        if self.faults and call == 1:
            return Reply(429, b"Too Many Requests", {"Retry-After": retry_after()})
        if self.faults and call == 3:
            return Reply(503, b"Service Unavailable")
        if not req.arg("q"):
            return _solr_error("no query specified")
        rows = int(req.arg("rows", "30"))
        start = int(req.arg("start", "0"))
        mark = req.arg("cursorMark")
        sort = req.arg("sort")
        if mark and "docid" not in sort:
            return _solr_error("Cursor functionality requires a sort containing a uniqueKey field")
        if mark and start > 0:
            return _solr_error("Cursor functionality requires start=0")
        try:
            matchers = [_parse_fq(fq) for fq in req.args("fq")]
        except ValueError as exc:
            return _solr_error(str(exc))
        docs = sorted(
            (r for r in self.records.values() if all(m(r.fields) for m in matchers)),
            key=lambda r: r.docid,
        )
        if mark and mark != "*":
            after = _docid_from_mark(mark)
            docs = [r for r in docs if r.docid > after]
            page = docs[:rows]
        else:
            page = docs[start : start + rows]
        total = len([r for r in self.records.values() if all(m(r.fields) for m in matchers)])
        fl = [f.strip() for f in req.arg("fl", "docid,label_s").split(",") if f.strip()]
        envelope: dict[str, Any] = {
            "response": {
                "numFound": total, "start": start, "numFoundExact": True,
                "docs": [_project(r.fields, fl) for r in page],
            }
        }
        if mark:
            envelope["nextCursorMark"] = cursor_mark(page[-1].docid) if page else mark
        body = json.dumps(envelope, ensure_ascii=False).encode()
        if self.faults and call == 4:
            return Reply(200, body[: len(body) // 2], {"Content-Type": "application/json"})
        return Reply(200, body, {"Content-Type": "application/json; charset=UTF-8"})

    # -- file hosts --------------------------------------------------------------------------

    def _files(self, req: Request) -> Reply:
        match = re.fullmatch(r"/_host/([^/]+)/(hal-\d+)/(document|json|file/[^/]+)", req.path)
        if not match:
            return Reply(404, b"<html><body>Page introuvable</body></html>",
                         {"Content-Type": "text/html"})
        host, hal_id, what = match.groups()
        record = next((r for r in self.records.values() if r.hal_id == hal_id), None)
        if record is None:
            return Reply(404, b"not found", {"Content-Type": "text/html"})
        if host == LEGACY_HOST:
            return Reply(301, b"", {"Location": f"https://hal.science/{hal_id}/{what}"})
        if what == "json":
            envelope = {"response": {"numFound": 1, "start": 0, "docs": [record.fields]}}
            return Reply(200, json.dumps(envelope, ensure_ascii=False).encode(),
                         {"Content-Type": "application/json; charset=UTF-8"})
        if what.startswith("file/annexe_"):
            return Reply(200, render_scan(1, record.docid), {"Content-Type": "application/pdf"})
        return self._serve_pdf(record)

    def _serve_pdf(self, record: HalRecord) -> Reply:
        behaviour = record.behaviour
        with self._lock:
            seen = record.served.get(behaviour, 0)
            record.served[behaviour] = seen + 1
        pdf_headers = {"Content-Type": "application/pdf"}
        if behaviour == "html":
            page = b"<!DOCTYPE html><html><body><h1>Acc\xc3\xa8s restreint</h1></body></html>"
            return Reply(200, page, {"Content-Type": "text/html; charset=UTF-8"})
        if behaviour == "missing":
            return Reply(404, b"<html><body>Not found</body></html>", {"Content-Type": "text/html"})
        if behaviour == "forbidden":
            return Reply(403, b"<html><body>Embargo</body></html>", {"Content-Type": "text/html"})
        if behaviour == "throttled" and seen == 0:
            return Reply(429, b"Too Many Requests", {"Retry-After": retry_after()})
        if behaviour == OUTAGE or (behaviour == "unavailable" and seen == 0):
            return Reply(503, b"Service Unavailable")
        if behaviour == "truncated" and seen == 0:
            return Reply(stream=_close_delimited(record.pdf[: len(record.pdf) // 2]))
        return Reply(200, record.pdf, pdf_headers)


def _close_delimited(body: bytes) -> Callable[[BaseHTTPRequestHandler], None]:
    """A response without Content-Length that just closes: a truncation nobody can detect
    from the headers."""

    def write(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/pdf")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(body)

    return write


def _project(fields: dict[str, Any], fl: list[str]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if any(fnmatch.fnmatchcase(k, p) for p in fl)}


_RANGE = re.compile(r"^(\w+):\[(\S+) TO (\S+)\]$")
_CLAUSE = re.compile(r"^(\w+):(?:\((.+)\)|(\S+))$")


def _parse_fq(fq: str) -> Callable[[dict[str, Any]], bool]:
    """The filter-query shapes HAL clients send: `f:v`, `f:(a OR b)`, `f:[a TO b]`."""
    fq = fq.strip()
    ranged = _RANGE.match(fq)
    if ranged:
        name, low, high = ranged.groups()

        def in_range(doc: dict[str, Any]) -> bool:
            value = str(doc.get(name, ""))
            return bool(value) and (low == "*" or value >= low) and (
                high in ("*", "NOW") or value <= high
            )

        return in_range
    clause = _CLAUSE.match(fq)
    if not clause:
        raise ValueError(f"cannot parse fq {fq!r}")
    name, group, single = clause.groups()
    wanted = {v.strip() for v in group.split(" OR ")} if group else {single}

    def matches(doc: dict[str, Any]) -> bool:
        value = doc.get(name)
        values = value if isinstance(value, list) else [value]
        return any(str(v) in wanted for v in values)

    return matches
