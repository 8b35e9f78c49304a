"""Spawned workers do not re-run the parent's main script unless the task needs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import math, os, sys
if __name__ == "__mp_main__":
    with open(os.environ["MARK"], "a") as handle:
        handle.write("main script imported in a worker\\n")
from loralay_build.run.isolation import IsolatedPool, Limits

def halve(x):
    return x / 2

if __name__ == "__main__":
    func = halve if sys.argv[1] == "own" else math.sqrt
    with IsolatedPool(func, 1, Limits(60.0, 2 << 30, 10)) as pool:
        print([value for _, value in pool.imap_unordered([16.0])])
"""


def _run(tmp_path: Path, which: str) -> tuple[str, bool]:
    script, mark = tmp_path / "main.py", tmp_path / f"mark-{which}"
    script.write_text(SCRIPT)
    env = {**os.environ, "MARK": str(mark),
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, str(script), which], capture_output=True,
                          text=True, env=env, timeout=120, check=True)
    return done.stdout.strip(), mark.exists()


def test_importable_function_leaves_the_main_script_out(tmp_path: Path) -> None:
    assert _run(tmp_path, "math") == ("[4.0]", False)


def test_function_of_the_main_script_still_runs(tmp_path: Path) -> None:
    assert _run(tmp_path, "own") == ("[8.0]", True)
