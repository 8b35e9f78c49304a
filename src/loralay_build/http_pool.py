"""The HTTP client's connections, on urllib3: they reach only addresses their guard checked,
and give up when the request's deadline passes while waiting for headers.

Kept apart from `http` so that urllib3 loads with the first request: a build that never goes
on the network (`local`) and the commands that only read a folder never import it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any, Protocol

import urllib3
from urllib3 import Timeout
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    DecodeError,
    NameResolutionError,
    NewConnectionError,
)
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.util.connection import allowed_gai_family

# The client reaches urllib3 through this module only: the timeout it sets and the errors it
# catches are passed on under these names.
__all__ = ["DecodeError", "Timeout", "Urllib3Error", "header_deadline", "pool_manager"]

header_deadline = threading.local()  # monotonic time by which the headers must be in


class Guard(Protocol):
    """Where connections may go (http.AddressGuard)."""

    def exempt(self, host: str, port: int) -> bool: ...

    def check(self, host: str, addresses: list[str]) -> list[str]: ...


def _resolve(host: str, port: int) -> list[str]:
    """The addresses a connection to the host may use, in resolver order, once each
    (socket.gaierror when the host does not resolve)."""
    infos = socket.getaddrinfo(host, port, allowed_gai_family(), socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _shutdown(sock: socket.socket | None) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class _DeadlineHTTPConnection(HTTPConnection):
    """Connects only to addresses its guard checked, and shuts its socket down when the
    request's deadline passes while waiting for headers.

    A socket timeout bounds each read, not their sum: a server that sends its status line
    and headers one byte at a time would otherwise hold the request for as long as it likes.
    """

    def __init__(self, *args: Any, guard: Guard | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = guard

    def _new_conn(self) -> socket.socket:
        name = self._dns_host
        if self.guard is None or self.guard.exempt(name, self.port):
            return super()._new_conn()
        try:
            addresses = self.guard.check(name, _resolve(name, self.port))
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc
        try:
            for i, address in enumerate(addresses):
                self._dns_host = address  # numeric: the connection resolves nothing again
                try:
                    return super()._new_conn()
                except (NewConnectionError, ConnectTimeoutError):
                    if i == len(addresses) - 1:
                        raise
            raise NameResolutionError(self.host, self, socket.gaierror("no address"))
        finally:
            self._dns_host = name

    def getresponse(self) -> Any:
        end: float | None = getattr(header_deadline, "value", None)
        if end is None:
            return super().getresponse()
        timer = threading.Timer(max(0.0, end - time.monotonic()), _shutdown, (self.sock,))
        timer.daemon = True
        timer.start()
        try:
            return super().getresponse()
        finally:
            timer.cancel()


class _DeadlineHTTPSConnection(_DeadlineHTTPConnection, HTTPSConnection):
    """The same header deadline over TLS."""


class _DeadlineHTTPPool(HTTPConnectionPool):
    ConnectionCls = _DeadlineHTTPConnection


class _DeadlineHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _DeadlineHTTPSConnection


class _GuardedPoolManager(urllib3.PoolManager):
    """Hands its address guard to every connection of every pool it makes."""

    def __init__(self, guard: Guard, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.guard = guard
        self.pool_classes_by_scheme = {"http": _DeadlineHTTPPool, "https": _DeadlineHTTPSPool}

    def _new_pool(self, scheme: str, host: str, port: int,
                  request_context: dict[str, Any] | None = None) -> HTTPConnectionPool:
        pool = super()._new_pool(scheme, host, port, request_context)
        pool.conn_kw["guard"] = self.guard
        return pool


def pool_manager(guard: Guard, connect_timeout: float, read_timeout: float) -> urllib3.PoolManager:
    """The client's pools: no retries or redirects of urllib3's own (the client does both,
    checking each hop)."""
    return _GuardedPoolManager(guard, num_pools=16, maxsize=1, block=False,
                               timeout=Timeout(connect=connect_timeout, read=read_timeout),
                               retries=False)
