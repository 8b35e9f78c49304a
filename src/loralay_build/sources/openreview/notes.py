"""OpenReview notes (API v1 and v2) to candidates: one parser per API shape, one mapping.

v2 wraps every content value as `{"value": ...}` and lists `invitations`; v1 has bare values
and a singular `invitation`. Hidden fields are simply absent for guests. TL;DRs are stored
under `TL;DR` or `TLDR` depending on the venue and year; the key read is recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from loralay_build.records import Candidate

TLDR_KEYS = ("TL;DR", "TLDR", "tldr", "TL;DR:")
REVIEW_KINDS = ("Official_Review", "Meta_Review", "Decision")
SUMMARY_KEYS = ("summary", "summary_of_the_paper", "review", "metareview", "comment")
YEAR = re.compile(r"(?<!\d)(19|20)\d\d(?!\d)")


@dataclass(frozen=True)
class VenueIds:
    """The venue ids a venue's submissions carry in `content.venueid` once classified."""

    venue: str
    submission: str
    withdrawn: str
    desk_rejected: str
    rejected: str

    @classmethod
    def of(cls, venue: str, group_content: dict[str, Any] | None = None) -> VenueIds:
        """From the venue group's settings, with OpenReview's conventional names as fallback."""
        content = {k: value(v) for k, v in (group_content or {}).items()}

        def pick(key: str, default: str) -> str:
            found = content.get(key)
            return found if isinstance(found, str) and found else f"{venue}/{default}"

        return cls(
            venue=venue,
            submission=pick("submission_venue_id", "Submission"),
            withdrawn=pick("withdrawn_venue_id", "Withdrawn_Submission"),
            desk_rejected=pick("desk_rejected_venue_id", "Desk_Rejected_Submission"),
            rejected=pick("rejected_venue_id", "Rejected_Submission"),
        )

    def select(self, status: str) -> str:
        """The `content.venueid` value of a status (accepted, under_review, ...)."""
        return {
            "accepted": self.venue, "under_review": self.submission,
            "withdrawn": self.withdrawn, "desk_rejected": self.desk_rejected,
            "rejected": self.rejected,
        }[status]

    def status(self, venueid: str) -> str:
        """The selection status a `content.venueid` value stands for."""
        for name in ("accepted", "under_review", "withdrawn", "desk_rejected", "rejected"):
            if venueid == self.select(name):
                return name
        return ""


Status = Literal["accepted", "under_review", "withdrawn", "desk_rejected", "rejected"]
STATUSES: tuple[str, ...] = get_args(Status)


def value(field: Any) -> Any:
    """A v2 `{"value": x}` unwrapped; a v1 bare value as is."""
    if isinstance(field, dict) and "value" in field:
        return field["value"]
    return field


def text(content: dict[str, Any], key: str) -> str:
    found = value(content.get(key))
    return found.strip() if isinstance(found, str) else ""


def invitations(note: dict[str, Any]) -> list[str]:
    """v2 `invitations` or v1 `invitation`, as a list."""
    found = note.get("invitations")
    if isinstance(found, list):
        return [str(i) for i in found]
    single = note.get("invitation")
    return [str(single)] if single else []


def note_date(note: dict[str, Any]) -> str:
    """`pdate`, else `odate`, else `cdate` (epoch milliseconds) as YYYY-MM-DD; "" if none."""
    for key in ("pdate", "odate", "cdate"):
        stamp = note.get(key)
        if isinstance(stamp, int | float) and stamp > 0:
            return datetime.fromtimestamp(stamp / 1000, UTC).strftime("%Y-%m-%d")
    return ""


def venue_year(venue: str) -> int | None:
    found = YEAR.search(venue)
    return int(found.group(0)) if found else None


def tldr(content: dict[str, Any]) -> tuple[str, str]:
    """(TL;DR text, key it was read from); ("", "") when the note has none."""
    for key in TLDR_KEYS:
        found = text(content, key)
        if found:
            return found, key
    return "", ""


def _score(content: dict[str, Any], key: str) -> str:
    found = value(content.get(key))
    return "" if found is None else str(found)


def reviews(note: dict[str, Any]) -> list[dict[str, str]]:
    """Reviews, meta-reviews and decisions among the note's replies, as typed records."""
    details = note.get("details") or {}
    replies = details.get("replies") or details.get("directReplies") or []
    out = []
    for reply in replies:
        kinds = [k for inv in invitations(reply) for k in REVIEW_KINDS if inv.endswith(f"/{k}")]
        if not kinds:
            continue
        content = reply.get("content") or {}
        summary = next((text(content, k) for k in SUMMARY_KEYS if text(content, k)), "")
        out.append({
            "kind": kinds[0], "note_id": str(reply.get("id", "")),
            "title": text(content, "title"), "summary": summary,
            "rating": _score(content, "rating"), "confidence": _score(content, "confidence"),
            "decision": text(content, "decision"),
        })
    return out


def decision(note: dict[str, Any]) -> str:
    """The decision text of the note's visible Decision reply, as written; "" if none."""
    for review in reviews(note):
        if review["kind"] == "Decision" and review["decision"]:
            return review["decision"]
    return ""


def decided_status(text: str) -> str:
    """The status a decision text stands for ("Accept (Poster)" -> accepted).

    An invitation to a workshop track is not an acceptance by the venue: rejected. A text
    naming no outcome leaves the submission under review.
    """
    found = text.casefold()
    if "withdr" in found:
        return "withdrawn"
    if "desk" in found and "reject" in found:
        return "desk_rejected"
    if "reject" in found or "workshop" in found:
        return "rejected"
    return "accepted" if "accept" in found else "under_review"


def to_candidate(note: dict[str, Any], dataset: str, venue: VenueIds, status: str,
                 pdf_url: str, web_url: str, with_reviews: bool) -> Candidate:
    """Map one submission note (either API shape) to a Candidate.

    `status` is the normalised outcome (one of STATUSES): v2 reads it from the note's venue
    id, v1 from its invitation or decision text (`decided_status`).
    """
    content = note.get("content") or {}
    note_id = str(note["id"])
    tldr_text, tldr_key = tldr(content)
    keywords = value(content.get("keywords"))
    year = venue_year(venue.venue)
    columns: dict[str, Any] = {
        "abstract_original": text(content, "abstract"),
        "tldr": tldr_text or None,
        "tldr_key": tldr_key or None,
        "venue": text(content, "venue") or venue.venue,
        "venue_id": venue.venue,
        "year": year,
        "decision": decision(note) or None,
        "status": status,
        "keywords": [str(k) for k in keywords] if isinstance(keywords, list) else [],
        "reviews": reviews(note) if with_reviews else [],
    }
    return Candidate(
        id=f"openreview:{note_id}",
        source="openreview",
        source_id=note_id,
        dataset=dataset,
        title=text(content, "title"),
        language="en",
        abstracts={"en": text(content, "abstract")} if text(content, "abstract") else {},
        published=note_date(note),
        file_url=f"{pdf_url}?id={note_id}" if value(content.get("pdf")) else "",
        landing_url=f"{web_url}/forum?id={note.get('forum') or note_id}",
        licence=str(note.get("license") or ""),
        extra={"columns": columns, "status": status, "tmdate": note.get("tmdate")},
    )
