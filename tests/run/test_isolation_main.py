"""Spawned workers do not re-run the parent's main script (run as a file or, with `python -m`,
as a module) unless the task needs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def _run(tmp_path: Path, which: str, as_module: bool) -> tuple[str, bool]:
    script, mark = tmp_path / "main.py", tmp_path / f"mark-{which}"
    script.write_text(SCRIPT)
    env = {**os.environ, "MARK": str(mark),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *(p for p in sys.path if p)])}
    run = ["-m", "main"] if as_module else [str(script)]
    done = subprocess.run([sys.executable, *run, which], capture_output=True,
                          text=True, env=env, timeout=120, check=True)
    return done.stdout.strip(), mark.exists()


@pytest.mark.parametrize("as_module", [False, True], ids=["file", "module"])
def test_importable_function_leaves_the_main_script_out(tmp_path: Path, as_module: bool) -> None:
    assert _run(tmp_path, "math", as_module) == ("[4.0]", False)


@pytest.mark.parametrize("as_module", [False, True], ids=["file", "module"])
def test_function_of_the_main_script_still_runs(tmp_path: Path, as_module: bool) -> None:
    assert _run(tmp_path, "own", as_module) == ("[8.0]", True)
