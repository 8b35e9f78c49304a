"""HTTP fault injection on a `SandboxServer`: every way a download can go wrong, on loopback.

Why: the HTTP client's limits (deadline, byte cap, retries, redirect policy) only count if
they hold against a real socket misbehaving. Each route reproduces one fault; the server's
access log then shows which requests arrived, and which never did.

Routes, all under `/faults/`:

- `status/<code>?times=N&retry_after=V`  the first N requests of this exact URL answer `code`
  (with `Retry-After: V` when given), later ones the PDF
- `pdf`                                  a small complete PDF
- `html`                                 a 200 HTML page where a PDF was promised
- `slow-headers?delay=S`                 nothing for S seconds, then the PDF
- `trickle?seconds=S&every=I`            a declared body sent one byte every I s (1) for S s
- `header-trickle?seconds=S&every=I`     the status line and headers sent one byte every I s
                                         (0.5) for S s
- `short-length`                         Content-Length 100,000, 5,000 bytes sent, then close
- `short-close`                          no Content-Length, half the PDF, then close
- `chunked-open`                         chunked encoding, two chunks, no terminator, close
- `gzip-bomb?mib=N`                      `Content-Encoding: gzip` inflating to N MiB of zeros
- `gzip-chain?depth=N`                   the PDF gzipped N times, each layer declared
- `huge-length`                          a 10 GiB Content-Length
- `endless?mib=N`                        N MiB without Content-Length (close-delimited)
- `redirect?to=URL`                      302 to any Location (file:, data:, ftp:, hosts...)
- `loop/<n>`                             302 to `loop/<n+1>`, forever
- `private`                              must never be requested (redirect target of refusals)
"""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

from loralay_build.sandbox.server import Reply, Request, SandboxServer

PREFIX = "/faults/"
MiB = 1024 * 1024
MAX_STREAM_SECONDS = 60.0  # no fault route keeps a connection longer than this

# A minimal one-page PDF: magic at the start, %%EOF at the end, which is all a download checks.
TINY_PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)

Writer = Callable[[BaseHTTPRequestHandler], None]


def _safe(write: Writer) -> Writer:
    """Run a raw writer, ignoring the client hanging up (the expected end of most faults)."""

    def run(handler: BaseHTTPRequestHandler) -> None:
        try:
            write(handler)
            handler.wfile.flush()
        except OSError:
            return

    return run


def _head(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str]) -> None:
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.flush()


class FaultRoutes:
    """Registers the fault routes on `server`; `pdf` is what the healthy answers carry."""

    def __init__(self, server: SandboxServer, pdf: bytes = TINY_PDF) -> None:
        self.server = server
        self.pdf = pdf
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._bombs: dict[int, bytes] = {}
        server.route(PREFIX, self._dispatch)

    def url(self, path: str) -> str:
        """Absolute URL of a fault route, e.g. `url("status/503?times=1")`."""
        return f"{self.server.base_url}{PREFIX}{path}"

    def hits(self, path: str = "") -> int:
        """Requests the server received under `/faults/<path>`."""
        return len(self.server.requests(PREFIX + path))

    def _dispatch(self, req: Request) -> Reply:
        name, _, rest = req.path[len(PREFIX):].partition("/")
        routes: dict[str, Callable[[Request, str], Reply]] = {
            "status": self._status,
            "pdf": lambda r, _: self._pdf(),
            "html": lambda r, _: Reply(
                200, b"<!DOCTYPE html><html><body>Please verify you are human</body></html>",
                {"Content-Type": "text/html; charset=utf-8"},
            ),
            "slow-headers": self._slow_headers,
            "trickle": self._trickle,
            "header-trickle": self._header_trickle,
            "short-length": lambda r, _: Reply(stream=_safe(self._short_length)),
            "short-close": lambda r, _: Reply(stream=_safe(self._short_close)),
            "chunked-open": lambda r, _: Reply(stream=_safe(self._chunked_open)),
            "gzip-bomb": self._gzip_bomb,
            "gzip-chain": self._gzip_chain,
            "huge-length": lambda r, _: Reply(stream=_safe(self._huge_length)),
            "endless": self._endless,
            "redirect": lambda r, _: Reply(302, b"", {"Location": r.arg("to")}),
            "loop": lambda r, n: Reply(
                302, b"", {"Location": f"{PREFIX}loop/{int(n or 0) + 1}"}
            ),
            "private": lambda r, _: Reply(200, b"internal secret", {"Content-Type": "text/plain"}),
        }
        handler = routes.get(name)
        if handler is None:
            return Reply(404, b"no such fault", {"Content-Type": "text/plain"})
        return handler(req, rest)

    def _pdf(self) -> Reply:
        return Reply(200, self.pdf, {"Content-Type": "application/pdf"})

    def _status(self, req: Request, code: str) -> Reply:
        key = f"{req.path}?{sorted(req.query)}"
        with self._lock:
            seen = self._seen[key]
            self._seen[key] += 1
        if seen >= int(req.arg("times", "1")):
            return self._pdf()
        headers = {"Content-Type": "text/plain"}
        if req.arg("retry_after"):
            headers["Retry-After"] = req.arg("retry_after")
        return Reply(int(code), b"try again later", headers)

    def _slow_headers(self, req: Request, _: str) -> Reply:
        delay = min(float(req.arg("delay", "5")), MAX_STREAM_SECONDS)

        def write(handler: BaseHTTPRequestHandler) -> None:
            time.sleep(delay)
            _head(handler, 200, {"Content-Type": "application/pdf",
                                 "Content-Length": str(len(self.pdf))})
            handler.wfile.write(self.pdf)

        return Reply(stream=_safe(write))

    def _trickle(self, req: Request, _: str) -> Reply:
        seconds = min(float(req.arg("seconds", "10")), MAX_STREAM_SECONDS)
        every = float(req.arg("every", "1"))

        def write(handler: BaseHTTPRequestHandler) -> None:
            _head(handler, 200, {"Content-Type": "application/pdf",
                                 "Content-Length": str(len(self.pdf))})
            end = time.monotonic() + seconds
            for byte in self.pdf:
                if time.monotonic() > end:
                    return
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(every)

        return Reply(stream=_safe(write))

    def _header_trickle(self, req: Request, _: str) -> Reply:
        seconds = min(float(req.arg("seconds", "10")), MAX_STREAM_SECONDS)
        every = float(req.arg("every", "0.5"))
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nX-Padding: " + b"a" * 200

        def write(handler: BaseHTTPRequestHandler) -> None:
            end = time.monotonic() + seconds
            for byte in head:
                if time.monotonic() > end:
                    return
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(every)

        return Reply(stream=_safe(write))

    def _short_length(self, handler: BaseHTTPRequestHandler) -> None:
        _head(handler, 200, {"Content-Type": "application/pdf", "Content-Length": "100000"})
        handler.wfile.write((self.pdf * (5000 // len(self.pdf) + 1))[:5000])

    def _short_close(self, handler: BaseHTTPRequestHandler) -> None:
        _head(handler, 200, {"Content-Type": "application/pdf", "Connection": "close"})
        handler.wfile.write(self.pdf[: len(self.pdf) // 2])

    def _chunked_open(self, handler: BaseHTTPRequestHandler) -> None:
        _head(handler, 200, {"Content-Type": "application/pdf", "Transfer-Encoding": "chunked"})
        for part in (self.pdf[:40], self.pdf[40:80]):
            handler.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")

    def prepare_bomb(self, mib: int) -> bytes:
        """The gzip body inflating to `mib` MiB of zeros (built once, then cached)."""
        with self._lock:
            if mib not in self._bombs:
                packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip container
                zeros = bytes(MiB)
                parts = [packer.compress(zeros) for _ in range(mib)]
                self._bombs[mib] = b"".join(parts) + packer.flush()
            return self._bombs[mib]

    def _gzip_bomb(self, req: Request, _: str) -> Reply:
        body = self.prepare_bomb(min(int(req.arg("mib", "256")), 4096))
        return Reply(200, body, {"Content-Type": "application/pdf", "Content-Encoding": "gzip"})

    def _gzip_chain(self, req: Request, _: str) -> Reply:
        depth = min(int(req.arg("depth", "50")), 200)
        body = self.pdf
        for _layer in range(depth):
            body = gzip.compress(body, mtime=0)
        return Reply(200, body, {"Content-Type": "application/pdf",
                                 "Content-Encoding": ", ".join(["gzip"] * depth)})

    def _huge_length(self, handler: BaseHTTPRequestHandler) -> None:
        _head(handler, 200, {"Content-Type": "application/pdf",
                             "Content-Length": str(10 * 1024 * MiB)})
        handler.wfile.write(self.pdf)

    def _endless(self, req: Request, _: str) -> Reply:
        mib = min(int(req.arg("mib", "64")), 1024)

        def write(handler: BaseHTTPRequestHandler) -> None:
            _head(handler, 200, {"Content-Type": "application/pdf", "Connection": "close"})
            block = b"%PDF-1.4\n" + bytes(MiB - 9)
            for _block in range(mib):
                handler.wfile.write(block)

        return Reply(stream=_safe(write))
