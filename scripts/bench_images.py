"""Page images on a realdocs-style folder: the cost of each stage, bytes per page, and a whole
`local` build with and without `--page-images`.

    python scripts/bench_images.py ../shared/realdocs [--rounds 3] [--no-build] [--no-options]
        [--set color=gray --set gray_levels=4 ...]

Stages, per page, at the settings given (`--set` overrides `[images]` keys; the defaults
otherwise): CPU milliseconds of rendering, of preparing (the colour check, gray levels), of
masking and of encoding, KiB per page and the share of pages stored in colour. Options: the
same for a few other settings (the former default, lossy gray pages, PNG, JPEG...). Build:
CPU seconds of the whole command and its workers without and with images, medians of
interleaved rounds in fresh output folders, the throughput ratio (CPU without / with), the
extra milliseconds per published page, and the peak RSS of the largest worker with images.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium

from loralay_build.config import ImageSettings
from loralay_build.images import Canvas, encode, mask, prepare, render

sys.path.insert(0, str(Path(__file__).parent))
from bench_memory import measure
from loralay_build.sandbox.realdocs import realdocs_manifest as convert

STAGES = ("render", "prepare", "mask", "encode")
# Other settings worth knowing the price of, as [images] overrides of the defaults.
OPTIONS: dict[str, dict[str, Any]] = {
    "first default (rgb, lossy webp q50, method 4)": {"color": "rgb", "gray_levels": 0,
                                                      "quality": 50, "method": 4},
    "previous default (colour pages webp q50, method 2)": {"quality": 50, "method": 2},
    "auto, gray pages lossy": {"gray_levels": 0},
    "auto, gray pages as lossless webp": {"gray_format": "webp"},
    "auto, colour pages at method 4": {"method": 4},
    "auto, 4 gray levels": {"gray_levels": 4},
    "auto, 256 gray levels (lossless gray)": {"gray_levels": 256},
    "gray, 16 levels": {"color": "gray"},
    "gray, 4 levels": {"color": "gray", "gray_levels": 4},
    "png, auto, 16 levels": {"format": "png"},
    "jpeg, auto": {"format": "jpeg"},
}


def stage_costs(pdfs: list[Path], settings: ImageSettings) -> dict[str, float]:
    """CPU ms per page of each stage of `images.page_images` (the first 40 words of each
    page masked, as an abstract would be), KiB per page and the share of colour pages."""
    spent = dict.fromkeys(STAGES, 0.0)
    pages = size = colour = 0
    scale = settings.dpi / 72
    for path in pdfs:
        pdf = pdfium.PdfDocument(str(path))
        canvas = Canvas()
        try:
            for index in range(len(pdf)):
                start = time.process_time()
                pixels = render(pdf, index, settings.dpi, settings.max_pixels,
                                settings.color == "gray", canvas)
                rendered = time.process_time()
                image = prepare(pixels, settings, canvas)
                prepared = time.process_time()
                mask(image, [(72.0, 72.0, 300.0, 84.0)] if index == 0 else [], scale)
                masked = time.process_time()
                size += len(encode(image, settings))
                done = time.process_time()
                for stage, (a, b) in zip(STAGES, [(start, rendered), (rendered, prepared),
                                                  (prepared, masked), (masked, done)],
                                         strict=True):
                    spent[stage] += b - a
                pages += 1
                colour += image.mode == "RGBX"
        finally:
            pdf.close()
    out = {stage: 1000 * spent[stage] / pages for stage in STAGES}
    return {**out, "total": sum(out.values()), "kib": size / pages / 1024,
            "colour": colour / pages, "pages": pages}


def median_costs(pdfs: list[Path], settings: ImageSettings, rounds: int) -> dict[str, float]:
    runs = [stage_costs(pdfs, settings) for _ in range(rounds)]
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def describe(costs: dict[str, float]) -> str:
    stages = ", ".join(f"{s} {costs[s]:.1f}" for s in STAGES)
    return (f"{costs['total']:.1f} ms/page ({stages}), {costs['kib']:.1f} KiB/page, "
            f"{100 * costs['colour']:.0f}% colour pages")


def build(manifest: Path, config: Path | None) -> tuple[float, int, float]:
    """CPU seconds of one `local` build (workers included), the page images it published
    (0 without images) and the largest worker's peak RSS in MiB."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "loralay_build.cli", "local", "--input", str(manifest),
                   "--out", out, "--workers", "2", "--no-filter", "--allow-outside", "-q"]
        if config is not None:
            command += ["--page-images", "--config", str(config)]
        result = measure(command)
        if result.returncode:
            raise SystemExit(result.stderr)
        record = json.loads((Path(out) / "local" / "build.json").read_text())
        pages = sum(f["rows"] for f in record.get("pages", {}).get("files", []))
    return result.cpu, pages, result.child_mib


def toml_value(text: str) -> str:
    """A `--set` value as TOML: numbers and booleans as they are, anything else quoted."""
    if text in ("true", "false") or text.replace(".", "", 1).isdigit():
        return text
    return json.dumps(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an [images] setting for the stages and the build")
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--no-options", action="store_true")
    args = parser.parse_args()
    pdfs = sorted((args.folder / "pdf").glob("*.pdf"))
    overrides = dict(item.split("=", 1) for item in args.set)
    settings = ImageSettings(enabled=True, **{k: json.loads(toml_value(v))
                                              for k, v in overrides.items()})
    costs = median_costs(pdfs, settings, args.rounds)
    print(f"stages at {overrides or 'the defaults'} ({costs['pages']:.0f} pages, "
          f"{settings.dpi} dpi): {describe(costs)}")
    if not args.no_options:
        for name, option in OPTIONS.items():
            print(f"  {name}: {describe(median_costs(pdfs, replace(settings, **option), 1))}")
    if args.no_build:
        return
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "local.jsonl"
        convert(args.folder.resolve(), manifest)
        config = Path(tmp) / "images.toml"
        config.write_text("[images]\n" + "".join(f"{k} = {toml_value(v)}\n"
                                                 for k, v in overrides.items()))
        plain, with_images, rss, published = [], [], [], 0
        for _ in range(args.rounds):  # interleaved
            plain.append(build(manifest, None)[0])
            cpu, published, peak = build(manifest, config)
            with_images.append(cpu)
            rss.append(peak)
    base, images = statistics.median(plain), statistics.median(with_images)
    print(f"build CPU s: {base:.2f} without images, {images:.2f} with ({published} page "
          f"images, {1000 * (images - base) / published:.1f} ms more per page); throughput "
          f"ratio {base / images:.2f}; largest worker peak RSS with images {max(rss):.0f} MiB")


if __name__ == "__main__":
    main()
