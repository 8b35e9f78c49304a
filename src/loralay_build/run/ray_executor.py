"""`--executor ray`: the processing stage on a Ray cluster, with the local executor's isolation.

Only `process_document` runs on Ray; the driver keeps discovery, downloads, the state database
and the work store, and commits each outcome as it arrives. A Ray worker is not a sandbox: a
PDF engine that segfaults, aborts or loops in C takes the worker with it, and RLIMIT_AS on a
Ray worker would also cap Ray's own threads and shared-memory maps. So each Ray worker hands
the document to a persistent child process from `run/isolation.py` (forked from a preloaded
server, RLIMIT_AS, killed on timeout, replaced on death, recycled, dies with its parent), exactly
as the local executor does, and the same failures become the same rejects with the same details.

Nodes may leave mid-build (preempted, scaled down, crashed). Ray's own retries would count a
lost node against the document, and a document whose nodes died a few times would become a
reject. So the driver resubmits itself: a document whose node died goes to the nodes that
remain without counting against it; one whose Ray worker died alone is retried a bounded
number of times, then rejected.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import pickle
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from loralay_build.bundle import part_path, read_bundle
from loralay_build.config import RunSettings
from loralay_build.errors import ConfigError, LoralayError, Reason
from loralay_build.run.isolation import IsolatedPool, Limits
from loralay_build.run.process import Outcome, Task, process_document
from loralay_build.run.worker_results import limits_of, outcome_of

try:
    import ray
    from ray import exceptions as ray_errors
except ImportError as exc:  # the optional extra is not installed
    raise ConfigError('--executor ray needs Ray: pip install "loralay-build[ray]"') from exc

log = logging.getLogger(__name__)

SYSTEM_RETRIES = 2  # the driver resubmits a document whose Ray worker died this many times
# A document whose node died is resubmitted without counting against it, up to this many times
# (a document that took down that many nodes is not a cluster accident).
NODE_LOSSES = 5
IN_FLIGHT_PER_CPU = 2  # enough queued work to keep every CPU busy between two commits
CPU_CHECK_SECONDS = 1.0  # how often the driver counts the cluster's CPUs (one cheap GCS call)

ProcessFn = Callable[[Task], Outcome]

# -- inside a Ray worker ---------------------------------------------------------------------

_pool: IsolatedPool[Task, bytes] | None = None
_pool_key: tuple[ProcessFn, Limits] | None = None


def _pickled(func: ProcessFn, task: Task) -> bytes:
    """Runs in the isolated child: the outcome leaves it encoded once, and the Ray worker
    passes it on without decoding and re-encoding the row (a few ms per long document)."""
    return pickle.dumps(func(task), protocol=pickle.HIGHEST_PROTOCOL)


def _worker_pool(func: ProcessFn, limits: Limits) -> IsolatedPool[Task, bytes]:
    """This Ray worker's one isolated child, kept across tasks. Its fork server imports this
    module (Ray included) and the task's, so a replacement child starts without importing."""
    global _pool, _pool_key
    if _pool is None or _pool_key != (func, limits):
        if _pool is not None:
            _pool.close()
        _pool = IsolatedPool(functools.partial(_pickled, func), 1, limits,
                             [__name__, func.__module__])
        _pool_key = (func, limits)
    return _pool


def _isolated(pool: IsolatedPool[Task, bytes], task: Task) -> bytes | Outcome:
    # Drain the iterator: after a lost child it replaces the child before it stops.
    results = list(pool.imap_unordered([task]))
    value = results[0][1]
    return value if isinstance(value, bytes) else outcome_of(value)


def process_remote(
    func: ProcessFn, limits: Limits, task: Task, files: dict[str, bytes] | None
) -> tuple[str, bytes | Outcome]:
    """One document in this worker's isolated child, with the node that did it; `files` are
    the blob (and, for a bundle, its parts) by their place in the store, when the store is not
    on shared disk."""
    node = ray.get_runtime_context().get_node_id()
    pool = _worker_pool(func, limits)
    if files is None:
        return node, _isolated(pool, task)
    with tempfile.TemporaryDirectory(prefix="loralay-") as folder:
        for name, data in files.items():  # the store's layout, so bundle parts resolve
            target = Path(folder) / name
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(data)
        path = Path(folder) / _store_name(Path(task.pdf_path))
        return node, _isolated(pool, dataclasses.replace(task, pdf_path=str(path)))


def _store_name(path: Path) -> str:
    """A blob's place in the store: `ab/abcd…`."""
    return f"{path.parent.name}/{path.name}"


def _blob_files(path: Path) -> dict[str, bytes]:
    """The blob a task names and, when it is a bundle (corpus/bundle.py), its parts."""
    files = {_store_name(path): path.read_bytes()}
    bundle = read_bundle(path)
    for sha in (bundle.pdf, bundle.reference) if bundle else ():
        if sha:
            part = part_path(path, sha)
            files[_store_name(part)] = part.read_bytes()
    return files


# -- in the driver ---------------------------------------------------------------------------


class RayClusterError(LoralayError):
    """Ray itself failed (cluster unreachable, object lost): stop; a re-run resumes."""


def _connect(settings: RunSettings) -> bool:
    """Join the configured cluster, or start a local instance; True if this call started it."""
    if ray.is_initialized():
        return False
    # Without an address Ray would join a cluster started on this machine or named by
    # RAY_ADDRESS; "local" always starts the private instance the setting promises.
    address = settings.ray_address or "local"
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address == "local":
        options.update(num_cpus=settings.workers, include_dashboard=False)
    try:
        ray.init(address=address, **options)
    except (ConnectionError, ValueError, RuntimeError, TimeoutError) as exc:
        where = f"at {address}" if settings.ray_address else "locally"
        raise ConfigError(f"cannot start or join Ray {where}: {exc}".splitlines()[0]) from exc
    return True


Result = tuple[str, bytes | Outcome]  # the node that ran a task, and what it returned


@dataclasses.dataclass
class _Sent:
    """A submitted document and what befell it so far."""

    task: Task
    crashes: int = 0  # its Ray worker died
    node_losses: int = 0  # its node died


class RayExecutor:
    """Documents as Ray tasks, at most `in_flight` at a time; outcomes come as they finish."""

    def __init__(self, settings: RunSettings, func: ProcessFn = process_document) -> None:
        self.settings = settings
        self.func = func
        self.limits = limits_of(settings)
        self.owner = _connect(settings)
        self.in_flight = 0
        self.sized = 0.0  # when `in_flight` last followed the cluster's CPUs
        self._resize()
        self.remote = ray.remote(process_remote).options(
            num_cpus=1, max_retries=0, retry_exceptions=False
        )
        self.pending: dict[ray.ObjectRef[Result], _Sent] = {}
        self.per_node: Counter[str] = Counter()  # documents each node returned
        self.resubmitted = 0  # documents sent again after their node died

    def _resize(self) -> None:
        """Two documents in flight per CPU of the cluster as it is now: nodes that join
        mid-build get work, and a driver started before its nodes is not stuck at two."""
        self.sized = time.monotonic()
        cpus = int(ray.cluster_resources().get("CPU", 0))  # type: ignore[no-untyped-call]
        wanted = self.settings.in_flight or IN_FLIGHT_PER_CPU * max(1, cpus)
        if wanted != self.in_flight:
            self.in_flight = wanted
            log.info("ray: %d CPUs, up to %d documents in flight", cpus, wanted)

    def _submit(self, sent: _Sent) -> None:
        task = sent.task
        if self.settings.shared_blobs:  # a worker's current folder is not the driver's
            path = str(Path(task.pdf_path).absolute())
            shipped, pdf = dataclasses.replace(task, pdf_path=path), None
        else:
            shipped, pdf = task, _blob_files(Path(task.pdf_path))
        self.pending[self.remote.remote(self.func, self.limits, shipped, pdf)] = sent

    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]:
        source = iter(tasks)
        exhausted = False
        while True:
            if time.monotonic() - self.sized >= CPU_CHECK_SECONDS:
                self._resize()
            while not exhausted and len(self.pending) < self.in_flight:
                task = next(source, None)
                if task is None:
                    exhausted = True
                else:
                    self._submit(_Sent(task))
            if not self.pending:
                return
            for ref in self._wait():
                sent = self.pending.pop(ref)
                outcome = self._collect(ref, sent)
                if outcome is None:
                    self._submit(sent)
                else:
                    yield sent.task, outcome

    def _wait(self) -> list[ray.ObjectRef[Result]]:
        """At least one finished task. Ray would wait forever for a CPU when the cluster has
        none left (every node gone); the driver stops after `ray_no_cpu_wait` seconds."""
        patience = self.settings.ray_no_cpu_wait
        without_cpu: float | None = None
        while True:
            ready, _ = ray.wait(list(self.pending), num_returns=1,
                                timeout=min(CPU_CHECK_SECONDS, patience))
            cpus = 1 if ready else ray.cluster_resources().get(  # type: ignore[no-untyped-call]
                "CPU", 0)
            if cpus > 0 and without_cpu is not None:
                self.sized = 0.0  # nodes are back: count their CPUs before the next submit
            if ready:
                return ready
            if cpus > 0:
                without_cpu = None
                continue
            now = time.monotonic()
            if without_cpu is None:
                without_cpu = now
                log.warning("ray: the cluster has no CPU left; waiting up to %.0f s for nodes",
                            patience)
            elif now - without_cpu >= patience:
                raise RayClusterError(
                    f"the Ray cluster has had no CPU for {patience:.0f} s with "
                    f"{len(self.pending)} documents waiting; run the same command again "
                    "once nodes have joined")

    def _collect(self, ref: ray.ObjectRef[Result], sent: _Sent) -> Outcome | None:
        """The document's outcome, or None when it must be sent again."""
        try:
            node, value = ray.get(ref)
        except ray_errors.OutOfMemoryError:
            return Outcome(reason=Reason.TOO_LARGE, detail="ray: killed by the memory monitor")
        except (ray_errors.NodeDiedError, ray_errors.ObjectLostError) as exc:
            # A result held on a node that left (and could not be rebuilt without CPUs) is
            # lost with it, like a task in flight: nothing of the document was recorded.
            sent.node_losses += 1
            if sent.node_losses <= NODE_LOSSES:
                self.resubmitted += 1
                log.warning("ray: a node was lost with %s in flight; sent to the others",
                            sent.task.candidate.id)
                return None
            return Outcome(reason=Reason.CORRUPTED,
                           detail=f"ray: {type(exc).__name__} {sent.node_losses} times")
        except ray_errors.WorkerCrashedError as exc:
            # The isolated child absorbs what a PDF can do; a Ray worker that still died on
            # every retry of this one document makes it a reject, not a stuck build.
            sent.crashes += 1
            if sent.crashes <= SYSTEM_RETRIES:
                return None
            return Outcome(reason=Reason.CORRUPTED,
                           detail=f"ray: {type(exc).__name__} after {SYSTEM_RETRIES} retries")
        except ray_errors.RayTaskError as exc:  # a bug outside the child, e.g. a full disk
            # Its own text starts with the worker's pid and address: the cause is what repeats.
            cause = f"{type(exc.cause).__name__}: {exc.cause}"
            return Outcome(reason=Reason.CORRUPTED, detail=cause.splitlines()[0][:500])
        except ray_errors.RayError as exc:
            raise RayClusterError(
                f"ray failed on {sent.task.candidate.id}: {type(exc).__name__}; "
                "run the same command again to resume"
            ) from exc
        self.per_node[node] += 1
        if isinstance(value, bytes):
            outcome: Outcome = pickle.loads(value)  # from this run's own isolated child
            return outcome
        return value

    def close(self) -> None:
        """Cancel what is still queued (an interrupted run), say where the documents went
        and leave the cluster."""
        for ref in self.pending:
            ray.cancel(ref, force=True)
        self.pending.clear()
        if self.per_node:
            nodes = ", ".join(f"{node[:12]}={n}" for node, n in sorted(self.per_node.items()))
            log.info("ray: %d documents on %d nodes (%s); %d resubmitted after a node was lost",
                     self.per_node.total(), len(self.per_node), nodes, self.resubmitted)
        if self.owner:
            ray.shutdown()
