"""`build-corpus report`: the paper-style tables (Markdown and JSON) and plots of every dataset
under a data folder, so a corpus can be described the way LoRaLay describes its own."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from loralay_build.blobs import atomic_path, atomic_write_bytes
from loralay_build.corpus.folder import datasets_under, read_build
from loralay_build.corpus.split import SPLITS
from loralay_build.corpus.stats import corpus_stats, split_values
from loralay_build.errors import LoralayError
from loralay_build.licences import redistributable

SPLIT_COLOURS = {"train": "#1f77b4", "validation": "#ff7f0e", "test": "#2ca02c"}


class MissingExtra(LoralayError):
    """An optional dependency the command needs is not installed."""


def _plotting() -> Any:
    """matplotlib.pyplot on the file-only Agg backend, or MissingExtra with the fix."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtra("the report's plots need matplotlib: "
                           "pip install 'loralay-build[report]'") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _whole(axis: Any) -> None:
    """Document counts: integer ticks only."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def read_rejects(folder: Path) -> dict[str, int]:
    """Documents dropped per reason, from the dataset's rejects.jsonl."""
    path = folder / "rejects.jsonl"
    if not path.is_file():
        return {}
    counts: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            counts[str(json.loads(line).get("reason") or "unknown")] += 1
    return dict(sorted(counts.items()))


def _trio(values: dict[str, float]) -> str:
    return f"{values['mean']:.0f} / {values['median']:.0f} / {values['p90']:.0f}"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Corpus report", "",
        "Lengths in whitespace-separated words, as mean / median / p90. Compression: mean "
        "article length over mean summary length. Language confidence: pycld2's, mean.", "",
        "| dataset | split | documents | pages per document | article words | summary words "
        "| compression | language confidence |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, info in report["datasets"].items():
        for split, s in info["splits"].items():
            lines.append(
                f"| {name} | {split} | {s['documents']} | {s['pages']['mean']:.1f} "
                f"| {_trio(s['article_words'])} | {_trio(s['summary_words'])} "
                f"| {s['compression']:.1f} | {s['lang_confidence_mean']:.3f} |"
            )
    lines += ["", "## Documents lost per cause", "", "| dataset | reason | documents |",
              "|---|---|---:|"]
    for name, info in report["datasets"].items():
        lines += [f"| {name} | {reason} | {n} |" for reason, n in info["rejects"].items()]
    lines += ["", "## Licences", "", "Documents (view rows) per licence and split; "
              "redistributable: a third party may redistribute the text, commercially too.", "",
              "| dataset | licence | train | validation | test | redistributable |",
              "|---|---|---:|---:|---:|---|"]
    for name, info in [*report["datasets"].items(), *report["views"].items()]:
        lines += [f"| {name} | {spdx} | "
                  + " | ".join(str(per.get(s, 0)) for s in SPLITS)
                  + f" | {'yes' if redistributable(spdx) else 'no'} |"
                  for spdx, per in info.get("licences", {}).items()]
    if report["views"]:
        lines += ["", "## Derived views", "", "| dataset | view | rows per split |",
                  "|---|---|---|"]
        lines += [f"| {name} | {info['view']} | "
                  + ", ".join(f"{k} {v}" for k, v in info["rows"].items()) + " |"
                  for name, info in report["views"].items()]
    lines += ["", "## Plots", ""]
    lines += [f"![{p}]({p})" for p in report["plots"]]
    return "\n".join(lines) + "\n"


def _save(fig: Any, path: Path) -> None:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=90, bbox_inches="tight")


def _lengths_plot(plt: Any, name: str, values: dict[str, dict[str, list[Any]]],
                  path: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, column, title in ((axes[0], "article_words", "article"),
                              (axes[1], "summary_words", "summary")):
        splits = [split for split, cols in values.items() if cols[column]]
        if splits:  # stacked over shared bins, so a split of one document still shows
            ax.hist([values[s][column] for s in splits], bins=20, stacked=True, label=splits,
                    color=[SPLIT_COLOURS[s] for s in splits])
        ax.set_title(f"{name}: {title} length")
        ax.set_xlabel("words")
        ax.set_ylabel("documents")
        _whole(ax.yaxis)
        ax.legend()
    _save(fig, path)
    plt.close(fig)


def _years_plot(plt: Any, name: str, values: dict[str, dict[str, list[Any]]],
                path: Path) -> None:
    counts = {split: Counter(y for y in cols["year"] if y is not None)
              for split, cols in values.items()}
    years = sorted({y for c in counts.values() for y in c})
    fig, ax = plt.subplots(figsize=(8, 3.5))
    bottom = [0] * len(years)
    for split in SPLITS:
        if split not in counts:
            continue
        heights = [counts[split].get(y, 0) for y in years]
        ax.bar([str(y) for y in years], heights, bottom=bottom, label=split,
               color=SPLIT_COLOURS[split])
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_title(f"{name}: documents per year of publication")
    ax.set_ylabel("documents")
    _whole(ax.yaxis)
    ax.tick_params(axis="x", labelrotation=90)
    ax.legend()
    _save(fig, path)
    plt.close(fig)


def _rejects_plot(plt: Any, rejects: dict[str, dict[str, int]], path: Path) -> None:
    reasons = sorted({r for per in rejects.values() for r in per})
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.4 * max(1, len(reasons)) * max(1, len(rejects))))
    height = 0.8 / max(1, len(rejects))
    for k, (name, per) in enumerate(rejects.items()):
        ax.barh([i + k * height for i in range(len(reasons))],
                [per.get(r, 0) for r in reasons], height=height, label=name)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(reasons))], reasons)
    ax.set_xlabel("documents lost")
    _whole(ax.xaxis)
    ax.set_title("documents lost per cause")
    if rejects:
        ax.legend()
    _save(fig, path)
    plt.close(fig)


def write_report(data_dir: Path, out: Path) -> dict[str, Any]:
    """Tables and plots for every dataset under `data_dir`, written into `out`.

    Raises MissingExtra before writing anything when matplotlib is absent, and ValueError
    when `data_dir` holds no dataset.
    """
    plt = _plotting()
    folders = datasets_under(data_dir)
    if not folders:
        raise ValueError(f"no dataset under {data_dir}")
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"datasets": {}, "views": {}, "plots": []}
    rejects: dict[str, dict[str, int]] = {}
    for folder in folders:
        # A derived view (`sumpubmed`, `citations`) has its own columns, not article words
        # and boxes: its rows are counted only.
        build = read_build(folder)
        if build.get("view"):
            report["views"][folder.name] = {"view": str(build["view"]),
                                            "rows": build["counts"]["splits"],
                                            "licences": build.get("licences", {})}
            continue
        values = split_values(folder)
        stats = corpus_stats(folder, values)
        rejects[folder.name] = read_rejects(folder)
        report["datasets"][folder.name] = {"splits": stats["splits"],
                                           "rejects": rejects[folder.name],
                                           "licences": stats.get("licences", {})}
        for kind, draw in (("lengths", _lengths_plot), ("years", _years_plot)):
            name = f"{folder.name}-{kind}.png"
            draw(plt, folder.name, values, out / name)
            report["plots"].append(name)
    _rejects_plot(plt, rejects, out / "rejects.png")
    report["plots"].append("rejects.png")
    atomic_write_bytes(out / "report.json",
                       (json.dumps(report, indent=2, sort_keys=True) + "\n").encode())
    atomic_write_bytes(out / "report.md", markdown(report).encode())
    return report
