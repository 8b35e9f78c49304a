"""kill -9 of a real `build-corpus openreview` subprocess mid-download, then resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from loralay_build.sandbox.openreview import OpenReviewSandbox
from loralay_build.sandbox.server import SandboxServer
from loralay_build.sources.openreview.notes import STATUSES
from tests.helpers.cli_runner import FAST, published_splits, write_config
from tests.helpers.waits import DEADLINE

PDF = "/_openreview/api2/pdf"
RUN_TIMEOUT = 300.0


def command(out: Path, config: Path) -> list[str]:
    return [sys.executable, "-m", "loralay_build.cli", "openreview", "--out", str(out),
            "--config", str(config), "-q"]


def served(server: SandboxServer) -> int:
    return sum(1 for e in server.requests(PDF) if e.status == 200)


def build_once(server: SandboxServer, tmp: Path, name: str, kill_after: int | None) -> Path:
    """Build into tmp/name; with `kill_after`, SIGKILL the run once that many PDFs were served
    and then run the same command again to the end."""
    box = OpenReviewSandbox(server, n_docs=12, seed=3, faults=False)
    config = write_config(tmp / f"{name}.toml", box.client_config(STATUSES), FAST)
    out = tmp / name
    if kill_after is not None:
        # Paced, so that the kill lands between two downloads of the same run.
        paced = write_config(tmp / f"{name}-paced.toml", box.client_config(STATUSES), FAST,
                             {"http": {"min_interval": 0.2}})
        proc = subprocess.Popen(command(out, paced), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=dict(os.environ))
        end = time.monotonic() + RUN_TIMEOUT
        while served(server) < kill_after and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.01)
        assert proc.poll() is None, "the build ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(DEADLINE)
        assert not list(out.glob("openreview/*.parquet"))  # nothing half-published
    done = subprocess.run(command(out, config), capture_output=True, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return out / "openreview"


def test_kill_during_downloads_then_resume(tmp_path: Path) -> None:
    with SandboxServer() as reference_server:
        reference = published_splits(build_once(reference_server, tmp_path, "ref", None))
    with SandboxServer() as server:
        resumed = published_splits(build_once(server, tmp_path, "killed", kill_after=3))
        pdfs = sum(1 for e in server.requests(PDF) if e.status == 200)
    assert reference and resumed == reference  # same documents, same splits
    with_pdf = len({e.query for e in reference_server.requests(PDF) if e.status == 200})
    assert pdfs <= with_pdf + 1  # at most the PDF in flight at the kill is fetched again
