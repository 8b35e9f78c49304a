"""The HTTP client against a real server on loopback."""

from __future__ import annotations

import io
import itertools
import socket
import time
from collections.abc import Iterator

import pytest

from loralay_build.config import HttpSettings
from loralay_build.fetch import check_pdf
from loralay_build.http import (
    BodyTooLarge,
    HttpClient,
    HttpError,
    HttpStatusError,
    PolicyRefused,
    RepeatedFailure,
    TransientHttpError,
    describe,
    parse_retry_after,
    public_address,
)
from loralay_build.sandbox.server import Reply, Request, SandboxServer

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


@pytest.fixture
def server() -> Iterator[SandboxServer]:
    calls: dict[str, int] = {}

    def counted(req: Request) -> int:
        calls[req.path] = calls.get(req.path, 0) + 1
        return calls[req.path]

    def flaky(req: Request) -> Reply:
        if counted(req) == 1:
            return Reply(429, b"slow down", {"Retry-After": "1"})
        return Reply(200, PDF)

    def greedy(req: Request) -> Reply:
        return Reply(503, b"", {"Retry-After": "86400"})

    with SandboxServer() as srv:
        srv.route("/pdf", lambda req: Reply(200, PDF, {"Content-Type": "application/pdf"}))
        srv.route("/flaky", flaky)
        srv.route("/greedy", greedy)
        srv.route("/gone", lambda req: Reply(404, b"gone"))
        srv.route("/big", lambda req: Reply(200, b"x" * 5000))
        srv.route("/hop", lambda req: Reply(302, b"", {"Location": "/pdf"}))
        srv.route("/escape", lambda req: Reply(302, b"", {"Location": "http://evil.example/x"}))
        srv.route("/file", lambda req: Reply(302, b"", {"Location": "file:///etc/passwd"}))
        srv.route("/loop", lambda req: Reply(302, b"", {"Location": "/loop"}))
        srv.route("/crash", lambda req: Reply(500, b"Traceback: ValueError: time data '2020' "
                                              b"does not match format '%Y-%m-%d'"))
        srv.route("/wobbly", lambda req: Reply(500, f"error {counted(req)}".encode()))
        yield srv


def client(srv: SandboxServer, **overrides: object) -> HttpClient:
    settings = HttpSettings(**{"min_interval": 0.0, "backoff_base": 0.05, "max_retries": 2,  # type: ignore[arg-type]
                               **overrides})
    return HttpClient(settings, trusted_urls=[srv.base_url])


def test_get_follows_a_relative_redirect(server: SandboxServer) -> None:
    resp = client(server).get(f"{server.base_url}/hop")
    assert resp.status == 200 and resp.body == PDF
    assert [e.path for e in server.requests()] == ["/hop", "/pdf"]


class Sleeps:
    """Injected sleep and clock: sleeps are recorded and advance the clock, never waited."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.calls.append(seconds)

    def clock(self) -> float:
        return time.monotonic() + sum(self.calls)


def recorded_client(srv: SandboxServer, sleeps: Sleeps, **overrides: object) -> HttpClient:
    settings = HttpSettings(min_interval=0.0, backoff_base=0.05, max_retries=2, **overrides)  # type: ignore[arg-type]
    return HttpClient(settings, trusted_urls=[srv.base_url], sleep=sleeps.sleep,
                      clock=sleeps.clock)


def test_retry_after_is_honoured_then_succeeds(server: SandboxServer) -> None:
    sleeps = Sleeps()
    resp = recorded_client(server, sleeps).get(f"{server.base_url}/flaky")
    assert resp.body == PDF
    assert max(sleeps.calls) >= 1.0  # the server's Retry-After: 1
    assert [e.status for e in server.requests("/flaky")] == [429, 200]


def test_absurd_retry_after_defers_instead_of_sleeping(server: SandboxServer) -> None:
    sleeps = Sleeps()
    with pytest.raises(TransientHttpError, match="deferred"):
        recorded_client(server, sleeps, retry_after_max=5.0).get(f"{server.base_url}/greedy")
    assert sum(sleeps.calls) < 1.0
    assert len(server.requests("/greedy")) == 1


def test_404_is_final_and_not_retried(server: SandboxServer) -> None:
    with pytest.raises(HttpStatusError) as info:
        client(server).get(f"{server.base_url}/gone")
    assert info.value.status == 404
    assert len(server.requests("/gone")) == 1


def test_byte_cap(server: SandboxServer) -> None:
    with pytest.raises(BodyTooLarge):
        client(server, max_bytes=1000).get(f"{server.base_url}/big")


@pytest.mark.parametrize(("path", "message"), [
    ("/escape", "allow-list"), ("/file", "scheme"), ("/loop", "redirects"),
])
def test_redirect_policy(server: SandboxServer, path: str, message: str) -> None:
    http = client(server, allowed_hosts=("hal.science",))
    with pytest.raises(PolicyRefused, match=message):
        http.get(f"{server.base_url}{path}")
    assert all(e.path != "/x" for e in server.requests())


def test_untrusted_loopback_is_refused_without_a_request(server: SandboxServer) -> None:
    http = HttpClient(HttpSettings(min_interval=0.0))
    with pytest.raises(PolicyRefused, match="non-public"):
        http.get(f"{server.base_url}/pdf")
    assert server.requests() == []


def test_url_rewrite_maps_a_real_host_to_the_server(server: SandboxServer) -> None:
    settings = HttpSettings(
        min_interval=0.0, allowed_hosts=("hal.science",),
        url_rewrite={"https://hal.science/": f"{server.base_url}/"},
    )
    resp = HttpClient(settings).get("https://hal.science/pdf")
    assert resp.body == PDF and resp.url == "https://hal.science/pdf"


def test_pacing_spaces_requests_to_one_host(server: SandboxServer) -> None:
    """Read on the client's clock: the server's log times carry its threads' scheduling
    delays, which on a loaded machine bring two paced requests closer than they were sent."""
    http = HttpClient(HttpSettings(min_interval=0.3), trusted_urls=[server.base_url])
    spans = []
    for _ in range(3):
        start = time.monotonic()
        http.get(f"{server.base_url}/pdf")
        spans.append((start, time.monotonic()))
    # a request is sent 0.3 s or more after the one before it, so its call ends no sooner
    assert all(end - start >= 0.3 for (start, _), (_, end) in itertools.pairwise(spans))
    assert len(server.requests("/pdf")) == 3


def test_parse_retry_after_accepts_seconds_and_dates() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None


def test_check_pdf_distinguishes_html_from_truncation() -> None:
    from loralay_build.errors import Reject

    with pytest.raises(Reject, match="no %PDF- header"):
        check_pdf(io.BytesIO(b"<html>captcha</html>"), "u")
    with pytest.raises(Reject, match="empty"):
        check_pdf(io.BytesIO(b""), "u")
    with pytest.raises(TransientHttpError, match="truncated"):
        check_pdf(io.BytesIO(PDF[:20]), "u")
    check_pdf(io.BytesIO(PDF), "u")


def test_an_identical_500_stops_being_retried_and_says_so(server: SandboxServer) -> None:
    with pytest.raises(RepeatedFailure) as info:
        client(server, max_retries=5).get(f"{server.base_url}/crash", {"from": "2020"})
    assert len(server.requests("/crash")) == 3
    message = describe(info.value)
    assert "3 times with the same answer" in message
    assert f"[requested {server.base_url}/crash?from=2020]" in message  # query included
    assert "does not match format" in message  # the start of the server's reply


def test_500s_that_differ_keep_their_retries(server: SandboxServer) -> None:
    with pytest.raises(TransientHttpError) as info:
        client(server, max_retries=4).get(f"{server.base_url}/wobbly")
    assert not isinstance(info.value, RepeatedFailure)
    assert len(server.requests("/wobbly")) == 5


def test_a_status_error_names_the_rewritten_url_and_the_reply(server: SandboxServer) -> None:
    settings = HttpSettings(
        min_interval=0.0, allowed_hosts=("hal.science",),
        url_rewrite={"https://hal.science/": f"{server.base_url}/"},
    )
    with pytest.raises(HttpStatusError) as info:
        HttpClient(settings).get("https://hal.science/gone", {"q": "x"})
    # the message (a reject's detail) does not depend on where the server listens...
    assert str(info.value) == "HTTP 404: gone (https://hal.science/gone?q=x)"
    # ...and the log line names the URL actually requested
    assert describe(info.value) == (f"HTTP 404: gone (https://hal.science/gone?q=x) "
                                    f"[requested {server.base_url}/gone?q=x]")


class Dns:
    """A resolver answering `answers[name]` (one list per call, the last one repeated) for the
    names it knows and the system's answer for any other, counting the calls per name."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.asked: dict[str, int] = {}
        self.real = socket.getaddrinfo
        monkeypatch.setattr(socket, "getaddrinfo", self.getaddrinfo)

    def getaddrinfo(self, host: object, port: object, *args: object,
                    **kwargs: object) -> list[tuple[object, ...]]:
        if host not in self.answers:
            return list(self.real(host, port, *args, **kwargs))  # type: ignore[arg-type]
        n = self.asked[str(host)] = self.asked.get(str(host), 0) + 1
        address = self.answers[str(host)][min(n, len(self.answers[str(host)])) - 1]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sockaddr = (address, port or 0, 0, 0) if ":" in address else (address, port or 0)
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)]


def test_a_rebinding_host_cannot_switch_to_a_private_address_after_the_check(
        server: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The address checked is the address connected to: the host resolves once per connection,
    so its second, private answer is never used."""
    dns = Dns(monkeypatch, {"rebind.test": ["93.184.215.14", "127.0.0.1"]})
    http = HttpClient(HttpSettings(min_interval=0.0, max_retries=0, connect_timeout=2.0,
                                   read_timeout=2.0, deadline=5.0))
    try:  # the public address may or may not answer from here: either way, not our server
        body = http.get(f"http://rebind.test:{server.port}/pdf").body
    except (HttpError, TransientHttpError):
        body = b""
    assert server.requests() == []
    assert body != PDF
    assert dns.asked["rebind.test"] == 1


@pytest.mark.parametrize("address", [
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "::ffff:127.0.0.1",  # IPv4-mapped
])
def test_ipv6_forms_of_private_ipv4_addresses_are_refused(
        server: SandboxServer, monkeypatch: pytest.MonkeyPatch, address: str) -> None:
    Dns(monkeypatch, {"v6.test": [address]})
    with pytest.raises(PolicyRefused, match="non-public"):
        HttpClient(HttpSettings(min_interval=0.0, max_retries=0, connect_timeout=2.0)).get(
            f"http://v6.test:{server.port}/pdf")
    assert server.requests() == []


def test_public_address_judges_the_ipv4_address_an_ipv6_form_carries() -> None:
    for private in ("64:ff9b::7f00:1", "64:ff9b::c0a8:101", "2002:7f00:1::", "2002:a00:1::1",
                    "::ffff:10.0.0.1", "::7f00:1", "127.0.0.1", "fd00::1", "fe80::1%eth0"):
        assert not public_address(private), private
    for public in ("64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "8.8.8.8",
                   "2606:4700::1111"):
        assert public_address(public), public


def test_a_trusted_endpoint_does_not_open_other_ports_of_its_host(
        server: SandboxServer) -> None:
    with SandboxServer() as other:
        other.route("/secret", lambda req: Reply(200, b"secret"))
        server.route("/away", lambda req: Reply(302, b"", {"Location":
                                                          f"{other.base_url}/secret"}))
        with pytest.raises(PolicyRefused, match="non-public"):
            client(server).get(f"{server.base_url}/away")
        assert [e.path for e in server.requests()] == ["/away"]
        assert other.requests() == []
