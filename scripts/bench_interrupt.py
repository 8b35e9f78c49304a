#!/usr/bin/env python3
"""How fast a multi-dataset command stops on its first Ctrl-C or SIGTERM.

    python scripts/bench_interrupt.py [--rounds 3] [--docs 5]

Runs `build-corpus demo --only hal --only scielo-es --only koreascience` and sends SIGINT or
SIGTERM (interleaved) once hal's dataset is published, that is while scielo-es is being built.
Reported per signal: the exit codes seen and the median wall seconds from the signal to the
exit, and whether a dataset after the interrupted one was started (it must not be).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATASETS = ("hal", "scielo-es", "koreascience")


def one_round(signum: int, docs: int) -> tuple[int, float, bool]:
    """(exit code, seconds from the signal to the exit, koreascience started)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "demo"
        only = [arg for name in DATASETS for arg in ("--only", name)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "loralay_build.cli", "demo", "--docs", str(docs), *only,
             "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ready = out / "hal" / "build.json"
        while not ready.exists() and proc.poll() is None:
            time.sleep(0.02)
        os.kill(proc.pid, signum)
        sent = time.monotonic()
        proc.wait(120)
        return proc.returncode, time.monotonic() - sent, (out / "koreascience").exists()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--docs", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, list[tuple[int, float, bool]]] = {"SIGINT": [], "SIGTERM": []}
    for _ in range(args.rounds):
        for name in results:  # interleaved, so load changes hit both alike
            results[name].append(one_round(getattr(signal, name), args.docs))
    for name, rounds in results.items():
        codes = sorted({code for code, _, _ in rounds})
        seconds = statistics.median(s for _, s, _ in rounds)
        went_on = sum(started for _, _, started in rounds)
        print(f"{name}: exit codes {codes}, median {seconds:.2f} s from the signal to the "
              f"exit, next dataset started in {went_on} of {len(rounds)} rounds")


if __name__ == "__main__":
    main()
