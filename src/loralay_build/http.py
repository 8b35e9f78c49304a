"""The one HTTP client every source uses.

Why not plain requests: it has no total deadline (a 1 byte/s trickle never times out), follows
redirects to any host, and accepts a close-delimited truncated body. This client paces each
host, retries 429/5xx honouring a capped Retry-After, enforces a total deadline and a byte cap
while streaming, and re-validates scheme, host and address on every redirect hop.
"""

from __future__ import annotations

import fnmatch
import io
import ipaddress
import json
import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import IO, Any
from urllib.parse import urlencode, urljoin, urlsplit

from loralay_build.config import HttpSettings
from loralay_build.errors import Deferred, LoralayError, TransientError

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
CHUNK = 64 * 1024
# A 500 with the same body this many times in a row is a fault of the request (a parameter the
# server cannot parse), not of the moment: retrying it again would only wait out the backoff.
IDENTICAL_FAILURES = 3
EXCERPT = 160  # characters of a server's reply quoted in an error


def excerpt(body: bytes, limit: int = EXCERPT) -> str:
    """The start of a reply on one line, for error messages."""
    text = " ".join(body[: limit * 4].decode("utf-8", "replace").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class HttpError(LoralayError):
    """A request failed for good (not worth retrying in this run)."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(f"{message} ({url})")
        self.url = url


class HttpStatusError(HttpError):
    """The server answered with a non-retryable status (404, 403, 400...).

    The message quotes the start of the reply; `requested` is the URL actually asked (after
    `url_rewrite`), kept out of the message because reject details must not depend on where
    a run's servers listen (see `describe`).
    """

    def __init__(self, url: str, status: int, body: bytes = b"", requested: str = "") -> None:
        reply = excerpt(body)
        super().__init__(url, f"HTTP {status}{': ' + reply if reply else ''}")
        self.status = status
        self.body = body
        self.requested = requested or url


class PolicyRefused(HttpError):
    """A URL or redirect target is outside the allowed schemes, hosts or addresses."""


class BodyTooLarge(HttpError):
    """The body exceeds the configured byte cap."""


class TransientHttpError(TransientError):
    """Worth retrying later: 429/5xx, timeouts, resets, truncated bodies."""

    def __init__(self, url: str, message: str, retry_after: float | None = None,
                 status: int = 0, body: bytes = b"", requested: str = "") -> None:
        reply = excerpt(body) if status else ""
        super().__init__(f"{message} ({url.split('?', 1)[0]}){': ' + reply if reply else ''}")
        self.url = url
        self.retry_after = retry_after
        self.status = status
        self.body = body
        self.requested = requested or url


class RepeatedFailure(TransientHttpError):
    """The same request failed the same way several times in a row: retried no further in
    this run (a later run tries again)."""


def describe(exc: BaseException) -> str:
    """An error on one line for a log: its message and, for an HTTP error, the whole URL
    actually requested (after `url_rewrite`, query included: often what a server objects to)."""
    requested = getattr(exc, "requested", "")
    return f"{exc} [requested {requested}]" if requested else str(exc)


class DeferredHttpError(TransientHttpError, Deferred):
    """The server asked for a wait longer than `retry_after_max`: try again in a later run."""


@dataclass(frozen=True)
class Response:
    url: str  # final URL after redirects, as the source named it (before rewriting)
    status: int
    headers: Mapping[str, str]
    size: int
    body: bytes = b""  # empty when the body was streamed to a sink


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime  # loaded with urllib3, not at start-up

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def parse_reset_time(body: bytes, now: float | None = None) -> float | None:
    """Seconds to wait from a JSON error body's `details.resetTime` (ISO time; OpenReview)."""
    try:
        reset = json.loads(body)["details"]["resetTime"]
        when = datetime.fromisoformat(str(reset).replace("Z", "+00:00"))
    except (ValueError, TypeError, KeyError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def host_allowed(host: str, patterns: tuple[str, ...]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(host.lower(), p.lower()) for p in patterns)


DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint(url: str) -> tuple[str, int] | None:
    """(host, port) a URL connects to, the port filled in from its scheme; None without a host."""
    parts = urlsplit(url)
    try:
        port = parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None
    if not parts.hostname or port is None:
        return None
    return parts.hostname.lower(), port


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def _embedded_ipv4(addr: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 host an IPv6 form reaches (mapped, 6to4, NAT64, compatible), or None."""
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr.sixtofour is not None:
        return addr.sixtofour
    if addr in _NAT64 or addr in _IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    return None


def public_address(text: str) -> bool:
    """True for a public unicast address; an IPv6 form of an IPv4 address is judged by the
    IPv4 address it carries (64:ff9b::7f00:1 is loopback, whatever its own prefix says)."""
    addr = ipaddress.ip_address(text.split("%", 1)[0])
    if not addr.is_global or addr.is_multicast:
        return False
    if isinstance(addr, ipaddress.IPv6Address):
        inner = _embedded_ipv4(addr)
        return inner is None or public_address(str(inner))
    return True


def _is_public(host: str) -> bool:
    """True when every address the host resolves to is a public unicast address."""
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
        return True  # unresolvable: the connection itself will fail, as a transient error
    return all(public_address(str(info[4][0])) for info in infos)


class AddressRefused(LoralayError):
    """A connection would go to a non-public address its configuration did not name."""


class AddressGuard:
    """Where connections may go. The addresses a host resolves to are checked and then
    connected to as they are, so a host cannot answer one address to the check and another
    to the connection (DNS rebinding).

    Endpoints the configuration names are trusted by host and port: a trusted server on
    loopback does not open the other ports of that host.
    """

    def __init__(self, trusted: Iterable[tuple[str, int]], allow_private: bool) -> None:
        self.trusted = frozenset(trusted)
        self.allow_private = allow_private

    def exempt(self, host: str, port: int) -> bool:
        return self.allow_private or (host.lower(), port) in self.trusted

    def check(self, host: str, addresses: list[str]) -> list[str]:
        """The host's resolved addresses, to connect to as they are; raises AddressRefused
        when any is not public."""
        for address in addresses:
            if not public_address(address):
                raise AddressRefused(f"host {host!r} resolves to a non-public address")
        return addresses


class HostPacer:
    """Keeps a minimum interval between two requests to the same host (thread-safe)."""

    def __init__(
        self,
        default: float,
        per_host: Mapping[str, float],
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.default = default
        self.per_host = dict(per_host)
        self.clock = clock
        self.sleep = sleep
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def wait(self, host: str) -> None:
        interval = self.per_host.get(host, self.default)
        with self._lock:
            now = self.clock()
            start = max(now, self._next.get(host, now))
            self._next[host] = start + interval
        if start > now:
            self.sleep(start - now)


class HttpClient:
    """Polite, bounded HTTP GETs. One instance per run; safe to share between threads."""

    def __init__(
        self,
        settings: HttpSettings,
        trusted_urls: Iterable[str] = (),
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        # Endpoints the configuration names, by host and port (those `url_rewrite` maps to
        # included): allowed even on loopback, because the configuration (not a server's
        # answer) pointed there.
        named = [*trusted_urls, *settings.url_rewrite.values()]
        self.trusted = frozenset(e for e in map(endpoint, named) if e is not None)
        self.sleep = sleep
        self.clock = clock
        self.pacer = HostPacer(settings.min_interval, settings.host_intervals, clock, sleep)
        self.guard = AddressGuard(self.trusted, settings.allow_private)
        self._pool: Any = None  # urllib3's pools (`_connections`)
        self._pool_made = threading.Lock()
        self.requests_made = 0

    # -- public API -------------------------------------------------------------------------

    def get(
        self,
        url: str,
        params: Mapping[str, Any] | list[tuple[str, Any]] | None = None,
        headers: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
    ) -> Response:
        """GET into memory, with retries; raises HttpStatusError on a final non-2xx status."""
        buffer = io.BytesIO()
        resp = self.download(url, buffer, params=params, headers=headers, max_bytes=max_bytes)
        return Response(resp.url, resp.status, resp.headers, resp.size, buffer.getvalue())

    def get_json(
        self,
        url: str,
        params: Mapping[str, Any] | list[tuple[str, Any]] | None = None,
        headers: Mapping[str, str] | None = None,
        payload: Any = None,
    ) -> Any:
        """GET a JSON document (POST `payload` as JSON when given); a body that does not
        parse (a cut answer) is retried like any other transient failure."""
        parsed: list[Any] = []

        def validate(sink: IO[bytes], final_url: str) -> None:
            sink.seek(0)
            try:
                parsed[:] = [json.load(sink)]
            except ValueError as exc:
                raise TransientHttpError(final_url, f"invalid JSON body: {exc}") from exc

        sent = {**(headers or {}), "Accept": "application/json"}
        data = None
        if payload is not None:
            data = json.dumps(payload).encode()
            sent["Content-Type"] = "application/json"
        self.download(url, io.BytesIO(), params=params, headers=sent, validate=validate,
                      data=data)
        return parsed[0]

    def download(
        self,
        url: str,
        sink: IO[bytes],
        params: Mapping[str, Any] | list[tuple[str, Any]] | None = None,
        headers: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        validate: Callable[[IO[bytes], str], None] | None = None,
        data: bytes | None = None,
    ) -> Response:
        """Stream a GET (a POST of `data` when given) into `sink`, retrying transient
        failures within this run.

        The sink is truncated before each try, so it never holds a mix of two attempts.
        `validate(sink, url)` runs after each complete answer; a TransientHttpError it raises
        (e.g. a body cut without Content-Length) is retried like any other.
        """
        if params:
            url = f"{url}{'&' if '?' in url else '?'}{urlencode(params, doseq=True)}"
        cap = self.settings.max_bytes if max_bytes is None else max_bytes
        attempt = 0
        same: list[tuple[int, bytes]] = []  # the last identical 500s
        while True:
            sink.seek(0)
            sink.truncate()
            try:
                response = self._follow(url, sink, dict(headers or {}), cap, data)
                if validate is not None:
                    validate(sink, response.url)
                return response
            except TransientHttpError as exc:
                wait = exc.retry_after
                if wait is not None and wait > self.settings.retry_after_max:
                    raise DeferredHttpError(
                        exc.url, f"Retry-After {wait:.0f}s exceeds the cap; deferred", wait
                    ) from exc
                if attempt >= self.settings.max_retries:
                    raise
                same = self._repeated(same, exc)
                delay = wait if wait is not None else self._backoff(attempt)
                log.info("retrying %s in %.1fs: %s", url.split("?", 1)[0], delay, exc)
                self.sleep(delay)
                attempt += 1

    # -- internals ----------------------------------------------------------------------------

    @staticmethod
    def _repeated(same: list[tuple[int, bytes]],
                  exc: TransientHttpError) -> list[tuple[int, bytes]]:
        """The run of identical 500 answers so far; raises once it reaches the cap."""
        answer = (exc.status, exc.body)
        if exc.status != 500 or (same and same[-1] != answer):
            return [answer] if exc.status == 500 else []
        same = [*same, answer]
        if len(same) >= IDENTICAL_FAILURES:
            raise RepeatedFailure(
                exc.url, f"HTTP 500 {len(same)} times with the same answer, not retried further",
                status=500, body=exc.body, requested=exc.requested,
            ) from exc
        return same

    def _backoff(self, attempt: int) -> float:
        base = min(self.settings.backoff_max, self.settings.backoff_base * 2.0**attempt)
        return float(base * (0.5 + random.random() / 2))

    def _physical(self, url: str) -> str:
        for prefix, replacement in self.settings.url_rewrite.items():
            if url.startswith(prefix):
                return replacement + url[len(prefix) :]
        return url

    def _check(self, url: str) -> tuple[str, str]:
        """Validate a logical URL's scheme and host and return (host, physical URL). Its
        addresses are checked by the connection itself (AddressGuard)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise PolicyRefused(url, f"scheme {parts.scheme or '(none)'!r} not allowed")
        host = parts.hostname or ""
        physical = self._physical(url)
        if (physical == url and endpoint(url) not in self.trusted
                and not host_allowed(host, self.settings.allowed_hosts)):
            raise PolicyRefused(url, f"host {host!r} not in the allow-list")
        return host, physical

    def _follow(self, url: str, sink: IO[bytes], headers: dict[str, str], cap: int,
                data: bytes | None = None) -> Response:
        headers.setdefault("User-Agent", self.settings.user_agent)
        headers.setdefault("Accept-Encoding", "identity")
        deadline = self.clock() + self.settings.deadline
        for _hop in range(self.settings.max_redirects + 1):
            host, physical = self._check(url)
            self.pacer.wait(host)
            self.requests_made += 1
            status, resp_headers, size = self._once(url, physical, sink, headers, cap, deadline,
                                                    data)
            if status in (301, 302, 303, 307, 308):
                location = resp_headers.get("location")
                if not location:
                    raise HttpError(url, f"HTTP {status} without Location")
                url = urljoin(url, location)
                sink.seek(0)
                sink.truncate()
                continue
            if status in RETRY_STATUSES:
                sink.seek(0)
                body = sink.read(4096)
                wait = parse_reset_time(body)
                if wait is None:
                    wait = parse_retry_after(resp_headers.get("retry-after"))
                raise TransientHttpError(url, f"HTTP {status}", wait, status=status,
                                         body=body[:2048], requested=physical)
            if not 200 <= status < 300:
                sink.seek(0)
                body = sink.read(2048)
                raise HttpStatusError(url, status, body, requested=physical)
            return Response(url, status, resp_headers, size)
        raise PolicyRefused(url, f"more than {self.settings.max_redirects} redirects")

    def _connections(self, http_pool: ModuleType) -> Any:
        """urllib3's pool manager, made by the first request (of whichever thread)."""
        with self._pool_made:
            if self._pool is None:
                self._pool = http_pool.pool_manager(
                    self.guard, self.settings.connect_timeout, self.settings.read_timeout)
            return self._pool

    def _once(
        self,
        url: str,
        physical: str,
        sink: IO[bytes],
        headers: Mapping[str, str],
        cap: int,
        deadline: float,
        data: bytes | None = None,
    ) -> tuple[int, dict[str, str], int]:
        remaining = deadline - self.clock()
        if remaining <= 0:
            raise TransientHttpError(url, f"deadline of {self.settings.deadline:.0f}s")
        from loralay_build import http_pool  # urllib3: loaded by the first request

        pool = self._connections(http_pool)
        # No single wait (connect, or one read) may outlast what is left of the deadline.
        timeout = http_pool.Timeout(
            connect=min(self.settings.connect_timeout, remaining),
            read=min(self.settings.read_timeout, remaining),
        )
        http_pool.header_deadline.value = time.monotonic() + remaining
        try:
            resp = pool.request(
                "GET" if data is None else "POST", physical, body=data, headers=dict(headers),
                preload_content=False, redirect=False, timeout=timeout,
            )
        except AddressRefused as exc:
            raise PolicyRefused(url, str(exc)) from exc
        except http_pool.Urllib3Error as exc:
            if self.clock() >= deadline:
                raise TransientHttpError(
                    url, f"deadline of {self.settings.deadline:.0f}s (waiting for headers)"
                ) from exc
            raise TransientHttpError(url, f"connection failed: {type(exc).__name__}") from exc
        finally:
            http_pool.header_deadline.value = None
        try:
            resp_headers = {k.lower(): v for k, v in resp.headers.items()}
            declared = resp_headers.get("content-length", "")
            if declared.isdigit() and int(declared) > cap:
                raise BodyTooLarge(url, f"Content-Length {declared} exceeds {cap} bytes")
            size = 0
            while True:
                if self.clock() > deadline:
                    raise TransientHttpError(url, f"deadline of {self.settings.deadline:.0f}s")
                chunk = resp.read1(CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > cap:
                    raise BodyTooLarge(url, f"body exceeds {cap} bytes")
                sink.write(chunk)
            return resp.status, resp_headers, size
        except http_pool.DecodeError as exc:  # a broken or too deep Content-Encoding: no retry
            resp.close()
            raise HttpError(url, f"undecodable body: {exc}") from exc
        except http_pool.Urllib3Error as exc:
            resp.close()
            raise TransientHttpError(url, f"body incomplete: {type(exc).__name__}") from exc
        except BaseException:
            # A body abandoned mid-way must not go back to the pool: the next request on that
            # socket would read the rest of this body as its own answer.
            resp.close()
            raise
        finally:
            resp.release_conn()
