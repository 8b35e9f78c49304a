"""`--executor ray`: same output as the local executor, the same isolation, the same resume,
on several nodes, one of which may leave mid-build.

One real Ray cluster on this machine (a head without CPUs and two worker nodes of one CPU
each) serves the whole module: the builds run as real `build-corpus` subprocesses that join it
with `--ray-address`, the hostile-PDF sweep runs in this process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from loralay_build.config import RunSettings
from loralay_build.errors import Reason
from loralay_build.layout import OutputLayout
from loralay_build.parse.settings import ParseSettings
from loralay_build.records import Candidate
from loralay_build.run.process import Outcome, Task
from loralay_build.sandbox import Sandbox
from loralay_build.sources import load_settings
from loralay_build.text import MatchSettings
from tests.helpers import buildrun
from tests.helpers.cli import run_cli_subprocess
from tests.helpers.local import make_corpus, write_manifest
from tests.helpers.reliability import BADPDFS
from tests.helpers.waits import DEADLINE, state_of, wait_for

# Every test here builds on a real cluster; on a loaded machine one takes minutes.
pytestmark = pytest.mark.timeout(900)

DOCS = 16
SEED = 5
TIMEOUT = 30.0  # the 1 GiB bomb needs ~6 s (~8 s with both cores busy) to reach MemoryError


WORKER_NODES = 2
WORKER_NICENESS = "RAY_worker_niceness"  # the raylet's setting for its workers' nice value
RUNNING = b"ray::process_remote"  # a Ray worker's process title while it runs a document


@dataclass
class RayCluster:
    """A head without CPUs (it runs Ray's services and the drivers, as on a real cluster) and
    worker nodes of one CPU each."""

    cluster: Any  # ray.cluster_utils.Cluster
    workers: list[Any]

    def remove(self, nodes: list[Any]) -> None:
        for node in nodes:
            self.cluster.remove_node(node)
            self.workers.remove(node)

    def hold_running_task(self) -> tuple[Any, set[int]]:
        """A worker node with a document in flight, held there until the node leaves: the Ray
        worker whose title says it runs `process_remote` is stopped, and its title read again
        once it is stopped. The node, and the processes to kill once it has left."""
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            for node in self.workers:
                for pid in buildrun.children(node.all_processes["raylet"][0].process.pid):
                    if not _cmdline(pid).startswith(RUNNING):
                        continue
                    os.kill(pid, signal.SIGSTOP)
                    wait_for(partial(_stopped, pid), "the worker stopped")
                    if _cmdline(pid).startswith(RUNNING):  # frozen while running it
                        return node, {pid} | buildrun.children(pid)
                    os.kill(pid, signal.SIGCONT)  # it finished just before the stop
            time.sleep(0.01)
        raise AssertionError("no worker node ran a document")

    def remove_held(self, node: Any, held: set[int]) -> None:
        """Remove a node whose worker `hold_running_task` stopped; the stopped worker goes
        once the cluster has marked the node dead, so the driver learns of a lost node."""
        import ray

        try:
            self.remove([node])
            wait_for(lambda: not any(n["Alive"] for n in ray.nodes()  # type: ignore[no-untyped-call]
                                      if n["NodeID"] == node.node_id), "the node marked dead")
        finally:
            for pid in held:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def restore(self) -> None:
        """Worker nodes back to `WORKER_NODES`, for the module's other tests. The nodes
        start together, so a build that waits for CPUs sees them join within about a
        second of each other instead of one node start-up apart."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        added = []
        while len(self.workers) < WORKER_NODES:
            added.append(self.cluster.add_node(num_cpus=1, wait=False))
            self.workers.append(added[-1])
        self.cluster.wait_for_nodes()
        # Each new node has run a task (without taking a CPU a stopped build may hold) and
        # the cluster counts every CPU: a build that starts or resumes now sees them all.
        here = [ray.remote(_node_id).options(num_cpus=0, scheduling_strategy=(
            NodeAffinitySchedulingStrategy(node.node_id, soft=False))).remote() for node in added]
        assert ray.get(here, timeout=DEADLINE) == [node.node_id for node in added]
        wait_for(lambda: _cpus(ray.cluster_resources()) == WORKER_NODES,  # type: ignore[no-untyped-call]
                 "every CPU counted")


def _node_id() -> str:
    import ray

    return str(ray.get_runtime_context().get_node_id())


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it just ended
        return b""


def _cpus(resources: dict[str, float]) -> float:
    return resources.get("CPU", 0)


def _stopped(pid: int) -> bool:
    return state_of(pid) in ("T", "")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    """The module's cluster; builds join it instead of starting their own."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    # Ray runs its workers at nice 15, so on a machine busy with other work a document would
    # get a sliver of a core and its wall-clock timeout would fire: these nodes, like a
    # dedicated cluster's, give theirs a whole share.
    niceness = os.environ.get(WORKER_NICENESS)
    os.environ[WORKER_NICENESS] = "0"
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        nodes = RayCluster(cluster, [])
        nodes.restore()
        yield nodes
    finally:
        ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]
        if niceness is None:
            del os.environ[WORKER_NICENESS]
        else:
            os.environ[WORKER_NICENESS] = niceness


@pytest.fixture(scope="module")
def ray_address(ray_cluster: RayCluster) -> str:
    return str(ray_cluster.cluster.address)


SPREAD = re.compile(r"ray: (\d+) documents on (\d+) nodes \((.*)\); (\d+) resubmitted")


def spread(stderr: str) -> tuple[dict[str, int], int]:
    """Documents per node and documents resubmitted, from a build's `-v` log."""
    (found,) = SPREAD.findall(stderr)
    per_node = {k: int(v) for k, v in (pair.split("=") for pair in found[2].split(", "))}
    assert sum(per_node.values()) == int(found[0]) and len(per_node) == int(found[1])
    return per_node, int(found[3])


def digests(folder: Path) -> dict[str, str]:
    """Every published file's sha256; build.json's config_hash aside (each sandbox has its
    own port, so its own URLs)."""
    files = buildrun.digests(folder)
    assert any(name.endswith(".parquet") for name in files)
    return files


def contents(folder: Path) -> dict[str, bytes]:
    """Every published file, byte for byte."""
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
    assert any(name.endswith(".parquet") for name in files)
    return files


def hal_command(out: Path, config: Path, *extra: str) -> list[str]:
    """`build-corpus hal`, with its log (-v) when asked, quiet otherwise."""
    argv = buildrun.command(out, config, *extra)
    return [a for a in argv if a != "-q"] if "-v" in extra else argv


def hal_build(out: Path, config: Path, *extra: str,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(hal_command(out, config, *extra), capture_output=True,
                          timeout=buildrun.RUN_TIMEOUT, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def hal_reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HAL sandbox corpus built with the local executor."""
    tmp = tmp_path_factory.mktemp("hal-local")
    with Sandbox(docs=DOCS, seed=SEED) as sandbox:
        config = buildrun.write_config(sandbox, tmp / "config.toml")
        result = hal_build(tmp / "out", config, "--executor", "local")
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    return tmp / "out" / "hal"


def every_file(folder: Path) -> dict[str, str]:
    """sha256 of every file under a dataset folder, the page shards and build.json whole."""
    files = {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(folder.rglob("*")) if p.is_file()}
    assert any(name.startswith("pages/") for name in files)
    return files


def test_every_executor_gives_the_same_bytes(ray_address: str, tmp_path: Path) -> None:
    """`serial`, `local` and `ray` (two nodes) on one input and one configuration: every
    shard, page shard, card, build.json (its config_hash included) and report is the same,
    byte for byte; where the work ran enters no hash."""
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 6)
    (docs / "page.pdf").write_text("<html>not a pdf</html>")
    entries.append({"id": "html", "pdf": "page.pdf", "language": "fr",
                    "abstracts": {"fr": "x y z"}})
    manifest = write_manifest(docs / "docs.jsonl", entries)
    args = ("local", "--input", str(manifest), "--no-filter", "--page-images")
    serial = run_cli_subprocess(*args, "--out", str(tmp_path / "serial"), "--executor", "serial")
    assert serial.returncode == 0, serial.stderr
    local = run_cli_subprocess(*args, "--out", str(tmp_path / "local"), "--executor", "local",
                               "--workers", "2")
    assert local.returncode == 0, local.stderr
    ray = run_cli_subprocess(*args, "--out", str(tmp_path / "ray"), "--executor", "ray",
                  "--ray-address", ray_address, "-v",
                  env={"LORALAY_RUN__SHARED_BLOBS": "true"})  # workers read --out directly
    assert ray.returncode == 0, ray.stderr
    per_node, _ = spread(ray.stderr)
    assert len(per_node) == 2 and sum(per_node.values()) == 6  # both nodes processed some
    reference = every_file(tmp_path / "serial" / "local")
    assert every_file(tmp_path / "local" / "local") == reference
    assert every_file(tmp_path / "ray" / "local") == reference


def test_without_an_address_a_private_instance_is_started(ray_address: str,
                                                           tmp_path: Path) -> None:
    """Another cluster runs on this machine (the module's, also named by RAY_ADDRESS): a
    build without --ray-address still gets its own instance of --workers CPUs."""
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "docs.jsonl", make_corpus(docs, 3))
    args = ("local", "--input", str(manifest), "--workers", "1", "--no-filter")
    local = run_cli_subprocess(*args, "--out", str(tmp_path / "local"), "--executor", "local")
    assert local.returncode == 0, local.stderr
    ray = run_cli_subprocess(*args, "--out", str(tmp_path / "ray"), "--executor", "ray", "-v",
                             env={"RAY_ADDRESS": ray_address})
    assert ray.returncode == 0, ray.stderr
    assert "ray: 1 CPUs" in ray.stderr
    per_node, _ = spread(ray.stderr)
    assert len(per_node) == 1 and sum(per_node.values()) == 3
    assert contents(tmp_path / "ray" / "local") == contents(tmp_path / "local" / "local")


def test_hal_corpus_is_byte_identical(ray_address: str, hal_reference: Path,
                                      tmp_path: Path) -> None:
    with Sandbox(docs=DOCS, seed=SEED) as sandbox:  # the blobs travel inside the tasks
        config = buildrun.write_config(sandbox, tmp_path / "config.toml")
        result = hal_build(tmp_path / "out", config, "--executor", "ray",
                           "--ray-address", ray_address, "-v")
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    per_node, resubmitted = spread(result.stderr.decode())
    assert len(per_node) == 2 and resubmitted == 0
    assert digests(tmp_path / "out" / "hal") == digests(hal_reference)


def _counts(out: Path) -> dict[str, int]:
    db = OutputLayout(out).state_db
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return dict(conn.execute(
                "SELECT status, COUNT(*) FROM candidates WHERE dataset = 'hal' GROUP BY status"
            ).fetchall())
    except sqlite3.OperationalError:  # the schema is not there yet
        return {}


def test_driver_killed_mid_processing_resumes(ray_address: str, hal_reference: Path,
                                              tmp_path: Path) -> None:
    """kill -9 while Ray tasks are in flight; the re-run redoes only those, output identical."""
    out = tmp_path / "out"
    env = {**os.environ, "LORALAY_RUN__IN_FLIGHT": "2", "LORALAY_RUN__COMMIT_BATCH": "1"}
    with Sandbox(docs=DOCS, seed=SEED) as sandbox:
        config = buildrun.write_config(sandbox, tmp_path / "config.toml")
        argv = buildrun.command(out, config, "--executor", "ray", "--ray-address", ray_address)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + buildrun.RUN_TIMEOUT
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                counts = _counts(out)
                if counts.get("processed", 0) >= 1 and counts.get("fetched", 0) >= 2:
                    break
                time.sleep(0.01)
            assert proc.poll() is None, "the build ended before the kill"
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
        left = _counts(out)
        assert proc.returncode == -signal.SIGKILL
        assert left.get("processed", 0) >= 1 and left.get("fetched", 0) >= 1, left
        resumed = hal_build(out, config, "--executor", "ray", "--ray-address", ray_address)
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    assert digests(out / "hal") == digests(hal_reference)
    assert buildrun.split_ids(out / "hal") == buildrun.split_ids(hal_reference)
    with sqlite3.connect(OutputLayout(out).state_db) as conn:
        (counts,) = conn.execute("SELECT counts FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    redone = sum(v for k, v in json.loads(counts).items()
                 if k == "processed" or k.startswith("rejected_"))
    assert redone == left["fetched"]  # only what the killed driver had not committed


def _last_run_counts(out: Path) -> dict[str, int]:
    with sqlite3.connect(OutputLayout(out).state_db) as conn:
        (counts,) = conn.execute("SELECT counts FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    found: dict[str, int] = json.loads(counts)
    return found


@contextmanager
def _logged_ray_build(ray_cluster: RayCluster, folder: Path, out: Path,
                      env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A `hal` build into `out` on the cluster, running, its `-v` log in `folder`/stderr;
    killed on leaving."""
    with Sandbox(docs=DOCS, seed=SEED) as sandbox:
        config = buildrun.write_config(sandbox, folder / "config.toml")
        argv = hal_command(out, config, "--executor", "ray", "--ray-address",
                           str(ray_cluster.cluster.address), "-v")
        with open(folder / "stderr", "wb") as log:
            proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=log)
            try:
                yield proc
            finally:
                proc.kill()
                proc.wait()


def _wait_until(proc: subprocess.Popen[Any], ready: Callable[[], bool], what: str) -> None:
    """Poll until `ready()` holds; the build must still be running then, before `what`."""
    deadline = time.monotonic() + buildrun.RUN_TIMEOUT
    while proc.poll() is None and time.monotonic() < deadline:
        if ready():
            break
        time.sleep(0.01)
    assert proc.poll() is None, f"the build ended before {what}"


def _build_losing_a_node(ray_cluster: RayCluster, folder: Path) -> tuple[Path, int, str]:
    """A Ray build from which a node running a document (held there) is removed once the
    first document is processed; the output root, the exit code and the `-v` log."""
    out = folder / "out"
    env = {**os.environ, "LORALAY_RUN__COMMIT_BATCH": "1"}  # progress visible in the state
    with _logged_ray_build(ray_cluster, folder, out, env) as proc:
        _wait_until(proc, lambda: _counts(out).get("processed", 0) >= 1, "the node left")
        ray_cluster.remove_held(*ray_cluster.hold_running_task())
        proc.wait(timeout=buildrun.RUN_TIMEOUT)
    return out, proc.returncode, (folder / "stderr").read_text()


@pytest.mark.slow
def test_node_removed_mid_build(ray_cluster: RayCluster, hal_reference: Path,
                                tmp_path: Path) -> None:
    """A worker node leaves while it runs a document: its documents go to the other, each
    document is committed once, and the corpus is byte-identical to the local executor's.

    The Ray worker running the document is stopped before the node leaves, so the node
    cannot finish it first: the node always leaves with a document on it.
    """
    try:
        out, returncode, stderr = _build_losing_a_node(ray_cluster, tmp_path)
    finally:
        ray_cluster.restore()
    assert returncode == 0, stderr[-2000:]
    per_node, resubmitted = spread(stderr)
    assert stderr.count("a node was lost with") == resubmitted
    assert digests(out / "hal") == digests(hal_reference)
    assert buildrun.split_ids(out / "hal") == buildrun.split_ids(hal_reference)
    # Each document processed or rejected once, as many as without Ray.
    assert _last_run_counts(out) == _last_run_counts(hal_reference.parent)
    assert sum(per_node.values()) == sum(
        n for k, n in _last_run_counts(out).items()
        if k == "processed" or k.startswith("rejected_"))
    assert resubmitted >= 1, "the node left without documents on it"


@pytest.mark.slow
def test_cluster_without_cpus_stops_then_resumes(ray_cluster: RayCluster, hal_reference: Path,
                                                 tmp_path: Path) -> None:
    """Every worker node leaves mid-build: the driver does not wait forever but stops after
    [run] ray_no_cpu_wait with one line and exit 1; with nodes back the same command finishes
    the corpus, byte-identical."""
    out = tmp_path / "out"
    env = {**os.environ, "LORALAY_RUN__COMMIT_BATCH": "1", "LORALAY_RUN__RAY_NO_CPU_WAIT": "3"}
    try:
        with Sandbox(docs=DOCS, seed=SEED) as sandbox:
            config = buildrun.write_config(sandbox, tmp_path / "config.toml")
            argv = hal_command(out, config, "--executor", "ray", "--ray-address",
                               str(ray_cluster.cluster.address))
            proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
            try:
                _wait_until(proc, lambda: _counts(out).get("processed", 0) >= 2,
                            "the nodes left")
                # The driver is stopped while the nodes leave, so that the build cannot
                # finish its last documents on the node that leaves last.
                os.kill(proc.pid, signal.SIGSTOP)
                try:
                    ray_cluster.remove(list(ray_cluster.workers))
                finally:
                    os.kill(proc.pid, signal.SIGCONT)
                _, stderr = proc.communicate(timeout=DEADLINE)
            finally:
                proc.kill()
                proc.wait()
            assert proc.returncode == 1, stderr[-2000:]
            assert "Traceback" not in stderr
            (line,) = [x for x in stderr.splitlines() if "build failed" in x]
            assert line.endswith("run the same command again once nodes have joined"), line
            assert "the Ray cluster has had no CPU for 3 s" in line
            left = _counts(out)
            assert left.get("processed", 0) >= 2 and left.get("fetched", 0) >= 1, left
            ray_cluster.restore()
            resumed = hal_build(out, config, "--executor", "ray", "--ray-address",
                                str(ray_cluster.cluster.address))
        assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
        assert digests(out / "hal") == digests(hal_reference)
        assert buildrun.split_ids(out / "hal") == buildrun.split_ids(hal_reference)
    finally:
        ray_cluster.restore()


@pytest.mark.slow
def test_nodes_that_join_mid_build_get_work(ray_cluster: RayCluster, hal_reference: Path,
                                            tmp_path: Path) -> None:
    """The build starts while no worker node is there (the head has no CPU): it waits, and
    the nodes that join get as many documents in flight as their CPUs take. The driver is
    stopped while the nodes start, so that a build this short cannot end on the first node
    before the second has joined: both are there when it resumes."""
    out = tmp_path / "out"
    env = {**os.environ, "LORALAY_RUN__RAY_NO_CPU_WAIT": "300"}
    ray_cluster.remove(list(ray_cluster.workers))
    try:
        with _logged_ray_build(ray_cluster, tmp_path, out, env) as proc:
            _wait_until(proc, lambda: "the cluster has no CPU left" in (
                tmp_path / "stderr").read_text(), "nodes joined")
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                ray_cluster.restore()
            finally:
                os.kill(proc.pid, signal.SIGCONT)
            proc.wait(timeout=buildrun.RUN_TIMEOUT)
        stderr = (tmp_path / "stderr").read_text()
        assert proc.returncode == 0, stderr[-2000:]
        assert "ray: 2 CPUs, up to 4 documents in flight" in stderr  # followed the nodes
        assert "ray: 0 CPUs, up to 2 documents in flight" in stderr
        per_node, _ = spread(stderr)
        assert len(per_node) == 2
        assert digests(out / "hal") == digests(hal_reference)
    finally:
        ray_cluster.restore()


def _task(path: Path, backend: str, source_id: str | None = None) -> Task:
    candidate = Candidate(
        id=f"badpdf:{source_id or path.stem}", source="local",
        source_id=source_id or path.stem, dataset="badpdfs", title=path.stem, language="en",
        abstracts={"en": "A hostile document used to check that nothing empty is published."},
        published="2024-01-01",
    )
    return Task(candidate, str(path), "0" * 64, ParseSettings(backend=backend), MatchSettings())


@pytest.mark.slow
def test_hostile_pdfs_cost_one_reject_each(ray_address: str) -> None:
    """A hang, two memory bombs, a segfault and an abort on Ray workers; the run finishes."""
    from loralay_build.run.ray_executor import RayExecutor
    from tests.helpers.raywork import crash_or_process

    control = BADPDFS / "A00_control_valid.pdf"
    tasks = [
        _task(BADPDFS / "B03_ref_cycle_contents.pdf", "pdfplumber"),  # loops forever
        _task(BADPDFS / "C01_flate_bomb_content_1GiB.pdf", "pdfplumber"),  # MemoryError
        _task(BADPDFS / "C02_flate_bomb_nested_4GiB.pdf", "pdfium"),  # PDFium aborts at the limit
        _task(control, "pdfium", "segfault"),
        _task(control, "pdfium", "abort"),
        _task(control, "pdfium"),
    ]
    settings = RunSettings(executor="ray", timeout=TIMEOUT, memory_limit_mb=2048, in_flight=3)
    executor = RayExecutor(settings, func=crash_or_process)
    try:
        outcomes: dict[str, Outcome] = {
            task.candidate.source_id: outcome for task, outcome in executor.run(tasks)
        }
    finally:
        executor.close()
    found = {key: (o.reason, o.detail) for key, o in outcomes.items()}
    assert found["B03_ref_cycle_contents"] == (Reason.TIMEOUT, f"killed after {TIMEOUT:.0f}s")
    assert found["C01_flate_bomb_content_1GiB"][0] is Reason.TOO_LARGE
    assert found["C02_flate_bomb_nested_4GiB"] == (
        Reason.TOO_LARGE, "worker aborted at its memory limit of 2048 MiB ([run] memory_limit_mb)")
    assert found["segfault"] == (Reason.CORRUPTED, "worker killed by SIGSEGV")
    assert found["abort"] == (Reason.CORRUPTED, "worker killed by SIGABRT")
    assert found["A00_control_valid"][0] is Reason.ABSTRACT_NOT_FOUND  # parsed normally


def _unpicklable(task: Task) -> Outcome:
    return Outcome(reason=Reason.CORRUPTED)


def test_failure_outside_the_isolated_child_names_its_cause(ray_address: str) -> None:
    """The Ray worker cannot hand a function it cannot pickle to its child: the reject says
    why, not which worker process on which address raised."""
    from loralay_build.run.ray_executor import RayExecutor

    func = _unpicklable
    func.__qualname__ = "nowhere"  # pickled by value for Ray, by name for the child: fails
    executor = RayExecutor(RunSettings(executor="ray"), func=func)
    try:
        (outcome,) = [o for _, o in executor.run([_task(BADPDFS / "A00_control_valid.pdf",
                                                          "pdfium")])]
    finally:
        executor.close()
    assert outcome.reason is Reason.CORRUPTED
    assert outcome.detail.startswith("PicklingError: Can't pickle"), outcome.detail
    assert "attribute lookup nowhere" in outcome.detail


def test_missing_ray_extra_is_one_line_and_exit_2(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "docs.jsonl", make_corpus(docs, 1))
    out = tmp_path / "out"
    code = ("import sys; sys.modules['ray'] = None; from loralay_build.cli import main; "
            "main()")
    result = subprocess.run(
        [sys.executable, "-c", code, "local", "--input", str(manifest), "--out", str(out),
         "--executor", "ray"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        'configuration error: --executor ray needs Ray: pip install "loralay-build[ray]"'
    ]
    assert not (out / "local").exists()  # refused before anything was crawled


def test_ray_address_with_another_executor_is_a_usage_error(tmp_path: Path) -> None:
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("")
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(tmp_path / "out"),
                                "--executor", "local", "--ray-address", "auto")
    assert result.returncode == 2
    assert "--ray-address needs --executor ray" in result.stderr


def test_ray_no_cpu_wait_must_be_positive(tmp_path: Path) -> None:
    """Zero would make the driver poll the cluster without pause."""
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "docs.jsonl", make_corpus(docs, 1))
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(tmp_path / "out"),
                                env={"LORALAY_RUN__RAY_NO_CPU_WAIT": "0"})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "configuration error: [run] ray_no_cpu_wait = 0.0: must be above 0 (set by environment "
        "variable LORALAY_RUN__RAY_NO_CPU_WAIT)"]


def test_where_work_runs_is_not_part_of_the_config_hash() -> None:
    base = load_settings("local", environ={}).config_hash()
    placed = {"run": {"executor": "ray", "workers": 8, "ray_address": "auto",
                      "shared_blobs": True, "in_flight": 64, "ray_no_cpu_wait": 5.0}}
    assert load_settings("local", environ={}, overrides=placed).config_hash() == base
    limits = {"run": {"timeout": 5.0}}
    assert load_settings("local", environ={}, overrides=limits).config_hash() != base


def test_eurlex_bundles_travel_with_their_parts(ray_address: str, tmp_path: Path) -> None:
    """A EUR-Lex blob is a manifest naming a PDF and a text; sent as bytes, its parts go too."""
    from loralay_build.config import merge
    from loralay_build.sandbox.eurlex import EurlexSandbox
    from loralay_build.sandbox.server import SandboxServer
    from tests.helpers.cli_runner import FAST, write_config

    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=6, seed=3, faults=False)
        config = write_config(tmp_path / "c.toml", merge(sandbox.client_config(("en",)), FAST))
        for executor, extra in (("local", ()), ("ray", ("--ray-address", ray_address))):
            result = run_cli_subprocess("eurlex", "--out", str(tmp_path / executor), "--config",
                                        str(config), "--executor", executor, *extra)
            assert result.returncode == 0, result.stderr
    local = contents(tmp_path / "local" / "eurlex-en")
    assert contents(tmp_path / "ray" / "eurlex-en") == local
    build = json.loads(local["build.json"])
    assert build["counts"]["splits"]["train"] > 0


def _big_result() -> tuple[str, bytes | Outcome]:
    return "node", b"x" * 2_000_000  # held in the worker node's object store


@pytest.mark.slow
def test_a_result_lost_with_its_node_is_sent_again(ray_cluster: RayCluster,
                                                   ray_address: str) -> None:
    """A document whose result was still on a node when every node left comes back as
    'send again', like a task in flight, not as a failed build."""
    import ray

    from loralay_build.run.ray_executor import RayExecutor, _Sent

    executor = RayExecutor(RunSettings(executor="ray", ray_address=ray_address))
    try:
        ref = ray.remote(_big_result).options(num_cpus=1, max_retries=0).remote()
        ready, _ = ray.wait([ref], timeout=DEADLINE, fetch_local=False)
        assert ready, "the task did not finish"
        ray_cluster.remove(list(ray_cluster.workers))
        sent = _Sent(_task(BADPDFS / "A00_control_valid.pdf", "pdfium"))
        assert executor._collect(ref, sent) is None
        assert (executor.resubmitted, sent.node_losses) == (1, 1)
    finally:
        executor.close()
        ray_cluster.restore()
