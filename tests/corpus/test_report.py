"""`build-corpus report` and `stats --json`: the numbers equal what pyarrow computes from the
shards, and the plots are real images."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
import pyarrow.parquet as pq
import pytest
from PIL import Image

from loralay_build.corpus.report import (
    _plotting,
    _write,
    lengths_figure,
    rejects_figure,
    years_figure,
)
from loralay_build.structure.roles import ROLE_NAMES
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess
from tests.helpers.local import make_corpus, write_manifest


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report")
    docs = root / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 6)
    entries.append({"id": "noabs", "pdf": "doc1.pdf", "language": "fr", "abstracts": {}})
    entries.append({"id": "gone", "pdf": "nowhere.pdf", "language": "fr",
                    "abstracts": {"fr": "x"}})
    for name, part in (("alpha", entries[:4] + entries[6:]), ("beta", entries[4:6])):
        manifest = write_manifest(docs / f"{name}.jsonl", part)
        result = run_cli_in_process("local", "--input", str(manifest), "--out", str(root / "data"),
                                    "--name", name, "--executor", "serial", "--no-filter")
        assert result.returncode == 0, result.stderr
    return root / "data"


def expected_split(table: pa.Table) -> dict[str, object]:
    """The report's figures for one split, computed by pyarrow alone (zeros when empty)."""
    if table.num_rows == 0:
        zero = {"mean": 0.0, "median": 0.0, "p90": 0.0}
        return {"documents": 0, "article_words": zero, "summary_words": zero, "pages": zero,
                "compression": 0.0, "lang_confidence_mean": 0.0,
                "ocr": {"documents": 0, "pages": 0},
                "without_text": {"documents": 0, "pages": 0}}
    article = pc.list_value_length(table["article_words"])
    summary = pc.list_value_length(
        pc.utf8_split_whitespace(pc.utf8_trim_whitespace(table["abstract"])))
    pages = pc.list_value_length(table["page_sizes"])

    def trio(values: pa.Array) -> dict[str, float]:
        return {"mean": pc.mean(values).as_py(),
                "median": pc.quantile(values, q=0.5)[0].as_py(),
                "p90": pc.quantile(values, q=0.9)[0].as_py()}

    art, summ = trio(article), trio(summary)
    return {
        "documents": table.num_rows,
        "article_words": art,
        "summary_words": summ,
        "pages": trio(pages),
        "compression": art["mean"] / summ["mean"],
        "lang_confidence_mean": pc.mean(table["lang_confidence"]).as_py(),
        "ocr": {"documents": 0, "pages": pc.sum(pc.equal(
            pc.list_flatten(table["page_text_origin"]), "ocr")).as_py()},
        "without_text": {"documents": 0, "pages": pc.sum(pc.equal(
            pc.list_flatten(table["page_text_origin"]), "none")).as_py()},
        "sections": trio(pa.array([sum(s["title"] is not None for s in sections)
                                   for sections in table["sections"].to_pylist()])),
        "role_share": role_shares(table),
    }


def role_shares(table: pa.Table) -> dict[str, float]:
    """Share of the split's words in each role, from the flattened `word_roles`."""
    codes = pc.list_flatten(table["word_roles"])
    counts = {c["values"]: c["counts"] for c in pc.value_counts(codes).to_pylist()}
    return {name: counts.get(code, 0) / len(codes) for code, name in ROLE_NAMES.items()}


def flat(figures: dict[str, object]) -> dict[str, object]:
    """Nested figures as one level: {"article_words.mean": ...}."""
    out: dict[str, object] = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def test_report_tables_match_the_shards(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = run_cli_in_process("report", str(data), "--out", str(out))
    assert result.returncode == 0, result.stderr
    report = json.loads((out / "report.json").read_text())
    assert sorted(report["datasets"]) == ["alpha", "beta"]
    markdown = (out / "report.md").read_text()
    for name, info in report["datasets"].items():
        shards = sorted((data / name).glob("*.parquet"))
        splits = {p.name.split("-")[0] for p in shards}
        assert set(info["splits"]) == splits
        for split in splits:
            table = pa.concat_tables(
                pq.read_table(p) for p in shards if p.name.startswith(f"{split}-"))
            assert flat(info["splits"][split]) == pytest.approx(flat(expected_split(table)))
            assert f"| {name} | {split} | {table.num_rows} |" in markdown
            sections = info["splits"][split]["sections"]
            body = info["splits"][split]["role_share"]["body"]
            assert (f"| {name} | {split} | {sections['mean']:.0f} / {sections['median']:.0f} / "
                    f"{sections['p90']:.0f} | {body:.1%} |") in markdown
        lines = data / name / "rejects.jsonl"
        counts = (pj.read_json(lines).group_by("reason").aggregate([("id", "count")]).to_pylist()
                  if lines.stat().st_size else [])
        assert info["rejects"] == {c["reason"]: c["id_count"] for c in counts}
    assert report["datasets"]["alpha"]["rejects"] == {
        "abstract_missing_in_metadata": 1, "unavailable": 1}


def test_report_plots_are_real_images(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert run_cli_in_process("report", str(data), "--out", str(out)).returncode == 0
    names = json.loads((out / "report.json").read_text())["plots"]
    assert sorted(names) == ["alpha-lengths.png", "alpha-years.png", "beta-lengths.png",
                             "beta-years.png", "rejects.png"]
    for name in names:
        image = Image.open(out / name).convert("RGB")
        assert image.width > 300 and image.height > 150
        colours = image.getcolors(maxcolors=1 << 20) or []
        assert len(colours) > 20, f"{name} looks blank"
        # Something is plotted: a good share of pixels is neither white nor near-white.
        inked = sum(n for n, rgb in colours if isinstance(rgb, tuple) and sum(rgb) < 600)
        assert inked > 0.01 * image.width * image.height, name


def test_report_without_matplotlib_says_how_to_get_it(data: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('blocked for the test')\n")
    import os

    path = os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")])
    out = tmp_path / "report"
    result = run_cli_subprocess("report", str(data), "--out", str(out), env={"PYTHONPATH": path})
    assert result.returncode == 1
    assert "loralay-build[report]" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_report_on_a_folder_without_datasets_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli_in_process("report", str(tmp_path), "--out", str(tmp_path / "r"))
    assert result.returncode == 2 and "no dataset" in result.stderr


def test_stats_json_matches_the_report(data: Path, tmp_path: Path) -> None:
    result = run_cli_in_process("stats", str(data / "alpha"), "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    out = tmp_path / "report"
    assert run_cli_in_process("report", str(data), "--out", str(out)).returncode == 0
    report = json.loads((out / "report.json").read_text())
    assert stats["splits"] == report["datasets"]["alpha"]["splits"]
    text = run_cli_in_process("stats", str(data / "alpha"))
    assert text.returncode == 0 and "article words" in text.stdout


@pytest.mark.parametrize("command", ["stats", "verify"])
def test_stats_and_verify_refuse_a_folder_that_is_not_a_dataset(data: Path,
                                                               command: str) -> None:
    for path in (data, data / ".loralay" / "state.sqlite"):
        result = run_cli_in_process(command, str(path))
        assert result.returncode == 2, (path, result.stdout, result.stderr)
        assert "not a dataset" in result.stderr and "Traceback" not in result.stderr


def test_derived_views_are_counted_not_measured(data: Path, tmp_path: Path) -> None:
    """A view dataset (e.g. pubmed-citations) has no article words: the report lists its rows
    per split instead of failing on it."""
    import shutil

    from loralay_build.config import OutputSettings
    from loralay_build.corpus.publish import ShardFile
    from loralay_build.corpus.writer import dict_rows_table, write_shard

    root = tmp_path / "data"
    shutil.copytree(data, root)
    view = root / "alpha-citations"
    view.mkdir()
    schema = pa.schema([pa.field("citation_id", pa.string())])
    shard = view / "train-g-00000-of-00001.parquet"
    rows = dict_rows_table([{"citation_id": "a#1"}, {"citation_id": "a#2"}], schema)
    write_shard(shard, schema, [[rows]], OutputSettings(), {})
    files = [ShardFile(shard.name, "train", 2, shard.stat().st_size, "")]
    (view / "build.json").write_text(json.dumps({
        "view": "citations", "counts": {"splits": {"train": 2, "validation": 0, "test": 0}},
        "files": [f.__dict__ for f in files]}))
    result = run_cli_in_process("report", str(root), "--out", str(tmp_path / "report"))
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["views"] == {"alpha-citations": {
        "view": "citations", "rows": {"train": 2, "validation": 0, "test": 0}, "licences": {}}}
    assert set(report["datasets"]) == {"alpha", "beta"}
    assert "| alpha-citations | citations |" in (tmp_path / "report" / "report.md").read_text()


def _bars(ax: Any) -> list[Any]:
    return [p for p in ax.patches if p.get_width() > 0 and p.get_height() > 0]


def test_each_rejects_bar_sits_at_its_label() -> None:
    """Ten datasets, causes shared by a few: every bar's centre is its cause's tick."""
    plt = _plotting()
    rejects = {f"set{k}": {"unavailable": k + 1, "blocked": k % 3,
                           "duplicate": 2 if k == 4 else 0} for k in range(10)}
    fig = rejects_figure(plt, rejects)
    (ax,) = fig.axes
    ticks = {label.get_text(): position
             for label, position in zip(ax.get_yticklabels(), ax.get_yticks(), strict=True)}
    assert sorted(ticks) == ["blocked", "duplicate", "unavailable"]
    centres: dict[float, float] = {}
    for bar in _bars(ax):
        centre = bar.get_y() + bar.get_height() / 2
        centres[centre] = centres.get(centre, 0) + bar.get_width()
    # the bars at each label add up to that cause's losses, and no bar is anywhere else
    assert centres == pytest.approx({ticks[r]: sum(per.get(r, 0) for per in rejects.values())
                                     for r in ticks})
    fig.canvas.draw()
    assert fig.get_size_inches()[1] * fig.dpi < 800  # not a picture taller than a screen
    plt.close(fig)


def test_the_years_axis_keeps_the_empty_years() -> None:
    plt = _plotting()
    values: dict[str, dict[str, list[Any]]] = {"train": {"year": [2003, 2003, 2009, None]},
                                               "test": {"year": [2011]}}
    fig = years_figure(plt, "gappy", values)
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [*(str(y) for y in range(2003, 2012)), "undated"]
    heights: dict[float, float] = {}
    for bar in ax.patches:
        x = bar.get_x() + bar.get_width() / 2
        heights[x] = heights.get(x, 0) + bar.get_height()
    assert [heights.get(float(i), 0) for i in range(10)] == [2, 0, 0, 0, 0, 0, 1, 0, 1, 1]
    plt.close(fig)


def test_the_legends_cover_no_bar() -> None:
    """Bars fill the whole width of both histograms: a legend inside an axes would hide
    some; it goes below them."""
    plt = _plotting()
    spread = list(range(100, 2100, 10))
    values = {"train": {"article_words": spread, "summary_words": spread,
                        "year": [2000 + k % 20 for k in range(len(spread))]},
              "test": {"article_words": spread[::4], "summary_words": spread[::4],
                       "year": [2019] * 50}}
    for fig in (lengths_figure(plt, "full", values), years_figure(plt, "full", values)):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
        assert len(legends) == 1
        box = legends[0].get_window_extent(renderer)
        assert [t.get_text() for t in legends[0].get_texts()] == ["train", "test"]
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer))
            assert not any(box.overlaps(bar.get_window_extent(renderer)) for bar in ax.patches)
        plt.close(fig)


def test_an_empty_dataset_draws_without_warnings(tmp_path: Path) -> None:
    """What `report` draws for a dataset with no row and no reject, warnings as errors."""
    plt = _plotting()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _write(plt, lengths_figure(plt, "empty", {}), tmp_path / "lengths.png")
        _write(plt, years_figure(plt, "empty", {}), tmp_path / "years.png")
        _write(plt, rejects_figure(plt, {"empty": {}}), tmp_path / "rejects.png")
    for name in ("lengths.png", "years.png", "rejects.png"):
        assert Image.open(tmp_path / name).width > 300
