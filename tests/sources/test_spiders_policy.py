"""Scrapy crawls keep HttpClient's policy: a real crawl (`spiders.run` in a subprocess)
redirected to another host or to a private address never reaches it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.resolver import dnscache
from twisted.python.failure import Failure

from loralay_build.config import HttpSettings
from loralay_build.http import HttpClient
from loralay_build.sandbox.server import Reply, SandboxServer
from loralay_build.sources.crawl import crawl_policy, spider_items
from loralay_build.sources.koreascience import SPIDER
from loralay_build.sources.spiders.middleware import DEADLINE_KEY, PolicyMiddleware, PolicyResolver


class Trap:
    """A server the crawl must never reach, bound to `address`."""

    def __init__(self, address: str) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer((address, 0), Handler)
        self.port = int(self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[SandboxServer]:
    with SandboxServer() as srv:
        yield srv


@pytest.mark.parametrize(("address", "host", "allowed"), [
    ("127.0.0.1", "localhost", ("koreascience.kr",)),  # another host than the configured one
    ("127.0.0.2", "127.0.0.2", ()),  # any host allowed, but not a private address
])
def test_a_crawl_redirected_off_policy_never_reaches_the_target(
        server: SandboxServer, address: str, host: str, allowed: tuple[str, ...],
        caplog: pytest.LogCaptureFixture) -> None:
    trap = Trap(address)
    try:
        target = f"http://{host}:{trap.port}/stolen"
        server.route("/search", lambda req: Reply(302, b"", {"Location": target}))
        client = HttpClient(HttpSettings(allowed_hosts=allowed),
                            trusted_urls=[server.base_url])
        config = {"search_url": f"{server.base_url}/search", "first_year": 2020,
                  "last_year": 2020, "download_delay": 0.0, "retries": 0,
                  "policy": crawl_policy(client)}
        with caplog.at_level(logging.WARNING, logger="loralay_build"):
            assert list(spider_items(SPIDER, config, "test")) == []
        assert [e.path for e in server.requests("/search")] == ["/search"]  # it was asked
        assert trap.hits == []  # the redirect was refused
        # The crawl's own warning came through this process's logging (bar-safe, -q aware).
        refused = [r for r in caplog.records if r.name == "loralay_build.sources.crawl"
                   and "test crawl:" in r.getMessage() and "refused" in r.getMessage()]
        assert refused and all(r.levelno == logging.WARNING for r in refused)
    finally:
        trap.close()


def test_the_policy_itself() -> None:
    policy = PolicyMiddleware(("*.scielo.br",), frozenset({("127.0.0.1", 9)}), False, 30.0)
    policy.process_request(Request("http://127.0.0.1:9/x"))  # configured endpoint
    policy.process_request(Request("https://www.scielo.br/x"))
    for url, why in (("ftp://www.scielo.br/x", "scheme"), ("http://evil.example/x", "allow-list"),
                     ("http://127.0.0.2/x", "allow-list"),
                     ("http://127.0.0.1:22/x", "allow-list")):  # another port of that host
        with pytest.raises(IgnoreRequest, match=why):
            policy.process_request(Request(url))
    for private in ("http://10.1.2.3/", "http://[64:ff9b::a01:203]/", "http://127.0.0.1:22/"):
        with pytest.raises(IgnoreRequest, match="non-public"):
            PolicyMiddleware((), frozenset({("127.0.0.1", 9)}), False, 30.0).process_request(
                Request(private))
    late = Request("http://127.0.0.1:9/x", meta={DEADLINE_KEY: 0.0})  # its deadline has passed
    with pytest.raises(IgnoreRequest, match="deadline"):
        policy.process_request(late)
    fresh = Request("http://127.0.0.1:9/x", meta={"download_timeout": 180.0})
    policy.process_request(fresh)
    assert fresh.meta["download_timeout"] <= 30.0  # one try never outlives the deadline


def test_the_resolver_refuses_a_private_answer_for_a_name_not_configured() -> None:
    """The address Scrapy connects to comes from this resolver: a name that answered a public
    address to the policy's check and a private one here is refused here."""
    from twisted.internet import reactor
    from twisted.internet.error import DNSLookupError

    resolver = PolicyResolver(reactor, 100, 5.0, frozenset({"sandbox.test"}), False)
    dnscache["rebind.test"] = "127.0.0.1"  # what the name answers now
    dnscache["sandbox.test"] = "127.0.0.1"
    dnscache["public.test"] = "8.8.8.8"
    outcomes: dict[str, object] = {}
    def record(result: object, name: str) -> None:
        outcomes[name] = result.type if isinstance(result, Failure) else result

    for name in ("rebind.test", "sandbox.test", "public.test"):
        resolver.getHostByName(name).addBoth(record, name)
    assert outcomes == {"rebind.test": DNSLookupError, "sandbox.test": "127.0.0.1",
                        "public.test": "8.8.8.8"}
