"""Commands that build several datasets: one signal stops them all, one exit code for cron."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from loralay_build.config import merge
from loralay_build.sandbox.eurlex import EurlexSandbox
from loralay_build.sandbox.server import SandboxServer
from loralay_build.state import State
from tests.helpers.cli import run_cli_subprocess
from tests.helpers.cli_runner import FAST, write_config
from tests.helpers.waits import DEADLINE, wait_for

DEMO = ["demo", "--docs", "5", "--only", "hal", "--only", "scielo-es", "--only", "koreascience"]


def _signal_after(args: list[str], ready: Path, signum: int) -> tuple[int, str, float]:
    """Run the CLI, send `signum` once `ready` exists; exit code, stderr, seconds to exit."""
    proc = subprocess.Popen([sys.executable, "-m", "loralay_build.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: ready.exists() or proc.poll() is not None, f"{ready}")
        assert proc.poll() is None, f"finished before {ready} appeared: {proc.communicate()}"
        os.kill(proc.pid, signum)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=DEADLINE)
        return proc.returncode, err, time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_first_signal_ends_the_whole_demo_and_the_same_command_resumes(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    args = [*DEMO, "--out", str(out)]
    code, err, _ = _signal_after(args, out / "hal" / "build.json", signal.SIGINT)
    assert code == 130, err
    assert "Traceback" not in err and "run the same command again" in err
    assert not (out / "koreascience").exists()
    code, err, _ = _signal_after(args, out / "scielo-es" / "build.json", signal.SIGTERM)
    assert code == 130, err
    assert "Traceback" not in err
    assert not (out / "koreascience").exists()
    done = run_cli_subprocess(*args)
    assert done.returncode == 0, done.stderr
    assert "koreascience: written" in done.stdout
    assert "hal: nothing new to write" in done.stdout
    state = State(out)
    try:
        assert {run["exit_code"] for d in ("hal", "scielo-es", "koreascience")
                if (run := state.last_run(d))} == {0}
    finally:
        state.close()


# A signal landing while the garbage collector runs a finaliser (urllib3 closing a dropped
# connection pool between two datasets): the handler's exception is raised inside it.
SIGNAL_IN_FINALISER = """
import signal, sys, weakref
from loralay_build.run.lifecycle import STOP, sigterm_as_interrupt

class Pool:
    pass

try:
    with sigterm_as_interrupt():
        pool = Pool()
        weakref.finalize(pool, signal.raise_signal, int(sys.argv[1]))
        del pool
        print("carried on")
except KeyboardInterrupt as exc:
    print(type(exc).__name__, STOP.is_set())
"""


@pytest.mark.parametrize(("signum", "raised"), [(signal.SIGINT, "KeyboardInterrupt"),
                                                 (signal.SIGTERM, "Terminated")])
def test_an_interrupt_inside_a_finaliser_is_raised_when_the_block_ends_without_a_traceback(
        signum: int, raised: str) -> None:
    """Python would print it as ignored (a traceback) and carry on as if no signal came."""
    done = subprocess.run([sys.executable, "-c", SIGNAL_IN_FINALISER, str(int(signum))],
                          capture_output=True, text=True, timeout=DEADLINE)
    assert done.stderr == ""
    assert done.stdout.splitlines() == ["carried on", f"{raised} True"]


def test_a_language_without_documents_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    """`hr` and `mt` have no act in the catalogue: they leave no folder and fail the command
    only when no requested language has a document, on every re-run alike (cron)."""
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=6, seed=3)
        config = write_config(tmp_path / "c.toml", merge(sandbox.client_config(("en", "hr")),
                                                          FAST))
        out = tmp_path / "out"
        args = ["eurlex", "--out", str(out), "--config", str(config)]
        for _ in range(2):  # the first build, then a re-run with nothing new
            result = run_cli_subprocess(*args, "--languages", "en,hr")
            assert result.returncode == 0, result.stderr
            assert "eurlex-hr: no document to publish" in result.stderr
            assert (out / "eurlex-en" / "build.json").is_file()
            assert not (out / "eurlex-hr").exists()
        nothing = run_cli_subprocess(*args, "--languages", "hr,mt")
        assert nothing.returncode == 1
        assert "no document published in any dataset" in nothing.stderr
        assert not (out / "eurlex-hr").exists() and not (out / "eurlex-mt").exists()
        assert run_cli_subprocess(*args, "--languages", "hr,mt", "--allow-empty").returncode == 0


def test_a_bad_since_stops_every_language_before_the_network(tmp_path: Path) -> None:
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=6, seed=3)
        config = write_config(tmp_path / "c.toml", merge(sandbox.client_config(("en", "fr")),
                                                          FAST))
        result = run_cli_subprocess("eurlex", "--out", str(tmp_path / "out"), "--config",
                                    str(config), "--since", "2024-13-01")
        assert result.returncode == 2, result.stderr
        assert "--since" in result.stderr and "Traceback" not in result.stderr
        assert not server.requests()
        assert not (tmp_path / "out").exists()
        named = run_cli_subprocess("eurlex", "--out", str(tmp_path / "out"), "--config",
                                   str(config), "--name", "bad/name")
        assert named.returncode == 2
        [line] = named.stderr.strip().splitlines()  # one refusal, not one per language
        assert "bad/name-en" in line
        assert not server.requests()


class _Down(BaseHTTPRequestHandler):
    """A SPARQL endpoint that is down: every request counted, answered 503."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Down.seen.append(self.path)
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_down_endpoint_is_tried_once_per_run_and_named_without_its_query(
        tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Down)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        config = write_config(tmp_path / "c.toml", {
            "source": {"sparql_url": f"{base}/sparql", "cellar_url": f"{base}/resource/"},
            "http": {"allow_private": True, "min_interval": 0.0, "backoff_base": 0.01,
                     "backoff_max": 0.02, "max_retries": 1},
        })
        args = ["eurlex", "--out", str(tmp_path / "out"), "--config", str(config),
                "--languages", "en,fr,de,el"]
        _Down.seen.clear()
        result = run_cli_subprocess(*args)
        assert result.returncode == 3, result.stderr
        assert len(_Down.seen) == 2  # the first try and its one retry, for all four languages
        errors = [line for line in result.stderr.splitlines() if "ERROR" in line]
        assert len(errors) == 1, result.stderr
        assert f"{base}/sparql" in errors[0] and "SPARQL listing" in errors[0]
        assert "query=" not in errors[0] and "PREFIX" not in errors[0] and len(errors[0]) < 400
        verbose = run_cli_subprocess(*args, "-v")
        assert "query=PREFIX" in verbose.stderr  # the whole request, for who asks for it
    finally:
        server.shutdown()
        server.server_close()
