"""T8-T11: the real HttpClient against every fault the loopback fault server can produce.

Each scenario must end in its expected state (a file, a retryable failure, a refusal) within
its deadline, and the server's access log must show that no refused target was ever requested.
"""

from __future__ import annotations

import email.utils
import multiprocessing
import resource
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from loralay_build.blobs import BlobStore
from loralay_build.config import HttpSettings
from loralay_build.errors import Reason, Reject
from loralay_build.fetch import fetch_pdf
from loralay_build.http import (
    BodyTooLarge,
    HttpClient,
    HttpError,
    PolicyRefused,
    TransientHttpError,
)
from loralay_build.sandbox.faults import TINY_PDF, FaultRoutes, MiB
from loralay_build.sandbox.server import SandboxServer
from tests.helpers.reliability import Figure

SETTINGS = HttpSettings(
    min_interval=0.0,
    connect_timeout=2.0,
    read_timeout=2.0,
    deadline=3.0,
    max_bytes=8 * MiB,
    max_retries=2,
    backoff_base=0.05,
    backoff_max=0.2,
    retry_after_max=5.0,
    max_redirects=5,
)
SLACK = 1.0  # seconds a scenario may exceed its deadline
# The scenarios of a stalled or trickling socket run with short limits, the trickle's step
# kept under the read timeout, so that the deadline is what ends it.
SHORT = {"read_timeout": 0.5, "deadline": 1.0}


@dataclass(frozen=True)
class Scenario:
    name: str
    path: str  # fault route, or a full URL template with {base}
    expect: type[BaseException] | None  # None: the PDF lands in the blob store
    hits: int  # requests the fault server must have received for it
    budget: float  # seconds allowed, slack included
    min_seconds: float = 0.0  # Retry-After honoured: not sooner than this
    limits: dict[str, float] = field(default_factory=dict)  # HttpSettings changed for it


def _http_date(seconds_ahead: int) -> str:
    return email.utils.formatdate(time.time() + seconds_ahead, usegmt=True)


RETRIES = SETTINGS.max_retries + 1
SCENARIOS = [
    Scenario("429 x2, Retry-After 1", "status/429?times=2&retry_after=1", None, 3, 3.5, 1.8),
    Scenario("503 once, no Retry-After", "status/503?times=1", None, 2, 1.0),
    Scenario("503 once, Retry-After as HTTP date", "status/503?times=1&retry_after={date}",
             None, 2, 4.0, 0.5),
    Scenario("503 nine times", "status/503?times=9", TransientHttpError, RETRIES, 2.0),
    Scenario("503 Retry-After 86400 (capped)", "status/503?times=1&retry_after=86400",
             TransientHttpError, 1, 1.0),
    Scenario("429 Retry-After 10^20 (capped)", "status/429?times=1&retry_after=" + "9" * 20,
             TransientHttpError, 1, 1.0),
    Scenario("headers delayed 8 s", "slow-headers?delay=8", TransientHttpError, RETRIES,
             RETRIES * SHORT["read_timeout"] + SLACK, limits=SHORT),
    Scenario("body trickled 4 B/s", "trickle?seconds=30&every=0.25", TransientHttpError,
             RETRIES, RETRIES * (SHORT["deadline"] + SLACK), limits=SHORT),
    Scenario("headers trickled", "header-trickle?seconds=30&every=0.25", TransientHttpError,
             RETRIES, RETRIES * (SHORT["deadline"] + SLACK), limits=SHORT),
    Scenario("Content-Length 100000, 5000 sent", "short-length", TransientHttpError, RETRIES, 2.0),
    Scenario("no Content-Length, half a PDF, close", "short-close", TransientHttpError,
             RETRIES, 2.0),
    Scenario("chunked without terminator", "chunked-open", TransientHttpError, RETRIES, 2.0),
    Scenario("gzip bomb 256 MiB", "gzip-bomb?mib=256", BodyTooLarge, 1, 3.0),
    Scenario("gzip x50 encoding chain", "gzip-chain?depth=50", HttpError, 1, 2.0),
    Scenario("Content-Length 10 GiB", "huge-length", BodyTooLarge, 1, 1.0),
    Scenario("64 MiB without Content-Length", "endless?mib=64", BodyTooLarge, 1, 3.0),
    Scenario("HTML where a PDF was promised", "html", Reject, 1, 1.0),
    Scenario("redirect loop", "loop/0", PolicyRefused, SETTINGS.max_redirects + 1, 1.0),
    Scenario("302 to file:", "redirect?to=file:///etc/hostname", PolicyRefused, 1, 1.0),
    Scenario("302 to data:", "redirect?to=data:application/pdf;base64,JVBERi0xLjQK",
             PolicyRefused, 1, 1.0),
    Scenario("302 to ftp:", "redirect?to=ftp://127.0.0.1/faults/private", PolicyRefused, 1, 1.0),
    Scenario("302 to 127.0.0.2", "redirect?to=http://127.0.0.2:{port}/faults/private",
             PolicyRefused, 1, 1.0),
    Scenario("302 to localhost (same server)",
             "redirect?to=http://localhost:{port}/faults/private", PolicyRefused, 1, 1.0),
    Scenario("302 to 169.254.169.254", "redirect?to=http://169.254.169.254/latest/meta-data",
             PolicyRefused, 1, 1.0),
    Scenario("302 to 10.0.0.1", "redirect?to=http://10.0.0.1/faults/private",
             PolicyRefused, 1, 1.0),
    Scenario("302 to a host outside allowed_hosts",
             "redirect?to=http://metadata.internal.invalid/faults/private", PolicyRefused, 1, 1.0),
]


@pytest.fixture(scope="module")
def faults() -> Iterator[FaultRoutes]:
    with SandboxServer() as server:
        routes = FaultRoutes(server)
        routes.prepare_bomb(256)  # built once here, so no scenario's budget pays for it
        yield routes


def _client(faults: FaultRoutes, limits: dict[str, float]) -> HttpClient:
    settings = HttpSettings(**{
        **SETTINGS.__dict__, "allowed_hosts": ("127.0.0.1", "files.example.org"), **limits,
    })
    return HttpClient(settings, trusted_urls=[faults.server.base_url])


def _run(scenario: Scenario, faults: FaultRoutes, tmp: Path) -> tuple[object, float, int]:
    """Fetch one fault route; returns (outcome, seconds, requests made by the client)."""
    path = scenario.path.format(port=faults.server.port, date=_http_date(2))
    client = _client(faults, scenario.limits)
    blobs = BlobStore(tmp / "blobs")
    start = time.monotonic()
    outcome: object
    try:
        outcome = fetch_pdf(faults.url(path), client, blobs)
    except (HttpError, TransientHttpError, Reject) as exc:
        outcome = exc
    return outcome, time.monotonic() - start, client.requests_made


# name -> (as expected, seconds per request, truncated body kept); filled by the matrix, and
# completed by the figures test itself for scenarios that did not run in this session.
RESULTS: dict[str, tuple[bool, float, bool]] = {}


def _record(scenario: Scenario, outcome: object, seconds: float, hits: int) -> None:
    expected = (isinstance(outcome, str) if scenario.expect is None
                else isinstance(outcome, scenario.expect))
    truncated_kept = scenario.path.startswith(("short-", "chunked")) and isinstance(outcome, str)
    RESULTS[scenario.name] = (
        expected and scenario.min_seconds <= seconds <= scenario.budget and hits == scenario.hits,
        seconds / max(1, hits),
        truncated_kept,
    )


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_fault_ends_in_expected_state(
    scenario: Scenario, faults: FaultRoutes, tmp_path: Path
) -> None:
    """T8/T9/T10/T11: expected outcome, within budget, with the expected number of requests."""
    before = len(faults.server.log)
    outcome, seconds, made = _run(scenario, faults, tmp_path)
    hits = len(faults.server.log) - before
    _record(scenario, outcome, seconds, hits)
    if scenario.expect is None:
        assert isinstance(outcome, str), outcome
        assert (tmp_path / "blobs" / outcome[:2] / outcome).read_bytes() == TINY_PDF
    else:
        assert isinstance(outcome, scenario.expect), outcome
        blobs = tmp_path / "blobs"
        assert not [p for p in blobs.rglob("*") if p.is_file()], "a failed download left a file"
    if isinstance(outcome, Reject):
        assert outcome.reason is Reason.NOT_PDF
    assert scenario.min_seconds <= seconds <= scenario.budget, seconds
    assert hits == scenario.hits == made
    assert faults.hits("private") == 0


def test_fault_matrix_figures(faults: FaultRoutes, figure: Figure, tmp_path: Path) -> None:
    """The T8-T11 figures over the whole matrix, whatever ran before (or in what order)."""
    for i, scenario in enumerate(SCENARIOS):
        if scenario.name not in RESULTS:
            before = len(faults.server.log)
            outcome, seconds, _ = _run(scenario, faults, tmp_path / str(i))
            _record(scenario, outcome, seconds, len(faults.server.log) - before)
    passed = sum(ok for ok, _, _ in RESULTS.values())
    worst = max(per_request for _, per_request, _ in RESULTS.values())
    truncated = sum(kept for _, _, kept in RESULTS.values())
    figure("T8", "fault scenarios ending in the expected state", "100 %",
           f"{passed}/{len(SCENARIOS)}")
    figure("T8", "max seconds per request", f"<= deadline + {SLACK:.0f} s "
           f"({SETTINGS.deadline + SLACK:.0f} s)", f"{worst:.2f} s")
    figure("T9", "truncated bodies accepted", "0", str(truncated))
    figure("T11", "requests reaching refused targets (access log)", "0",
           str(faults.hits("private")))
    assert passed == len(SCENARIOS), [name for name, (ok, _, _) in RESULTS.items() if not ok]
    assert worst <= SETTINGS.deadline + SLACK
    assert truncated == 0
    assert faults.hits("private") == 0


def _bomb_in_fresh_process(url: str, trusted: str, blobs: str) -> tuple[bool, float, int]:
    """Fetch the bomb in a new interpreter, whose peak RSS starts at its own baseline (a
    long-lived test process's all-time peak would hide any growth)."""
    settings = HttpSettings(**{**SETTINGS.__dict__, "allowed_hosts": ("127.0.0.1",)})
    client = HttpClient(settings, trusted_urls=[trusted])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.monotonic()
    try:
        fetch_pdf(url, client, BlobStore(Path(blobs)))
        refused = False
    except BodyTooLarge:
        refused = True
    seconds = time.monotonic() - start
    return refused, seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before


def test_gzip_bomb_memory(faults: FaultRoutes, tmp_path: Path, figure: Figure) -> None:
    """T10: a 256 MiB gzip bomb is cut at the cap; the process grows by less than twice the cap."""
    faults.prepare_bomb(256)  # the server's copy is built first: it is not the client's memory
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        refused, seconds, growth = pool.apply(_bomb_in_fresh_process, (
            faults.url("gzip-bomb?mib=256"), faults.server.base_url, str(tmp_path / "blobs")))
    assert refused
    figure("T10", "256 MiB gzip bomb: time to abort, peak RSS growth",
           f"aborted at cap; growth < {2 * SETTINGS.max_bytes // MiB} MiB",
           f"{seconds:.2f} s, +{max(0, growth) / MiB:.0f} MiB")
    assert growth < 2 * SETTINGS.max_bytes
