"""A real HTTP server on 127.0.0.1 that protocol modules plug routes into.

Each protocol (HAL search, file hosts, faults...) registers handlers for path prefixes. Every
request is kept in an access log so tests can prove what was, and was not, requested.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

RETRY_AFTER_ENV = "LORALAY_SANDBOX_RETRY_AFTER"


def retry_after() -> str:
    """The `Retry-After` the fakes send when they throttle: 1 second, as real services ask,
    or the delta-seconds in LORALAY_SANDBOX_RETRY_AFTER (the test suite sets 0, so the
    retry is still taken but not waited for)."""
    value = os.environ.get(RETRY_AFTER_ENV, "1").strip()
    if not value.isdigit():
        raise ValueError(f"{RETRY_AFTER_ENV}={value!r}: expected whole seconds")
    return value


@dataclass
class Request:
    method: str
    path: str  # without the query string
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes = b""  # a POST's body

    def arg(self, name: str, default: str = "") -> str:
        for key, value in self.query:
            if key == name:
                return value
        return default

    def args(self, name: str) -> list[str]:
        return [value for key, value in self.query if key == name]


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    # Optional raw writer for fault injection (trickles, truncation, missing terminators).
    stream: Callable[[BaseHTTPRequestHandler], None] | None = None


Handler = Callable[[Request], Reply]


class CallCounter:
    """How many times each key was asked for, so a fault can fire on a given call only."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def next(self, key: str) -> int:
        """Count one more call of `key` and return its 1-based number."""
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + 1
            return self._counts[key]


class FakeService:
    """What every protocol fake shares: its server, seed, fault switch, a lock and call counts."""

    def __init__(self, server: SandboxServer, seed: int, faults: bool) -> None:
        self.server = server
        self.seed = seed
        self.faults = faults
        self._lock = threading.Lock()
        self._calls = CallCounter()

    def _once(self, key: str) -> bool:
        """True the first time `key` is asked for, when faults are on (a fault that fires once)."""
        return self.faults and self._calls.next(key) == 1


@dataclass(frozen=True)
class LogEntry:
    time: float
    method: str
    path: str
    query: str
    status: int
    user_agent: str


class _QuietHTTPServer(ThreadingHTTPServer):
    """A client that drops its connection (a fault test, a killed build) is not an error of
    the fake: no traceback on the demo's terminal."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class SandboxServer:
    """Threaded HTTP server with prefix routing; use as a context manager."""

    def __init__(self) -> None:
        self.routes: list[tuple[str, Handler]] = []
        self.disallowed: list[str] = []
        self.log: list[LogEntry] = []
        self._log_lock = threading.Lock()
        self._httpd = _QuietHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None
        self.route("/robots.txt", self._robots)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def route(self, prefix: str, handler: Handler) -> None:
        """Serve every path starting with `prefix`; the longest matching prefix wins."""
        self.routes.append((prefix, handler))
        self.routes.sort(key=lambda item: len(item[0]), reverse=True)

    def disallow(self, prefix: str) -> None:
        """Add a `Disallow:` line to the one robots.txt every protocol module shares."""
        self.disallowed.append(prefix)

    def _robots(self, req: Request) -> Reply:
        lines = "".join(f"Disallow: {prefix}\n" for prefix in self.disallowed)
        return Reply(200, f"User-agent: *\n{lines}".encode(), {"Content-Type": "text/plain"})

    def requests(self, prefix: str = "") -> list[LogEntry]:
        with self._log_lock:
            return [e for e in self.log if e.path.startswith(prefix)]

    def start(self) -> SandboxServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _dispatch(self, request: Request) -> Reply:
        for prefix, handler in self.routes:
            if request.path.startswith(prefix):
                return handler(request)
        return Reply(404, b"not found", {"Content-Type": "text/plain"})

    def _record(self, request: Request, status: int, query: str) -> None:
        entry = LogEntry(
            time.time(), request.method, request.path, query, status,
            request.headers.get("user-agent", ""),
        )
        with self._log_lock:
            self.log.append(entry)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.do_GET(self.rfile.read(min(length, 1 << 20)))

            def do_GET(self, body: bytes | None = None) -> None:
                parts = urlsplit(self.path)
                request = Request(
                    "GET" if body is None else "POST",
                    parts.path,
                    parse_qsl(parts.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                    body or b"",
                )
                try:
                    reply = server._dispatch(request)
                except Exception as exc:  # a sandbox bug must show up as a 500, not a hang
                    reply = Reply(500, f"sandbox error: {exc!r}".encode())
                server._record(request, reply.status, parts.query)
                if reply.stream is not None:
                    self.close_connection = True
                    reply.stream(self)
                    return
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: object) -> None:
                return

        return _Handler
