"""Helpers to run `build-corpus hal` as a real subprocess against an in-process HAL sandbox."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from loralay_build.layout import OutputLayout
from loralay_build.sandbox import Sandbox
from tests.helpers.cli import write_toml

RUN_TIMEOUT = 300.0  # no single build may take longer in these tests
DEADLINE_DB = 30.0  # a reader waits this long for the build's write lock


def write_config(sandbox: Sandbox, path: Path) -> Path:
    """A config overlay pointing the HAL source at the sandbox, with fast retries and splits
    wide enough that validation and test hold several documents."""
    overlay = sandbox.hal.client_config()
    overlay["http"].update({"backoff_base": 0.05, "backoff_max": 0.2})
    overlay["run"] = {"timeout": 30.0, "workers": 2}
    overlay["split"] = {"train": 0.6, "validation": 0.2, "test": 0.2}
    return write_toml(path, overlay)


def command(out: Path, config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "loralay_build.cli", "hal", "--out", str(out),
            "--config", str(config), "-q", *extra]


def start(out: Path, config: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(command(out, config), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def run(out: Path, config: Path) -> int:
    """A complete build; returns its exit code."""
    proc = start(out, config)
    _, err = proc.communicate(timeout=RUN_TIMEOUT)
    if proc.returncode not in (0, 3, 75):
        raise AssertionError(f"build failed ({proc.returncode}): {err.decode()[-2000:]}")
    return proc.returncode


def children(pid: int) -> set[int]:
    """Every live descendant of `pid` (workers of the build)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    out = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.add(pid)
    return out


def wait_gone(pids: set[int], seconds: float) -> set[int]:
    """Wait until the processes have exited; returns those still alive."""
    end = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < end:
        time.sleep(0.1)
    return alive(pids)


def phase(out: Path, dataset: str = "hal") -> str:
    """Which stage a killed build had reached, judged from its state database."""
    if not OutputLayout(out).state_db.exists():
        return "start"
    counts = Counter(statuses(out, dataset).values())
    if not counts:
        return "discovery"
    if counts["discovered"] or counts["retry"]:
        return "download"
    if counts["fetched"]:
        return "parse"
    return "write"


def statuses(out: Path, dataset: str = "hal") -> dict[str, str]:
    """Every candidate's status in the state database (empty before the first commit)."""
    db = OutputLayout(out).state_db
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=DEADLINE_DB) as conn:
            rows = conn.execute("SELECT id, status FROM candidates WHERE dataset = ?",
                                (dataset,)).fetchall()
    except sqlite3.OperationalError:  # the schema is being created by the build
        return {}
    return dict(rows)


def changed(out: Path, before: dict[str, str]) -> int:
    """How many candidates have another status than in `before` (a `statuses` result)."""
    return sum(1 for key, status in statuses(out).items() if before.get(key) != status)


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every published file (shards, build.json, card, rejects).

    build.json's `config_hash` is left out: each sandbox listens on its own port, so two
    sandboxes' configurations differ by their URLs and nothing else.
    """
    out = {}
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        data = path.read_bytes()
        if path.name == "build.json":
            record = json.loads(data)
            record.pop("config_hash")
            data = json.dumps(record, sort_keys=True).encode()
        out[path.name] = hashlib.sha256(data).hexdigest()
    return out


def split_ids(folder: Path) -> dict[str, str]:
    """article_id -> split, read from the shards listed in build.json."""
    build = json.loads((folder / "build.json").read_text())
    out: dict[str, str] = {}
    for entry in build["files"]:
        for article_id in pq.read_table(folder / entry["name"], columns=["article_id"]).column(
                "article_id").to_pylist():
            assert article_id not in out, f"{article_id} published twice"
            out[article_id] = entry["split"]
    return out
