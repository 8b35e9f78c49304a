"""A source's knowledge stays in its package: outside it and its sandbox fake, only the two
registries name it (`scripts/source_spread.py` counts, and fails above two files)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "source_spread.py"


def test_every_source_is_named_by_at_most_its_two_registries() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "-v"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    counts = dict(line.split() for line in done.stdout.splitlines()[1:] if "  " in line
                  and not line.startswith(" "))
    assert {"arxiv", "hal", "pubmed", "local"} <= counts.keys()
