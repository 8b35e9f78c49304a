"""kill -9 in the middle of `build-corpus eurlex` (a subprocess against the Cellar sandbox),
then the same command again: every language dataset comes out as an uninterrupted build's."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loralay_build.config import merge
from loralay_build.sandbox.eurlex import EurlexSandbox
from loralay_build.sandbox.server import SandboxServer
from tests.helpers import buildrun
from tests.helpers.cli import write_toml
from tests.helpers.cli_runner import rejects, rows
from tests.helpers.waits import DEADLINE

LANGS = ("en", "fr", "el")
DOCS, SEED = 12, 4


def config(sandbox: EurlexSandbox, path: Path) -> Path:
    overlay = merge(sandbox.client_config(LANGS), {"run": {"timeout": 30.0, "workers": 2},
                                                   "filters": {"enabled": False}})
    return write_toml(path, overlay)


def command(out: Path, cfg: Path) -> list[str]:
    return [sys.executable, "-m", "loralay_build.cli", "eurlex", "--out", str(out),
            "--config", str(cfg), "-q"]


def finish(out: Path, cfg: Path) -> None:
    done = subprocess.run(command(out, cfg), capture_output=True, timeout=buildrun.RUN_TIMEOUT)
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def content(out: Path) -> dict[str, Any]:
    """What each dataset published, without the sandbox's port (it differs between servers)."""
    found: dict[str, Any] = {}
    for lang in LANGS:
        folder = out / f"eurlex-{lang}"
        found[lang] = (
            buildrun.split_ids(folder),
            rejects(folder),
            {k: (r["article_words"], r["word_pages"], r["abstract"], r["reference_text"])
             for k, r in rows(folder).items()},
        )
    return found


def test_kill_9_mid_crawl_then_resume(tmp_path: Path) -> None:
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=DOCS, seed=SEED)
        started = time.monotonic()
        finish(tmp_path / "reference", config(sandbox, tmp_path / "ref.toml"))
        seconds = time.monotonic() - started
    want = content(tmp_path / "reference")
    rng = random.Random(SEED)
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=DOCS, seed=SEED)
        cfg, out = config(sandbox, tmp_path / "c.toml"), tmp_path / "out"
        killed = 0
        for _ in range(2):
            proc = subprocess.Popen(command(out, cfg), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.25, 0.6) * seconds)
            workers = buildrun.children(proc.pid)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                killed += 1
            proc.wait(DEADLINE)
            assert not buildrun.wait_gone(workers, DEADLINE)
        assert killed, "the build finished before any kill"
        finish(out, cfg)
    assert content(out) == want
