"""Retry 429/503 after the server's Retry-After (capped), without blocking other requests."""

from __future__ import annotations

import asyncio
import logging

from scrapy import Request
from scrapy.http import Response

from loralay_build.http import parse_retry_after

log = logging.getLogger(__name__)

STATUSES = (429, 503)


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
