"""Installing from a clean source tree without a C compiler still gives a working package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_install_without_a_compiler_runs_the_python_loop(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LORALAY_NATIVE")}
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--no-deps", "--no-build-isolation", "-e",
         str(tree)], env={**env, "CC": "false"}, capture_output=True, text=True, check=False)
    assert install.returncode == 0, install.stdout + install.stderr
    assert not list((tree / "src").rglob("_native*.so"))
    version = subprocess.run([str(venv / "bin" / "build-corpus"), "--version"], env=env,
                             capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "PDF core: python" in version.stdout
    from tests.helpers.pdfgen import rotated_pdf

    pdf = tmp_path / "r.pdf"
    expected = rotated_pdf(pdf, 90)
    parsed = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import sys; from loralay_build.parse import parse_pdf, pdfium; "
         "assert pdfium._NATIVE is None; print(' '.join(parse_pdf(sys.argv[1]).words))",
         str(pdf)], env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert parsed.stdout.split() == expected
