"""OpenReview (API v1 and v2): submissions by venue, their TL;DRs and reviews, PDFs as a slow queue.

Guests may download only a few dozen PDFs an hour. A 429 whose reset lies beyond
`retry_after_max` defers that document and every later one in the run without another request;
the next run picks them up (exit 3 meanwhile). A challenge stops the crawl as `blocked`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any, ClassVar, Literal
from urllib.parse import urlsplit

from loralay_build.blobs import BlobStore
from loralay_build.corpus.columns import Column, names
from loralay_build.errors import ConfigError, Deferred, LoralayError, Reason, Reject
from loralay_build.fetch import check_pdf
from loralay_build.http import DeferredHttpError, HttpClient, HttpStatusError
from loralay_build.identity import Identity
from loralay_build.licences import LicenceMapping
from loralay_build.parse.clean import Cleaner
from loralay_build.records import Candidate
from loralay_build.source_table import SourceConfig
from loralay_build.sources.base import DiscoveryContext, DiscoveryFailure
from loralay_build.sources.command import Option, SourceCommand, given
from loralay_build.sources.openreview import scitldr
from loralay_build.sources.openreview.columns import COLUMNS
from loralay_build.sources.openreview.notes import (
    Status,
    VenueIds,
    decided_status,
    decision,
    to_candidate,
)
from loralay_build.sources.presets import configured_ids
from loralay_build.tables import check_ranges
from loralay_build.views.schema import ViewLayout

log = logging.getLogger(__name__)

USER_ENV, PASSWORD_ENV = "OPENREVIEW_USERNAME", "OPENREVIEW_PASSWORD"
MAX_PAGE = 1000  # the API's cap on `limit`


class Blocked(LoralayError):
    """The service asked for a human challenge: stop asking."""


def is_challenge(body: bytes) -> bool:
    return b"ChallengeRequired" in body or b"/challenge" in body


@dataclass(frozen=True, kw_only=True)
class OpenReviewConfig(SourceConfig):
    """`[source]` of OpenReview: venues, which submissions, with or without reviews."""

    api_url: str  # API v2; also serves /pdf?id= and /login
    api_v1_url: str  # API v1 (legacy venues)
    web_url: str  # landing pages (/forum?id=)
    venues: tuple[str, ...]  # venue ids (--venue), each discovered on its own
    api: Literal["auto", "v1", "v2"]  # auto: v2 when the venue group has v2 settings
    select: tuple[Status, ...]  # which submissions, by their outcome
    with_reviews: bool  # keep review/meta-review summaries and decisions
    page_size: int  # `limit` per /notes page
    split_ids: str | None = None  # folder of train/val/test forum-id files
    paths: ClassVar[tuple[str, ...]] = ("split_ids",)
    VIEWS: ClassVar[tuple[str, ...]] = ("cohan", "scitldr", "scitldr-full")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ranges(self, "source", at_least={"page_size": 1}, at_most={"page_size": MAX_PAGE})


def _keys(values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
    return given(venues=list(values["venues"]) or None, api=values["api"],
                 select=list(values["select"]) or None, with_reviews=values["with_reviews"],
                 split_ids=values["split_ids"])


class OpenReviewSource:
    name = "openreview"
    config_class: type[SourceConfig] = OpenReviewConfig
    command = SourceCommand(
        help="""Build from OpenReview: abstracts, author TL;DRs and optionally reviews (SciTLDR).
    Guests by default; OPENREVIEW_USERNAME/OPENREVIEW_PASSWORD log in.""",
        options=(
            Option("--venue", "Venue id, e.g. ICLR.cc/2024/Conference (repeatable; default: "
                   "[source] venues).", name="venues", multiple=True),
            Option("--api", "API version (default auto: v2 when the venue has v2 settings).",
                   kind="choice", choices=("auto", "v1", "v2")),
            Option("--select", "Submissions to keep (repeatable; default: accepted).",
                   kind="choice", multiple=True,
                   choices=("accepted", "under_review", "rejected", "withdrawn",
                            "desk_rejected")),
            Option("--with-reviews", "Keep review summaries and decisions.", kind="flag"),
            Option("--split-ids", "Folder of train/val/test forum-id files: each paper keeps "
                   "that split.", kind="folder"),
        ),
        keys=_keys,
    )
    declares: tuple[Column, ...] = COLUMNS
    columns: tuple[str, ...] = names(COLUMNS)
    card_notes = ""
    cleaners: tuple[tuple[str, Cleaner], ...] = ()
    views: tuple[ViewLayout, ...] = (scitldr.AIC, scitldr.FULL)
    row_views = scitldr.ROW_VIEWS
    demos: tuple[str, ...] = ("openreview",)
    licences = LicenceMapping()
    identity = Identity()  # a new PDF is a new tmdate

    def __init__(self) -> None:
        self._token: str | None = None
        self._logged_in = False
        self._blocked = ""  # why the crawl stopped; "" while it may go on
        self._resume_at = 0.0  # epoch seconds before which no PDF is asked for
        self._api_url = "https://api2.openreview.net"
        self._presets: dict[str, str] = {}  # forum id -> split kept from a published dataset

    # -- settings and requests ---------------------------------------------------------------

    def _headers(self, client: HttpClient) -> dict[str, str]:
        """Bearer header after a login with the environment's credentials; none for guests."""
        if not self._logged_in:
            self._logged_in = True
            user, password = os.environ.get(USER_ENV), os.environ.get(PASSWORD_ENV)
            if user and password:
                url = f"{self._api_url}/login"
                try:
                    answer = client.get_json(url, payload={"id": user, "password": password,
                                                           "expiresIn": 7 * 24 * 3600})
                except HttpStatusError as exc:
                    raise ConfigError(f"OpenReview login refused (HTTP {exc.status})") from None
                self._token = str(answer.get("token") or "") or None
                if self._token is None:
                    raise ConfigError("OpenReview login gave no token (MFA is not supported)")
        return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    def _get(self, ctx: DiscoveryContext, url: str, params: list[tuple[str, Any]]) -> Any:
        try:
            return ctx.client.get_json(url, params, headers=self._headers(ctx.client))
        except HttpStatusError as exc:
            if exc.status == 403 and is_challenge(exc.body):
                self._blocked = "challenge required"
                raise Blocked(f"challenge required by {url}; crawl stopped") from None
            raise

    # -- discovery ---------------------------------------------------------------------------

    def check_input(self, config: SourceConfig) -> None:
        """The venues and split lists, before the build creates anything."""
        if not isinstance(config, OpenReviewConfig):
            raise TypeError(f"[source] is a {type(config).__name__}, not an OpenReviewConfig")
        if not config.venues:
            raise ConfigError("no venue: give --venue (e.g. ICLR.cc/2024/Conference)")
        configured_ids(None, config.split_ids, forum_id)

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        cfg = ctx.settings(OpenReviewConfig)
        if not cfg.venues:
            raise ConfigError("no venue: give --venue (e.g. ICLR.cc/2024/Conference)")
        self._api_url = cfg.api_url
        _, self._presets = configured_ids(None, cfg.split_ids, forum_id)
        select: list[str] = list(cfg.select)
        for venue in cfg.venues:
            if self._blocked:
                ctx.failures.append(DiscoveryFailure(venue, f"skipped: {self._blocked}"))
                continue
            with ctx.isolated(venue):
                yield from self._venue(ctx, venue, select, cfg.api, cfg.page_size)

    def _venue(self, ctx: DiscoveryContext, venue: str, select: list[str], api: str,
               size: int) -> Iterator[list[Candidate]]:
        cfg = ctx.settings(OpenReviewConfig)
        v2_url = self._api_url
        group: dict[str, Any] | None = None
        if api in ("auto", "v2"):
            groups = self._get(ctx, f"{v2_url}/groups", [("id", venue)]).get("groups") or []
            group = groups[0].get("content") if groups else None
            if api == "auto":
                api = "v2" if group and "submission_venue_id" in group else "v1"
        ids = VenueIds.of(venue, group)
        log.info("OpenReview %s: API %s", venue, api)
        if api == "v2":
            pages = self._v2(ctx, v2_url, ids, select, size)
        else:
            pages = self._v1(ctx, cfg.api_v1_url, ids, select, size)
        pdf_url = f"{v2_url}/pdf"
        for notes in pages:
            batch = [to_candidate(note, ctx.dataset, ids, status, pdf_url, cfg.web_url,
                                  cfg.with_reviews)
                     for note, status in notes if "everyone" in note.get("readers", ["everyone"])]
            for cand in batch:
                if cand.source_id in self._presets:
                    cand.extra["split"] = self._presets[cand.source_id]
            if batch:
                yield batch

    def _v2(self, ctx: DiscoveryContext, url: str, ids: VenueIds, select: list[str],
            size: int) -> Iterator[list[tuple[dict[str, Any], str]]]:
        """Accepted, under review... each by `content.venueid`, paged with `after`."""
        details = [("details", "replies")] if ctx.settings(OpenReviewConfig).with_reviews else []
        for status in select:
            params: list[tuple[str, Any]] = [("content.venueid", ids.select(status)),
                                             ("limit", size), ("sort", "id"), *details]
            after = ""
            while True:
                page = [("after", after)] if after else [("count", "true")]
                notes = self._get(ctx, f"{url}/notes", params + page).get("notes") or []
                if not notes or str(notes[-1]["id"]) == after:
                    break
                after = str(notes[-1]["id"])
                yield [(note, status) for note in notes]

    def _v1(self, ctx: DiscoveryContext, url: str, ids: VenueIds, select: list[str],
            size: int) -> Iterator[list[tuple[dict[str, Any], str]]]:
        """Blind submissions classified by their Decision reply, paged with `offset`."""
        sets = [("Blind_Submission", "")]
        sets += [(f"{s.title()}_Submission", s) for s in ("withdrawn", "desk_rejected")
                 if s in select]
        for name, fixed in sets:
            offset = 0
            while True:
                params = [("invitation", f"{ids.venue}/-/{name}"), ("details", "directReplies"),
                          ("limit", size), ("offset", offset)]
                notes = self._get(ctx, f"{url}/notes", params).get("notes") or []
                if not notes:
                    break
                offset += len(notes)
                page = [(note, fixed or _v1_status(note)) for note in notes]
                yield [(note, status) for note, status in page if status in select]

    # -- download ----------------------------------------------------------------------------

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        if self._blocked:
            raise Deferred(f"crawl stopped: {self._blocked}")
        if time.time() < self._resume_at:
            raise Deferred(f"PDF limit: next download at {_clock(self._resume_at)}")

        def validate(handle: IO[bytes], url: str) -> None:
            if urlsplit(url).path.rstrip("/").endswith("/challenge"):
                self._blocked = "challenge page"
                raise Reject(Reason.BLOCKED, f"redirected to a challenge page ({url})")
            check_pdf(handle, url)

        headers = {"Accept": "application/pdf", **self._headers(client)}
        try:
            with blobs.staging() as handle:
                client.download(candidate.file_url, handle, headers=headers, validate=validate)
                return blobs.commit(handle)
        except DeferredHttpError as exc:
            wait = exc.retry_after or 3600.0
            self._resume_at = time.time() + wait
            log.warning("OpenReview PDF limit reached: the remaining downloads wait for the next "
                        "run, possible from %s (in %.0f min); run the same command again then",
                        _clock(self._resume_at), wait / 60)
            raise
        except HttpStatusError as exc:
            if exc.status == 403 and is_challenge(exc.body):
                self._blocked = "challenge required"
                raise Reject(Reason.BLOCKED, "403 ChallengeRequiredError; crawl stopped") from None
            raise


def forum_id(raw: str) -> str | None:
    """A forum id as written in a split file (`openreview:` prefix optional)."""
    value = raw.removeprefix("openreview:").strip()
    return value if value and value.replace("_", "").replace("-", "").isalnum() else None


def _v1_status(note: dict[str, Any]) -> str:
    return decided_status(decision(note))


def _clock(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")
