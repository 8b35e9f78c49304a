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
from loralay_build.errors import LoralayError, Reason
from loralay_build.layout import OutputLayout
from loralay_build.licences import redistributable
from loralay_build.parse.ocr import ocr_hint, pages_waiting, textless_hint
from loralay_build.state import State
from loralay_build.structure.roles import ROLE_NAMES

SPLIT_COLOURS = {"train": "#1f77b4", "validation": "#ff7f0e", "test": "#2ca02c"}
UNDATED = "undated"  # the years plot's bar of documents without a publication date
YEAR_LABELS = 40  # most year labels one axis shows before it labels every few years


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


def build_command(folder: Path) -> str | None:
    """The arguments of the dataset's last build, as its state recorded them (None without
    a state beside it): the command a hint tells to run again."""
    layout = OutputLayout.of_dataset(folder)
    if not layout.has_state():
        return None
    state = State(layout.root)
    try:
        run = state.last_run(folder.name)
    finally:
        state.close()
    return str(run["command"]) if run and run.get("command") else None


def read_rejects(folder: Path) -> tuple[dict[str, int], int]:
    """Documents dropped per reason, from the dataset's rejects.jsonl, and the pages of those
    waiting for OCR."""
    path = folder / "rejects.jsonl"
    if not path.is_file():
        return {}, 0
    counts: Counter[str] = Counter()
    waiting = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            counts[str(record.get("reason") or "unknown")] += 1
            if record.get("reason") == Reason.NEEDS_OCR:
                waiting += pages_waiting(str(record.get("detail") or ""))
    return dict(sorted(counts.items())), waiting


def _trio(values: dict[str, float]) -> str:
    return f"{values['mean']:.0f} / {values['median']:.0f} / {values['p90']:.0f}"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Corpus report", "",
        "Lengths in whitespace-separated words, as mean / median / p90. Compression: mean "
        "article length over mean summary length. Language confidence: pycld2's, mean.", "",
        "| dataset | split | documents | pages per document | article words | summary words "
        "| compression | language confidence | pages read by OCR (documents) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, info in report["datasets"].items():
        for split, s in info["splits"].items():
            lines.append(
                f"| {name} | {split} | {s['documents']} | {s['pages']['mean']:.1f} "
                f"| {_trio(s['article_words'])} | {_trio(s['summary_words'])} "
                f"| {s['compression']:.1f} | {s['lang_confidence_mean']:.3f} "
                f"| {s['ocr']['pages']} ({s['ocr']['documents']}) |"
            )
    textless = [(name, split, s["without_text"]) for name, info in report["datasets"].items()
                for split, s in info["splits"].items()
                if s.get("without_text", {}).get("documents")]
    if textless:
        lines += ["", "## Pages published without text", "",
                  "Pages that need OCR, in documents published from their other pages "
                  "(`page_text_origin` = `none`).", ""]
        lines += [f"- {name} {split}: {textless_hint(n['documents'], n['pages'])}"
                  for name, split, n in textless]
    roles = list(ROLE_NAMES.values())
    lines += ["", "## Structure", "", "Titled sections per document (mean / median / p90) "
              "and the share of words in each role (`word_roles`).", "",
              "| dataset | split | sections | " + " | ".join(roles) + " |",
              "|---|---|---:|" + "---:|" * len(roles)]
    for name, info in report["datasets"].items():
        for split, s in info["splits"].items():
            shares = " | ".join(f"{s['role_share'][role]:.1%}" for role in roles)
            lines.append(f"| {name} | {split} | {_trio(s['sections'])} | {shares} |")
    lines += ["", "## Documents lost per cause", "", "| dataset | reason | documents |",
              "|---|---|---:|"]
    for name, info in report["datasets"].items():
        lines += [f"| {name} | {reason} | {n} |" for reason, n in info["rejects"].items()]
    waiting = {name: info for name, info in report["datasets"].items()
               if info["rejects"].get(Reason.NEEDS_OCR)}
    if waiting:
        lines += ["", "## Documents waiting for OCR", ""]
        lines += [f"- {name}: " + ocr_hint(info["rejects"][Reason.NEEDS_OCR],
                                            info["ocr_waiting"], info.get("build_command"))
                  for name, info in waiting.items()]
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


def _split_legend(fig: Any, splits: list[str]) -> None:
    """One legend for the figure, below the axes: inside them it covers bars."""
    from matplotlib.patches import Patch

    if splits:
        fig.legend([Patch(color=SPLIT_COLOURS[s]) for s in splits], splits,
                   loc="outside lower center", ncols=len(splits), frameon=False)


def _nothing(ax: Any, what: str = "no documents") -> None:
    """An empty panel says so, without axes that would measure nothing."""
    ax.set_axis_off()
    ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes)


def lengths_figure(plt: Any, name: str, values: dict[str, dict[str, list[Any]]]) -> Any:
    """Article and summary length histograms, stacked by split."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    shown: set[str] = set()
    for ax, column, title in ((axes[0], "article_words", "article"),
                              (axes[1], "summary_words", "summary")):
        splits = [split for split in SPLITS if values.get(split, {}).get(column)]
        if splits:  # stacked over shared bins, so a split of one document still shows
            ax.hist([values[s][column] for s in splits], bins=20, stacked=True,
                    color=[SPLIT_COLOURS[s] for s in splits])
            shown.update(splits)
        else:
            _nothing(ax)
        ax.set_title(f"{name}: {title} length")
        ax.set_xlabel("words")
        ax.set_ylabel("documents")
        _whole(ax.yaxis)
    _split_legend(fig, [s for s in SPLITS if s in shown])
    return fig


def years_figure(plt: Any, name: str, values: dict[str, dict[str, list[Any]]]) -> Any:
    """Documents per year of publication, stacked by split; every year from the first to the
    last has its place, so a gap in the corpus shows as a gap. Documents without a date get
    a bar of their own, `undated`, after the years: they exist, only their year is unknown."""
    counts: dict[str, Counter[int | None]] = {split: Counter(cols["year"])
                                              for split, cols in values.items()}
    known = [y for c in counts.values() for y in c if y is not None]
    years: list[int | None] = list(range(min(known), max(known) + 1)) if known else []
    if any(c.get(None) for c in counts.values()):
        years.append(None)
    labels = [UNDATED if y is None else str(y) for y in years]
    fig, ax = plt.subplots(figsize=(8, 3.8), layout="constrained")
    bottom = [0] * len(years)
    shown = []
    for split in SPLITS:
        if not counts.get(split):
            continue
        heights = [counts[split].get(y, 0) for y in years]
        ax.bar(labels, heights, bottom=bottom, color=SPLIT_COLOURS[split])
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        shown.append(split)
    if not years:
        _nothing(ax)
    if len(years) > YEAR_LABELS:  # a long range: label every few years, keep every bar
        step = -(-len(years) // YEAR_LABELS)
        ticks = list(range(0, len(years), step))
        if years[-1] is None and ticks[-1] != len(years) - 1:
            ticks.append(len(years) - 1)  # the undated bar is always named
        ax.set_xticks(ticks, [labels[i] for i in ticks])
    ax.set_title(f"{name}: documents per year of publication")
    ax.set_ylabel("documents")
    _whole(ax.yaxis)
    ax.tick_params(axis="x", labelrotation=90)
    _split_legend(fig, shown)
    return fig


def rejects_figure(plt: Any, rejects: dict[str, dict[str, int]]) -> Any:
    """One bar per cause, at its label, made of one segment per dataset that lost documents
    to it (a bar per dataset and cause makes a picture taller than a screen, with most
    bars empty)."""
    reasons = sorted({r for per in rejects.values() for r, n in per.items() if n})
    losing = [name for name, per in rejects.items() if any(per.values())]
    fig, ax = plt.subplots(figsize=(8, 1.6 + 0.35 * max(1, len(reasons))
                                    + 0.25 * ((len(losing) + 2) // 3)), layout="constrained")
    colours = plt.get_cmap("tab10" if len(losing) <= 10 else "tab20").colors
    left = [0] * len(reasons)
    for k, name in enumerate(losing):
        widths = [rejects[name].get(r, 0) for r in reasons]
        ax.barh(range(len(reasons)), widths, left=left, height=0.7,
                color=colours[k % len(colours)], label=name)
        left = [a + w for a, w in zip(left, widths, strict=True)]
    ax.set_yticks(range(len(reasons)), reasons)
    ax.invert_yaxis()  # causes read top-down in alphabetical order
    ax.set_xlabel("documents lost")
    _whole(ax.xaxis)
    ax.set_title("documents lost per cause")
    if losing:
        fig.legend(loc="outside lower center", ncols=min(3, len(losing)), frameon=False)
    else:
        _nothing(ax, "no document lost")
    return fig


def _write(plt: Any, fig: Any, path: Path) -> None:
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
        rejects[folder.name], waiting = read_rejects(folder)
        report["datasets"][folder.name] = {"splits": stats["splits"],
                                           "rejects": rejects[folder.name],
                                           "ocr_waiting": waiting,
                                           "build_command": build_command(folder),
                                           "licences": stats.get("licences", {})}
        for kind, draw in (("lengths", lengths_figure), ("years", years_figure)):
            name = f"{folder.name}-{kind}.png"
            _write(plt, draw(plt, folder.name, values), out / name)
            report["plots"].append(name)
    _write(plt, rejects_figure(plt, rejects), out / "rejects.png")
    report["plots"].append("rejects.png")
    atomic_write_bytes(out / "report.json",
                       (json.dumps(report, indent=2, sort_keys=True) + "\n").encode())
    atomic_write_bytes(out / "report.md", markdown(report).encode())
    return report
