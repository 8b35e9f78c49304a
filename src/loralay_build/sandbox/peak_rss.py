"""Peak resident memory of a process and its descendants, sampled from /proc.

What the memory benchmarks report and the memory tests bound: VmHWM counts Arrow's and the C
libraries' allocations as much as Python's.
"""

from __future__ import annotations

import threading
from pathlib import Path


def process_tree(root: int) -> list[int]:
    """`root` and every process descending from it, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def vm_hwm_mib(pid: int) -> float | None:
    """The process's peak resident set so far (VmHWM), in MiB; None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


class PeakRss:
    """Peak RSS of a process and of each of its descendants, sampled from /proc.

    VmHWM is the kernel's own high-water mark, so a peak between two samples is still seen
    as long as the process is sampled once before it exits.
    """

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.peaks: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        for pid in process_tree(self.pid):
            peak = vm_hwm_mib(pid)
            if peak is not None:
                self.peaks[pid] = max(self.peaks.get(pid, 0.0), peak)

    def _loop(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(self.interval):
                return

    def stop(self) -> tuple[float, float]:
        """Peak MiB of the process itself and the largest peak among its descendants."""
        self._stop.set()
        self._thread.join()
        others = [v for pid, v in self.peaks.items() if pid != self.pid]
        return self.peaks.get(self.pid, 0.0), max(others, default=0.0)
