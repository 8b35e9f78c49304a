"""T13: hostile XML against the project's one network-XML parser (loralay_build.safexml).

T14 (hostile tarballs) is not covered: no source extracts archives today.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loralay_build.safexml import XmlRejected, parse_xml
from loralay_build.sandbox.server import Reply, SandboxServer
from tests.helpers.reliability import Figure

SECRET = "probe-7f3a-must-never-appear"


def _laughs(levels: int = 10) -> bytes:
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, levels)
    ]
    return (f'<?xml version="1.0"?><!DOCTYPE r [{"".join(entities)}]>'
            f"<r>&lol{levels - 1};</r>").encode()


@pytest.fixture
def dtd_server() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        server.route("/dtd/", lambda _: Reply(200, b'<!ENTITY x "leaked">'))
        yield server


def _cases(probe: Path, server: SandboxServer) -> dict[str, bytes]:
    url = f"{server.base_url}/dtd/evil.dtd"
    return {
        "billion laughs": _laughs(),
        "external entity (local file)":
            f'<!DOCTYPE r [<!ENTITY x SYSTEM "file://{probe}">]><r>&x;</r>'.encode(),
        "external entity (loopback URL)":
            f'<!DOCTYPE r [<!ENTITY x SYSTEM "{url}">]><r>&x;</r>'.encode(),
        "parameter entity to an external DTD":
            f'<!DOCTYPE r [<!ENTITY % p SYSTEM "{url}"> %p;]><r>&x;</r>'.encode(),
        "external DTD subset": f'<!DOCTYPE r SYSTEM "{url}"><r>&x;</r>'.encode(),
        "quadratic blowup":
            (f'<!DOCTYPE r [<!ENTITY a "{"x" * 50_000}">]><r>' + "&a;" * 20_000 + "</r>").encode(),
    }


def test_hostile_xml(tmp_path: Path, dtd_server: SandboxServer, figure: Figure) -> None:
    probe = tmp_path / "probe.txt"
    probe.write_text(SECRET)
    leaks = 0
    slowest = 0.0
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    for name, data in _cases(probe, dtd_server).items():
        start = time.monotonic()
        try:
            root = parse_xml(data)
        except XmlRejected:
            text = ""
        else:
            text = "".join(root.itertext())
        slowest = max(slowest, time.monotonic() - start)
        leaks += SECRET in text or "leaked" in text or len(text) > 1000
        assert SECRET not in text, name
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
    fetched = len(dtd_server.requests("/dtd/"))
    figure("T13", "XML attacks: leaks / network fetches / slowest / RSS growth",
           "0 / 0 / < 1 s / < 100 MB",
           f"{leaks} / {fetched} / {slowest:.3f} s / +{max(0, growth) / 2**20:.0f} MB")
    assert (leaks, fetched) == (0, 0)
    assert growth < 100 * 2**20


def test_entity_declarations_are_refused() -> None:
    for data in (_laughs(), b'<!DOCTYPE r [<!ENTITY x "y">]><r>&x;</r>'):
        with pytest.raises(XmlRejected):
            parse_xml(data)


def test_jats_doctype_is_accepted_without_fetching() -> None:
    jats = (b'<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving DTD v1.2//EN"'
            b' "http://127.0.0.1:9/JATS-archivearticle1.dtd"><article><title>t</title></article>')
    assert parse_xml(jats).tag == "article"
