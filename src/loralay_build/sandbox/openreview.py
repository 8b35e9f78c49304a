"""OpenReview's APIs (v2 and legacy v1) served from generated submissions.

Shapes follow the documentation examples in the source notes: v2 wraps content values as
`{"value": ...}` and lists `invitations`; v1 has bare values and one `invitation`. Errors use
the `{name, message, status, details}` body; the PDF endpoints share a small guest bucket that
answers 429 `RateLimitError` with `details.resetTime`; a challenge mode answers 403
`ChallengeRequiredError`. A Bearer token from `POST /login` lifts the PDF limit.
"""

from __future__ import annotations

import json
import random
import string
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.server import FakeService, Reply, Request, SandboxServer
from loralay_build.sandbox.textgen import ProseGenerator
from loralay_build.text.clean import prepare_abstract

V2_PREFIX, V1_PREFIX = "/_openreview/api2", "/_openreview/api1"
ICLR24 = "ICLR.cc/2024/Conference"  # v2, `TLDR`
WORKSHOP23 = "NeurIPS.cc/2023/Workshop/SciLM"  # v2, `TL;DR`
ICLR19 = "ICLR.cc/2019/Conference"  # v1, `TL;DR`
V2_VENUES = {ICLR24: "TLDR", WORKSHOP23: "TL;DR"}
MAX_LIMIT = 1000
MARKDOWN_ABSTRACT = (
    "We introduce **SparseMix**, a mixture of experts whose router costs $\\mathcal{O}(n)$ "
    "instead of $\\mathcal{O}(n^2)$. On *long* documents it matches dense attention. "
)


@dataclass
class Submission:
    """One forum: its note (as stored, v2 shape for v2 venues) and its PDF, if any."""

    note_id: str
    venue: str
    status: str  # accepted | under_review | withdrawn | desk_rejected | rejected
    title: str
    abstract: str  # as the authors typed it (Markdown/LaTeX possible)
    tldr: str
    spec: ArticleSpec
    number: int
    cdate: int
    pdate: int | None
    has_pdf: bool = True
    hidden: tuple[str, ...] = ()  # content fields guests do not see
    same_pdf_as: Submission | None = None
    replies: list[dict[str, Any]] = field(default_factory=list)

    @cached_property
    def pdf(self) -> bytes:
        if self.same_pdf_as is not None:
            return self.same_pdf_as.pdf
        return render_article(self.spec)

    @property
    def v1(self) -> bool:
        return self.venue not in V2_VENUES


def _error(status: int, name: str, message: str, **details: Any) -> Reply:
    body = {"name": name, "message": message, "status": status, "details": details}
    return Reply(status, json.dumps(body).encode(), {"Content-Type": "application/json"})


def _json(payload: Any) -> Reply:
    return Reply(200, json.dumps(payload, ensure_ascii=False).encode(),
                 {"Content-Type": "application/json; charset=utf-8"})


class OpenReviewSandbox(FakeService):
    """Three venues (two v2, one v1) with every quirk of the checklist; see the module doc."""

    def __init__(self, server: SandboxServer, n_docs: int = 24, seed: int = 7,
                 faults: bool = True, pdf_limit: int = 1000, pdf_window: float = 3600.0) -> None:
        super().__init__(server, seed, faults)
        self.rng = random.Random(seed)
        self.subs: dict[str, Submission] = {}
        self.pdf_limit, self.pdf_window = pdf_limit, pdf_window
        self.challenge: set[str] = set()  # endpoints answering 403 ChallengeRequiredError
        self.credentials = ("reviewer@example.org", "s3cret-pässword")
        self.tokens: set[str] = set()
        self._bucket_start, self._bucket_used = time.time(), 0
        self._build(n_docs)
        for prefix in (V2_PREFIX, V1_PREFIX):
            server.route(f"{prefix}/notes", self._notes)
            server.route(f"{prefix}/groups", self._groups)
        server.route(f"{V2_PREFIX}/login", self._login)
        server.route(f"{V2_PREFIX}/pdf", self._pdf)
        server.route(f"{V2_PREFIX}/attachment", self._pdf)

    # -- configuration for clients -----------------------------------------------------------

    def client_config(self, select: tuple[str, ...] = ("accepted",)) -> dict[str, Any]:
        base = self.server.base_url
        return {
            "source": {"api_url": base + V2_PREFIX, "api_v1_url": base + V1_PREFIX,
                       "web_url": base + "/_openreview/web", "venues": [ICLR24, WORKSHOP23, ICLR19],
                       "select": list(select), "with_reviews": True, "page_size": 5},
            "http": {"min_interval": 0.0, "backoff_base": 0.05, "backoff_max": 0.2,
                     "retry_after_max": 5.0},
            "split": {"train": 0.6, "validation": 0.2, "test": 0.2},
        }

    def reset_limit(self) -> None:
        """The guest bucket's window ends (what an hour of waiting does)."""
        with self._lock:
            self._bucket_start, self._bucket_used = time.time(), 0

    # -- catalogue ---------------------------------------------------------------------------

    def _new_id(self) -> str:
        alphabet = string.ascii_letters + string.digits
        return "".join(self.rng.choice(alphabet) for _ in range(10))

    def _add(self, venue: str, status: str, index: int, **kwargs: Any) -> Submission:
        gen = ProseGenerator(self.seed * 7919 + index)
        rng = gen.rng
        title = kwargs.pop("title", None) or f"{gen.title('en')} ({index})"
        abstract = kwargs.pop("abstract", None) or gen.paragraph("en", rng.randint(3, 6))
        headings = kwargs.pop("headings", None) or ["I NTRODUCTION", "R ELATED WORK", "M ETHOD",
                                                    "C ONCLUSION"][: rng.randint(2, 4)]
        year = int(venue.split("/")[1])
        month = 9 if venue == ICLR24 else 5
        cdate = int(datetime(year - 1 if venue != WORKSHOP23 else year, month, 1 + index % 27,
                             tzinfo=UTC).timestamp() * 1000)
        header = ("Published as a conference paper at ICLR" if status == "accepted"
                  else "Under review as a conference paper at ICLR")
        spec = ArticleSpec(
            title=title.upper(), authors=["Anonymous authors", "Paper under double-blind review"],
            abstracts=[("A BSTRACT", prepare_abstract(abstract, "markdown"))],
            sections=[(f"{n} {h}", [gen.paragraph("en", rng.randint(5, 8)) for _ in range(3)])
                      for n, h in enumerate(headings, 1)],
            columns=1, running_header=f"{header} {year}",
        )
        sub = Submission(
            self._new_id(), venue, status, title, abstract, gen.sentence("en"), spec,
            len(self.subs) + 1, cdate, None if status != "accepted" else cdate + 86_400_000 * 120,
            has_pdf=status != "withdrawn", **kwargs,
        )
        sub.replies = self._replies(sub, gen)
        self.subs[sub.note_id] = sub
        return sub

    def _replies(self, sub: Submission, gen: ProseGenerator) -> list[dict[str, Any]]:
        paper = f"Paper{sub.number}" if sub.v1 else f"Submission{sub.number}"
        out = []
        for k in range(2):
            out.append({"id": self._new_id(), "replyto": sub.note_id,
                        "invitation": f"{sub.venue}/{paper}/-/Official_Review",
                        "content": {"summary": gen.paragraph("en", 2), "rating": 6 + k,
                                    "confidence": 4, "title": f"Review {k + 1}"}})
        if sub.status in ("accepted", "rejected"):
            verdict = "Accept (Poster)" if sub.status == "accepted" else "Reject"
            out.append({"id": self._new_id(), "replyto": sub.note_id,
                        "invitation": f"{sub.venue}/{paper}/-/Decision",
                        "content": {"decision": verdict, "title": "Paper Decision"}})
        return out

    def _build(self, n_docs: int) -> None:
        venues = [ICLR24, WORKSHOP23, ICLR19]
        quirky = ["under_review", "withdrawn", "desk_rejected", "rejected"]
        for i in range(n_docs):
            venue = venues[i % 3]
            status = quirky[i // 3 - 1] if 1 <= i // 3 <= len(quirky) and venue != WORKSHOP23 \
                else "accepted"
            if venue == ICLR19 and status in ("under_review", "desk_rejected"):
                status = "accepted"
            self._add(venue, status, i, hidden=("keywords",) if i == 4 else (),
                      abstract=MARKDOWN_ABSTRACT + ProseGenerator(i).paragraph("en", 3)
                      if i == 0 else None)
        first = next(s for s in self.subs.values() if s.venue == ICLR24 and s.status == "accepted")
        first.pdate = None  # never set: the date falls back to odate, then cdate
        # The same work under a second forum id: the workshop version, same PDF file.
        self._add(WORKSHOP23, "accepted", 500, title=first.title.lower().replace("(", "[")
                  .replace(")", "]"), abstract=first.abstract, same_pdf_as=first)
        # A resubmission: same title, one sentence reworded, a PDF of its own.
        other = next(s for s in self.subs.values() if s.venue == WORKSHOP23)
        reworded = other.abstract.replace(".", ", as shown below.", 1)
        self._add(ICLR24, "accepted", 501, title=other.title, abstract=reworded)

    def add_twin(self, of: Submission, venue: str) -> Submission:
        """The same work submitted to another venue: same title and abstract, its own PDF."""
        return self._add(venue, "accepted", 600 + len(self.subs), title=of.title,
                         abstract=of.abstract)

    def add_paper(self, headings: list[str]) -> Submission:
        """An accepted paper whose numbered sections have these headings (small capitals
        printed as ICLR's are: `I NTRODUCTION`)."""
        return self._add(ICLR24, "accepted", 700 + len(self.subs), headings=headings)

    # -- notes ---------------------------------------------------------------------------------

    def note(self, sub: Submission, details: str = "") -> dict[str, Any]:
        """The note as the API answers a guest (hidden fields absent)."""
        venueid = {"accepted": sub.venue, "under_review": f"{sub.venue}/Submission",
                   "withdrawn": f"{sub.venue}/Withdrawn_Submission",
                   "desk_rejected": f"{sub.venue}/Desk_Rejected_Submission",
                   "rejected": f"{sub.venue}/Rejected_Submission"}[sub.status]
        content: dict[str, Any] = {
            "title": sub.title, "abstract": sub.abstract,
            "authors": ["Zoë Ångström", "Łukasz Nowak"], "keywords": ["layout", "summarization"],
            V2_VENUES.get(sub.venue, "TL;DR"): sub.tldr,
            "venue": f"{sub.venue.split('/')[0].split('.')[0]} {sub.venue.split('/')[1]} "
                     + ("poster" if sub.status == "accepted" else "Submission"),
            "venueid": venueid,
        }
        if sub.has_pdf:
            content["pdf"] = f"/pdf/{sub.note_id.lower():0<40}.pdf"
        for name in sub.hidden:
            content.pop(name, None)
        note: dict[str, Any] = {
            "id": sub.note_id, "forum": sub.note_id, "replyto": None, "number": sub.number,
            "cdate": sub.cdate, "tcdate": sub.cdate, "tmdate": sub.cdate + 1000,
            "readers": ["everyone"], "license": "CC BY 4.0" if sub.number % 2 else "CC BY-SA 4.0",
        }
        replies = [dict(r) for r in sub.replies]
        if sub.v1:
            note.update(invitation=self._v1_invitation(sub), content=content, original=None)
            if details:
                note["details"] = {"directReplies": replies}
            return note
        note.update(
            invitations=[f"{sub.venue}/-/Submission", f"{sub.venue}/-/Post_Submission"],
            domain=sub.venue, pdate=sub.pdate, odate=None, ddate=None,
            content={k: {"value": v} for k, v in content.items()},
        )
        if details:
            for reply in replies:
                reply["invitations"] = [reply.pop("invitation")]
                reply["content"] = {k: {"value": v} for k, v in reply["content"].items()}
            note["details"] = {"replies": replies}
        return note

    @staticmethod
    def _v1_invitation(sub: Submission) -> str:
        name = {"withdrawn": "Withdrawn_Submission", "desk_rejected": "Desk_Rejected_Submission"}
        return f"{sub.venue}/-/{name.get(sub.status, 'Blind_Submission')}"

    def _notes(self, req: Request) -> Reply:
        if "notes" in self.challenge:
            return _error(403, "ChallengeRequiredError", "Challenge verification required")
        if self._once("notes-503"):
            return _error(503, "ServiceUnavailableError", "Service temporarily unavailable")
        v1 = req.path.startswith(V1_PREFIX)
        try:
            limit = int(req.arg("limit", str(MAX_LIMIT)))
            offset = int(req.arg("offset", "0"))
        except ValueError:
            return _error(400, "ValidationError", "limit and offset must be integers")
        if not 1 <= limit <= MAX_LIMIT:
            return _error(400, "ValidationError", f"limit must be <= {MAX_LIMIT}",
                          path="limit", value=limit)
        subs = sorted((s for s in self.subs.values() if s.v1 == v1), key=lambda s: s.note_id)
        venueid, invitation = req.arg("content.venueid"), req.arg("invitation")
        if venueid:
            subs = [s for s in subs if self.note(s)["content"]["venueid"] == {"value": venueid}]
        elif invitation:
            subs = [s for s in subs if invitation in (
                self._v1_invitation(s) if v1 else f"{s.venue}/-/Submission")]
        elif req.arg("forum"):
            subs = [s for s in subs if s.note_id == req.arg("forum")]
        else:
            return _error(400, "ValidationError", "a query parameter is required")
        total = len(subs)
        if req.arg("after"):
            subs = [s for s in subs if s.note_id > req.arg("after")]
        page = subs[offset: offset + limit]
        payload: dict[str, Any] = {"notes": [self.note(s, req.arg("details")) for s in page]}
        if req.arg("count") == "true":
            payload["count"] = total
        return _json(payload)

    def _groups(self, req: Request) -> Reply:
        group_id = req.arg("id")
        if group_id == "venues":
            return _json({"groups": [{"id": "venues", "members": [*V2_VENUES, ICLR19]}]})
        if group_id in V2_VENUES:
            content = {"submission_venue_id": f"{group_id}/Submission",
                       "withdrawn_venue_id": f"{group_id}/Withdrawn_Submission",
                       "desk_rejected_venue_id": f"{group_id}/Desk_Rejected_Submission",
                       "rejected_venue_id": f"{group_id}/Rejected_Submission"}
            return _json({"groups": [{"id": group_id, "domain": group_id,
                                      "content": {k: {"value": v} for k, v in content.items()}}]})
        if group_id == ICLR19:
            return _json({"groups": [{"id": group_id, "content": {"title": "ICLR 2019"}}]})
        return _error(404, "NotFoundError", f"Group Not Found: {group_id}")

    # -- login and PDFs --------------------------------------------------------------------------

    def _login(self, req: Request) -> Reply:
        try:
            body = json.loads(req.body or b"{}")
        except ValueError:
            return _error(400, "ValidationError", "body must be JSON")
        if req.method != "POST" or (body.get("id"), body.get("password")) != self.credentials:
            return _error(400, "InvalidCredentialsError", "Invalid username or password")
        token = f"tok-{self._new_id()}{self._new_id()}"
        self.tokens.add(token)
        return _json({"token": token, "user": {"id": "~Reviewer_One1"}})

    def _pdf(self, req: Request) -> Reply:
        if "pdf" in self.challenge:
            return _error(403, "ChallengeRequiredError", "Challenge verification required")
        sub = self.subs.get(req.arg("id"))
        if req.path.endswith("/attachment") and req.arg("name") != "pdf":
            return _error(400, "ValidationError", "name must be pdf")
        if sub is None:
            return _error(404, "NotFoundError", f"The Note {req.arg('id')} was not found")
        auth = req.headers.get("authorization", "")
        if auth.removeprefix("Bearer ") not in self.tokens:
            with self._lock:
                if time.time() >= self._bucket_start + self.pdf_window:
                    self._bucket_start, self._bucket_used = time.time(), 0
                self._bucket_used += 1
                used, reset = self._bucket_used, self._bucket_start + self.pdf_window
            if used > self.pdf_limit or (self.faults and self._once("pdf-429")):
                if used <= self.pdf_limit:  # a short wait, retried within the run
                    reset = time.time() + 1.0
                when = datetime.fromtimestamp(reset, UTC).isoformat(timespec="milliseconds")
                return _error(429, "RateLimitError",
                              f"Too many requests: You have made {used} requests, surpassing "
                              f"the limit of {self.pdf_limit} requests.",
                              limit=self.pdf_limit, remaining=0,
                              resetTime=when.replace("+00:00", "Z"), used=used)
        if not sub.has_pdf:
            return _error(404, "NotFoundError", f"The Note {sub.note_id} has no pdf")
        return Reply(200, sub.pdf, {"Content-Type": "application/pdf"})
