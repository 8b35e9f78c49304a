#!/usr/bin/env python3
"""CPU of what every command pays before and beside its work: importing the command,
`build-corpus status`, and a one-document `local` build, in fresh processes.

    python scripts/bench_startup.py DIR [--rounds 7] [--against OTHER_SRC]

DIR is realdocs-style (`manifest.jsonl` + PDFs); its first article is the build's document.
Each measure is the user+sys CPU of one fresh process and of the children it waited for (the
fork server, and through it the workers; RUSAGE_CHILDREN), the build once run as the
`build-corpus` script does and once as `python -m loralay_build.cli`. Both source trees are
compiled to bytecode first, so neither pays for compiling (PYTHONDONTWRITEBYTECODE would
otherwise make every process compile every module). With `--against`, the package under
OTHER_SRC (another checkout's `src`) is measured in the same rounds, interleaved; medians
are printed.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_scale import make_documents, write_manifest

HERE_SRC = Path(__file__).resolve().parent.parent / "src"
SCRIPT = "import sys\nfrom loralay_build.cli import main\nsys.exit(main())\n"


def cpu_of(argv: list[str], src: Path) -> float:
    """CPU seconds of `argv` and the children it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env={**os.environ, "PYTHONPATH": str(src)}, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def one_round(src: Path, work: Path, manifest: Path) -> dict[str, float]:
    """Each measure once for the package under `src`."""
    script, out = work / "build-corpus.py", work / "out"
    build = ["local", "--input", str(manifest), "--no-filter", "-q", "--out", str(out)]
    measures = {"import the command": cpu_of(
        [sys.executable, "-c", "import loralay_build.cli"], src)}
    for label, argv in (("one-document build, build-corpus", [sys.executable, str(script)]),
                        ("one-document build, python -m", [sys.executable, "-m",
                                                           "loralay_build.cli"])):
        shutil.rmtree(out, ignore_errors=True)
        measures[label] = cpu_of([*argv, *build], src)
    measures["status"] = cpu_of([sys.executable, str(script), "status", str(out)], src)
    return measures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--against", type=Path, help="another checkout's src folder")
    args = parser.parse_args()
    if args.against and not (args.against / "loralay_build" / "cli.py").is_file():
        parser.error(f"{args.against} holds no loralay_build package")
    trees = {"this": HERE_SRC, **({"against": args.against.resolve()} if args.against else {})}
    for src in trees.values():
        compileall.compile_dir(src, quiet=1)
    results: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "build-corpus.py").write_text(SCRIPT)
        pdfs = work / "pdf"
        pdfs.mkdir()
        manifest = pdfs / "docs.jsonl"
        write_manifest(manifest, make_documents(args.folder, pdfs, 0, 1))
        for _ in range(args.rounds):
            for name, src in trees.items():
                for label, seconds in one_round(src, work, manifest).items():
                    results[name].setdefault(label, []).append(seconds)
    print(f"CPU seconds, medians of {args.rounds} interleaved rounds")
    print(f"{'measure':<36}" + "".join(f"{name:>10}" for name in trees))
    for label in results["this"]:
        print(f"{label:<36}" + "".join(f"{statistics.median(results[name][label]):10.3f}"
                                        for name in trees))


if __name__ == "__main__":
    main()
