"""Cellar content negotiation: one act or summary in one language and format.

Answers: 200 body; 300 Multiple Choices for a multi-part act (each `DOC_n` fetched in order);
404 when that language or format does not exist (not an error); 400 when we asked wrongly
(the run stops). A WAF challenge from any host is never content; a host that challenges
several resources in a row is left alone for a while (`ChallengeGuard`).
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from loralay_build.blobs import BlobStore
from loralay_build.errors import ConfigError, Deferred, Reason, Reject
from loralay_build.fetch import check_pdf
from loralay_build.http import HttpClient, HttpStatusError
from loralay_build.source_table import SourceConfig
from loralay_build.sources.eurlex.text import is_missing_page, is_waf_challenge
from loralay_build.state import State
from loralay_build.tables import check_ranges

log = logging.getLogger(__name__)

# ISO 639-1 (dataset suffix) -> ISO 639-2/T (Cellar's Accept-Language, authority table codes).
LANGUAGES = {
    "bg": "bul", "es": "spa", "cs": "ces", "da": "dan", "de": "deu", "et": "est", "el": "ell",
    "en": "eng", "fr": "fra", "ga": "gle", "hr": "hrv", "it": "ita", "lv": "lav", "lt": "lit",
    "hu": "hun", "mt": "mlt", "nl": "nld", "pl": "pol", "pt": "por", "ro": "ron", "sk": "slk",
    "sl": "slv", "fi": "fin", "sv": "swe",
}
DOC_PART = re.compile(r"""href=["']([^"']*/DOC_(\d+))["']""")
PDF_TYPE = "application/pdf"
XHTML_TYPE = "application/xhtml+xml"
SUMMARY_TYPE = "application/xhtml+xml;type=xhtml5"


class HostChallenged(Deferred):
    """A host challenged several resources in a row: not asked again until its pause ends,
    so what needs it waits for a later run (exit 3) without using up an attempt."""


@dataclass(frozen=True, kw_only=True)
class CellarConfig(SourceConfig):
    """`[source]` keys of the requests to Cellar and EUR-Lex: bot challenges and the website."""

    eurlex_url: str  # website: only a fallback for a missing XHTML
    waf_retries: int  # a bot challenge is retried this often, then `blocked`
    waf_backoff: float  # first pause after a challenge (doubles each time)
    waf_backoff_max: float  # longest pause after a challenge
    waf_host_limit: int  # resources challenged in a row before a host is left alone
    waf_host_pause: float  # seconds a challenging host is not asked (other languages too)
    waf_log: str  # level of the line each challenge logs

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ranges(self, "source", at_least={"waf_retries": 0, "waf_backoff": 0,
                                               "waf_backoff_max": 0, "waf_host_limit": 1,
                                               "waf_host_pause": 0})
        self.waf_log_level()

    def waf_log_level(self) -> int:
        """The level of a challenge's log line; ConfigError for an unknown name."""
        level = logging.getLevelNamesMapping().get(self.waf_log.upper())
        if level is None:
            raise ConfigError(f"[source] waf_log = {self.waf_log!r}: must be a log level such "
                              "as info or warning")
        return level


class ChallengeGuard:
    """Bot challenges per host, as OpenReview's crawler stops at its challenge.

    A resource whose tries all ended in a challenge adds one to its host's streak; any other
    answer from the host clears it. While the streak is not empty the next resource gets one
    try only. At `waf_host_limit` resources in a row the host is stopped: the time goes into a
    state mark, so the other language builds of the command, and runs within
    `waf_host_pause` seconds, do not ask it either.
    """

    MARK_SCOPE = "eurlex"

    def __init__(self, state: State | None, cfg: CellarConfig) -> None:
        self.state = state
        self.limit = cfg.waf_host_limit
        self.pause = cfg.waf_host_pause
        self.streak: dict[str, int] = {}
        self.stopped: set[str] = set()  # hosts this guard refused to ask

    @staticmethod
    def host(url: str) -> str:
        return urlsplit(url).netloc.lower()

    def _mark(self, host: str) -> str:
        return f"challenged:{host}"

    def check(self, url: str) -> None:
        """Raises HostChallenged when `url`'s host is stopped."""
        host = self.host(url)
        since = self.state.get_mark(self.MARK_SCOPE, self._mark(host)) if self.state else None
        if host in self.stopped or (since and time.time() < float(since) + self.pause):
            self.stopped.add(host)
            until = time.strftime("%H:%M", time.localtime(float(since or time.time())
                                                            + self.pause))
            raise HostChallenged(f"{host} answered bot challenges; not asked again before "
                                 f"{until} (waf_host_pause)")

    def retries(self, url: str, configured: int) -> int:
        return configured if not self.streak.get(self.host(url)) else 0

    def passed(self, url: str) -> None:
        self.streak[self.host(url)] = 0

    def challenged(self, url: str) -> None:
        """One more resource ended in a challenge; raises HostChallenged at the limit."""
        host = self.host(url)
        self.streak[host] = self.streak.get(host, 0) + 1
        if self.streak[host] >= self.limit:
            log.warning("%s challenged %d resources in a row: not asked again for %.0f s; "
                        "what needs it waits for the next run", host, self.streak[host],
                        self.pause)
            if self.state is not None:
                self.state.set_mark(self.MARK_SCOPE, self._mark(host), repr(time.time()))
            self.stopped.add(host)
            raise HostChallenged(f"{host} answered bot challenges to {self.streak[host]} "
                                 "resources in a row; the rest waits for the next run")


def guarded_get(client: HttpClient, url: str, headers: dict[str, str],
                cfg: CellarConfig, guard: ChallengeGuard | None = None) -> bytes:
    """GET a body that is never a WAF challenge (202, `x-amzn-waf-action`, script markers):
    a challenge is retried after a growing pause and ends as a `blocked` reject, or, when
    its host keeps challenging, as HostChallenged (see ChallengeGuard). Each challenge is
    logged at `waf_log` (a sandbox's challenges are expected: info)."""
    guard = guard or ChallengeGuard(None, cfg)
    guard.check(url)
    pause = cfg.waf_backoff
    retries = guard.retries(url, cfg.waf_retries)
    for attempt in range(retries + 1):
        sink = io.BytesIO()
        try:
            response = client.download(url, sink, headers=headers)
        except HttpStatusError as exc:
            if exc.status == 300:  # the whole list of parts (the error keeps only 2 KB)
                raise _MultiPart(sink.getvalue()) from exc
            raise
        body = sink.getvalue()
        if not is_waf_challenge(response.status, response.headers, body):
            guard.passed(url)
            return body
        if attempt < retries:
            wait = min(pause, cfg.waf_backoff_max)
            log.log(cfg.waf_log_level(), "bot challenge at %s; trying again in %.1fs", url, wait)
            client.sleep(wait)
            pause *= 2
    guard.challenged(url)
    raise Reject(Reason.BLOCKED, f"bot challenge at {url} ({headers.get('Accept-Language')})")


def negotiate(client: HttpClient, url: str, accept: str, lang: str,
              cfg: CellarConfig, guard: ChallengeGuard | None = None) -> bytes | None:
    """One content-negotiated GET: the body; None on 404 (that language or format is missing).

    A 400 means we asked wrongly: the run stops. A 300 (multi-part act) is raised as
    `_MultiPart` with its list of parts. A WAF challenge ends as a `blocked` reject.
    """
    headers = {"Accept": accept, "Accept-Language": LANGUAGES[lang]}
    try:
        return guarded_get(client, url, headers, cfg, guard)
    except HttpStatusError as exc:
        if exc.status == 404:
            return None
        if exc.status == 400:
            raise ConfigError(f"Cellar refused {url} with Accept {accept!r}, "
                              f"Accept-Language {LANGUAGES[lang]!r} (HTTP 400): a request "
                              "this tool should never make") from exc
        raise


def eurlex_page(client: HttpClient, celex: str, lang: str, cfg: CellarConfig,
                guard: ChallengeGuard | None = None) -> bytes | None:
    """The act's bare text page on the EUR-Lex website: the configured fallback when Cellar
    has no XHTML. None when missing (404 or a "does not exist" page)."""
    url = f"{cfg.eurlex_url}legal-content/{lang.upper()}/TXT/HTML/?uri=CELEX:{celex}"
    try:
        body = guarded_get(client, url, {"Accept": "text/html"}, cfg, guard)
    except HttpStatusError as exc:
        if exc.status in (404, 410):
            return None
        raise
    return None if is_missing_page(body) else body


class _MultiPart(Exception):
    """Cellar answered 300 Multiple Choices: the act is published in several parts."""

    def __init__(self, body: bytes) -> None:
        super().__init__("300 Multiple Choices")
        self.body = body


def negotiate_parts(client: HttpClient, url: str, accept: str, lang: str,
                     cfg: CellarConfig, guard: ChallengeGuard | None = None) -> list[bytes]:
    """Every part of the act in `lang` and format `accept`, in DOC_n order ([] when missing)."""
    try:
        body = negotiate(client, url, accept, lang, cfg, guard)
    except _MultiPart as multi:
        listing = multi.body
    else:
        return [] if body is None else [body]
    links = sorted({(int(n), href) for href, n in DOC_PART.findall(
        listing.decode("utf-8", "replace"))})
    if not links:
        raise Reject(Reason.UNAVAILABLE, f"300 from {url} without DOC_n links")
    parts = []
    for _n, href in links:
        part = negotiate(client, href, accept, lang, cfg, guard)
        if part is None:
            raise Reject(Reason.UNAVAILABLE, f"part {href} of a multi-part act is missing")
        parts.append(part)
    return parts


def store_pdf(parts: list[bytes], blobs: BlobStore, url: str) -> str:
    """One PDF, or the parts of a multi-part act joined in order (pages keep their order)."""
    data = parts[0] if len(parts) == 1 else _join_pdfs(parts)
    with blobs.staging() as handle:
        handle.write(data)
        check_pdf(handle, url)
        return blobs.commit(handle)


def _join_pdfs(parts: list[bytes]) -> bytes:
    import pypdfium2 as pdfium

    joined = pdfium.PdfDocument.new()
    try:
        for part in parts:
            source = pdfium.PdfDocument(part)
            try:
                joined.import_pages(source)
            finally:
                source.close()
        out = io.BytesIO()
        joined.save(out)
        return _reproducible(out.getvalue(), hashlib.sha256(b"".join(parts)).hexdigest())
    except pdfium.PdfiumError as exc:
        raise Reject(Reason.CORRUPTED, f"cannot join the parts of a multi-part act: {exc}") \
            from exc
    finally:
        joined.close()


_CREATION_DATE = re.compile(rb"/CreationDate\([^)]*\)")
_FILE_ID = re.compile(rb"/ID\s*\[\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*\]")


def _reproducible(pdf: bytes, digest: str) -> bytes:
    """The joined PDF with its save time blanked and its file id taken from the parts, so the
    same parts always give the same bytes (and blob). Replacements keep every byte offset."""
    pdf = _CREATION_DATE.sub(lambda m: b" " * len(m.group(0)), pdf)

    def file_id(match: re.Match[bytes]) -> bytes:
        whole = match.group(0)
        for group in (1, 2):
            old = match.group(group)
            whole = whole.replace(old, digest.upper()[: len(old)].encode().ljust(len(old), b"0"))
        return whole

    return _FILE_ID.sub(file_id, pdf)
