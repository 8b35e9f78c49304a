"""Page images on a realdocs-style folder: render and encode cost, bytes per page, and a whole
`local` build with and without `--page-images`.

    python scripts/bench_images.py ../shared/realdocs [--rounds 3] [--no-build]

Rendering: CPU milliseconds per page of `images.page_images` (render, mask, encode) at the
default settings, and the encoded bytes per page, per format. Build: CPU seconds of the whole
command and its children, pages per CPU-second, and the images' share; medians of
interleaved rounds, each in a fresh output folder.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pypdfium2 as pdfium

from loralay_build.config import ImageSettings
from loralay_build.images import page_images

sys.path.insert(0, str(Path(__file__).parent))
from realdocs_to_local import convert


def render_cost(pdfs: list[Path], settings: ImageSettings) -> tuple[float, float, int]:
    """(CPU ms per page, bytes per page, pages) for every page of the PDFs."""
    pages = size = 0
    start = time.process_time()
    for path in pdfs:
        pdf = pdfium.PdfDocument(str(path))
        count = len(pdf)
        pdf.close()
        for image in page_images(str(path), list(range(count)), {}, settings):
            pages += 1
            size += len(image.data)
    return 1000 * (time.process_time() - start) / pages, size / pages, pages


def build_cpu(manifest: Path, images: bool) -> tuple[float, int]:
    """CPU seconds of one `local` build (children included) and the pages it published."""
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        command = [sys.executable, "-m", "loralay_build.cli", "local", "--input", str(manifest),
                   "--out", out, "--workers", "2", "--no-filter", "--allow-outside", "-q"]
        subprocess.run(command + (["--page-images"] if images else []), check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        build = json.loads((Path(out) / "local" / "build.json").read_text())
        pages = sum(f["rows"] for f in build.get("pages", {}).get("files", []))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    pdfs = sorted((args.folder / "pdf").glob("*.pdf"))
    for fmt in ("webp", "png", "jpeg"):
        settings = replace(ImageSettings(enabled=True), format=fmt)
        runs = [render_cost(pdfs, settings) for _ in range(args.rounds)]
        ms = statistics.median(r[0] for r in runs)
        print(f"{fmt}: {ms:.1f} ms/page, {runs[0][1] / 1024:.1f} KiB/page "
              f"({runs[0][2]} pages, {settings.dpi} dpi)")
    if args.no_build:
        return
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "local.jsonl"
        convert(args.folder.resolve(), manifest)
        plain, with_images, published = [], [], 0
        for _ in range(args.rounds):  # interleaved
            plain.append(build_cpu(manifest, False)[0])
            cpu, published = build_cpu(manifest, True)
            with_images.append(cpu)
    base, images = statistics.median(plain), statistics.median(with_images)
    print(f"build CPU s: {base:.1f} without images, {images:.1f} with "
          f"({published} page images); throughput ratio {base / images:.2f}")


if __name__ == "__main__":
    main()
