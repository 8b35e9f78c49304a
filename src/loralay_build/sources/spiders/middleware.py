"""Downloader middlewares and resolver: HttpClient's request policy (schemes, hosts, public
addresses, a total deadline) for Scrapy crawls, and Retry-After retries that do not block
other requests."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.resolver import CachingThreadedResolver
from twisted.internet.defer import Deferred
from twisted.internet.error import DNSLookupError

from loralay_build.http import _is_public, endpoint, host_allowed, parse_retry_after, public_address

log = logging.getLogger(__name__)

STATUSES = (429, 503)
DEADLINE_KEY = "loralay_deadline"


class PolicyMiddleware:
    """The HttpClient's policy on every request a spider makes, redirects included (Scrapy
    sends a redirect's new request through the downloader middlewares again).

    Endpoints the configuration named (host and port) are trusted, as in HttpClient; any
    other must match the allow-list and resolve to public addresses only (`PolicyResolver`
    holds the connection to the addresses so checked). The deadline
    covers every try and hop of one request: Scrapy's own timeout restarts on each.
    """

    def __init__(self, allowed: tuple[str, ...], trusted: frozenset[tuple[str, int]],
                 allow_private: bool,
                 deadline: float) -> None:
        self.allowed = allowed
        self.trusted = trusted
        self.allow_private = allow_private
        self.deadline = deadline

    @classmethod
    def from_crawler(cls, crawler: object) -> PolicyMiddleware:
        settings = crawler.settings  # type: ignore[attr-defined]
        return cls(tuple(settings.getlist("POLICY_ALLOWED_HOSTS")),
                   trusted_endpoints(settings.getlist("POLICY_TRUSTED_ENDPOINTS")),
                   settings.getbool("POLICY_ALLOW_PRIVATE"),
                   settings.getfloat("POLICY_DEADLINE", 300.0))

    def process_request(self, request: Request) -> None:
        parts = urlsplit(request.url)
        host = parts.hostname or ""
        if parts.scheme not in ("http", "https"):
            self._refuse(request, f"scheme {parts.scheme or '(none)'!r} not allowed")
        if endpoint(request.url) not in self.trusted:
            if not host_allowed(host, self.allowed):
                self._refuse(request, f"host {host!r} not in the allow-list")
            if not self.allow_private and not _is_public(host):
                self._refuse(request, f"host {host!r} resolves to a non-public address")
        now = time.monotonic()
        end = float(request.meta.setdefault(DEADLINE_KEY, now + self.deadline))
        if now >= end:
            self._refuse(request, f"deadline of {self.deadline:.0f}s")
        timeout = float(request.meta.get("download_timeout", self.deadline))
        request.meta["download_timeout"] = min(timeout, end - now)

    @staticmethod
    def _refuse(request: Request, why: str) -> None:
        log.warning("refused %s: %s", request.url, why)
        raise IgnoreRequest(f"refused: {why} ({request.url})")


class PolicyResolver(CachingThreadedResolver):
    """Scrapy's resolver, refusing a non-public answer for a host the configuration did not
    name: the connection uses the address resolved here, so a host cannot answer a public
    address to the policy's check and a private one to the connection (DNS rebinding)."""

    def __init__(self, reactor: Any, cache_size: int, timeout: float,
                 trusted: frozenset[str], allow_private: bool) -> None:
        super().__init__(reactor, cache_size, timeout)
        self.trusted = trusted
        self.allow_private = allow_private

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> PolicyResolver:
        settings = crawler.settings
        trusted = trusted_endpoints(settings.getlist("POLICY_TRUSTED_ENDPOINTS"))
        return cls(reactor,
                   settings.getint("DNSCACHE_SIZE") if settings.getbool("DNSCACHE_ENABLED") else 0,
                   settings.getfloat("DNS_TIMEOUT"), frozenset(host for host, _ in trusted),
                   settings.getbool("POLICY_ALLOW_PRIVATE"))

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        answer: Deferred[str] = super().getHostByName(name, timeout)
        if not self.allow_private and name.lower() not in self.trusted:
            answer.addCallback(self._public, name)
        return answer

    @staticmethod
    def _public(address: str, name: str) -> str:
        if not public_address(address):
            log.warning("refused %s: it resolves to a non-public address", name)
            raise DNSLookupError(f"refused: {name!r} resolves to a non-public address")
        return address


def trusted_endpoints(items: list[str]) -> frozenset[tuple[str, int]]:
    """("host", port) pairs from "host:port" settings."""
    pairs = (item.rsplit(":", 1) for item in items)
    return frozenset((host.lower(), int(port)) for host, port in pairs)


class RetryAfterMiddleware:
    """Scrapy's RetryMiddleware ignores Retry-After; this one waits for it (at most `cap`)."""

    def __init__(self, cap: float, times: int, default: float) -> None:
        self.cap = cap
        self.times = times
        self.default = default

    @classmethod
    def from_crawler(cls, crawler: object) -> RetryAfterMiddleware:
        settings = crawler.settings  # type: ignore[attr-defined]
        return cls(settings.getfloat("RETRY_AFTER_MAX", 60.0),
                   settings.getint("RETRY_AFTER_TIMES", 3),
                   settings.getfloat("RETRY_AFTER_DEFAULT", 5.0))

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        if response.status not in STATUSES:
            return response
        tries = int(request.meta.get("retry_after_tries", 0))
        if tries >= self.times:
            log.warning("giving up on %s after %d answers %d", request.url, tries,
                        response.status)
            return response
        header = response.headers.get(b"Retry-After")
        wait = parse_retry_after(header.decode("latin-1") if header else None)
        delay = min(self.cap, self.default if wait is None else wait)
        log.info("HTTP %d from %s: retrying in %.1fs", response.status, request.url, delay)
        await asyncio.sleep(delay)
        retry = request.replace(dont_filter=True)
        retry.meta["retry_after_tries"] = tries + 1
        return retry
