"""`build-corpus`: one subcommand per source, plus local, demo, status and stats."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import click

from loralay_build.cli_options import click_option
from loralay_build.config import DedupSettings, OutputSettings, merge
from loralay_build.corpus.folder import read_build, view_status
from loralay_build.errors import ConfigError, LockHeld
from loralay_build.layout import OutputLayout
from loralay_build.native import core_name
from loralay_build.parse.ocr import ocr_hint
from loralay_build.progress import BarSafeHandler, hide_progress
from loralay_build.run import lifecycle
from loralay_build.run.lifecycle import BuildResult
from loralay_build.run.multi import DatasetJob, build_all
from loralay_build.run.pipeline import EXIT_FAILURE, EXIT_LOCKED, EXIT_USAGE
from loralay_build.sources import SOURCES, load_settings
from loralay_build.sources.command import SourceCommand, with_views
from loralay_build.state import FILTERED, RunLock, State
from loralay_build.textfile import escaped, read_text
from loralay_build.writable import check_folder_can_be_made, check_writable_folder

log = logging.getLogger("loralay_build")


def _setup_logging(verbose: int, quiet: bool) -> None:
    """Warnings only by default (progress bars show the rest on a terminal); -v for a log."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    if quiet:
        level = logging.ERROR
        hide_progress()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        handlers=[BarSafeHandler(sys.stderr)])


def _to_stderr(line: str) -> None:
    """Where a build's lines for the user go (run.lifecycle.Notify)."""
    click.echo(line, err=True)


def build(
    source: str,
    out: Path,
    name: str | None,
    config: Path | None,
    overrides: dict[str, Any],
    since: str | None = None,
    limit: int | None = None,
    allow_empty: bool = False,
) -> int:
    """Run one build (see run.lifecycle), its lines on stderr; returns its exit code."""
    return lifecycle.run_build(source, OutputLayout(out), name, config, overrides, since, limit,
                               allow_empty, notify=_to_stderr).code


URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def _local_path(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """Output goes to a local (or mounted) path: a URL such as s3://bucket/x is refused, not
    turned into a folder named `s3:`."""
    if value is None:
        return None
    if URL.match(value):
        raise click.BadParameter(f"{value!r} is a URL; give a local or mounted folder and "
                                 "copy the result to remote storage afterwards")
    return Path(value)


# The corpus filters, shared by every building command and `demo`.
FILTER_OPTIONS = (
    click.option("--no-filter", is_flag=True, help="Keep documents the percentile "
                 "filters would drop."),
    click.option("--licences", help="Keep only these licences: SPDX ids (any case), "
                 "wildcards or the group 'redistributable' (CC-BY-4.0,CC0-1.0 or CC-BY-*)."),
    click.option("--exclude-ids", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="File of ids or DOIs (one per line) kept out of every split: a "
                 "published test set."),
)


def common_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options every building subcommand accepts."""
    options = [
        click.option("--out", type=click.Path(), callback=_local_path, default="data",
                     show_default=True, help="Output root; the dataset goes in OUT/NAME."),
        click.option("--name", "name_", help="Dataset folder name (default: the source name)."),
        click.option("--config", "config", type=click.Path(exists=True, path_type=Path),
                     help="TOML file overlaid on the built-in configuration."),
        click.option("--limit", type=click.IntRange(min=1), help="Stop after N candidates."),
        click.option("--workers", type=click.IntRange(min=1), help="Worker processes."),
        click.option("--executor", type=click.Choice(["local", "ray", "serial"]),
                     help="local: isolated process pool (default); ray: a Ray cluster "
                     "(pip install \"loralay-build[ray]\"); serial: in-process."),
        click.option("--ray-address", help="With --executor ray: 'auto' (the cluster of this "
                     "node) or ray://HOST:10001; default: a local Ray instance of --workers "
                     "CPUs."),
        click.option("--parser", type=click.Choice(["pdfium", "pdfplumber", "poppler"]),
                     help="PDF backend."),
        *FILTER_OPTIONS,
        click.option("--page-images", is_flag=True, default=None, help="Also publish each "
                     "page as an image, the removed words painted out (the `pages` "
                     "configuration; [images])."),
        click.option("--no-mask", is_flag=True, default=None, help="With --page-images: keep "
                     "the removed abstracts visible on the images."),
        click.option("--ocr", is_flag=True, default=None, help="Read pages without a usable "
                     "text layer (scans, broken fonts) with Tesseract, about 2.5 CPU s a page "
                     "([ocr])."),
        click.option("-v", "--verbose", count=True, help="More log output."),
        click.option("-q", "--quiet", is_flag=True, help="Errors only."),
        click.option("--allow-empty", is_flag=True,
                     help="Exit 0 even when no document is published (default: exit 1)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@dataclass(frozen=True)
class BuildFlags:
    """The options shared by the building commands that become configuration overrides."""

    workers: int | None = None
    executor: str | None = None
    ray_address: str | None = None
    parser: str | None = None
    no_filter: bool = False
    licences: str | None = None
    exclude_ids: Path | None = None
    page_images: bool | None = None
    no_mask: bool | None = None
    ocr: bool | None = None

    @classmethod
    def take(cls, values: dict[str, Any]) -> BuildFlags:
        """The flags out of a command's values, leaving the others (the source's own)."""
        return cls(**{f.name: values.pop(f.name) for f in fields(cls)})


def flag_overrides(flags: BuildFlags) -> dict[str, Any]:
    out: dict[str, Any] = {}
    executor = flags.executor
    if flags.page_images:
        out = merge(out, {"images": {"enabled": True}})
    if flags.no_mask:
        out = merge(out, {"images": {"mask": False}})
    if flags.ocr:
        out = merge(out, {"ocr": {"enabled": True}})
    if flags.exclude_ids:
        listed = [line.strip() for line in read_text(flags.exclude_ids).splitlines()]
        out = merge(out, {"dedup": {"exclude": [x for x in listed if x and x[0] != "#"]}})
    if flags.licences:
        out = merge(out, {"filters": {"licences": [p for p in flags.licences.split(",")
                                                   if p.strip()]}})
    if flags.ray_address:
        if executor not in (None, "ray"):
            raise click.UsageError(f"--ray-address needs --executor ray, not {executor}")
        executor = "ray"
        out = merge(out, {"run": {"ray_address": flags.ray_address}})
    if flags.workers:
        out = merge(out, {"run": {"workers": flags.workers}})
    if executor:
        out = merge(out, {"run": {"executor": executor}})
    if flags.parser:
        out = merge(out, {"parse": {"backend": flags.parser}})
    if flags.no_filter:
        out = merge(out, {"filters": {"enabled": False}})
    return out


def _checked_flags(flags: BuildFlags) -> dict[str, Any]:
    """`flag_overrides`, a file it reads that cannot be used (`--exclude-ids`) being exit 2,
    after refusing option values that are not UTF-8 (a venue, a licence, a name: they end
    up in requests and records; paths may hold any byte and are left alone)."""
    ctx = click.get_current_context()
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        for text in value if isinstance(value, tuple) else (value,):
            if isinstance(text, str) and text != escaped(text):
                _usage_error(f"{param.opts[-1]}: '{escaped(text)}' is not UTF-8 text")
    try:
        return flag_overrides(flags)
    except ConfigError as exc:
        _usage_error(str(exc))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="loralay-build",
                      message=f"%(prog)s, version %(version)s (PDF core: {core_name()})")
def main() -> None:
    """Build layout-aware long-document summarization corpora."""


def source_command(name: str, command: SourceCommand) -> click.Command:
    """`build-corpus <name>`: the common options, then the source's own (`command`)."""

    def run(out: Path, name_: str | None, config: Path | None, limit: int | None,
            verbose: int, quiet: bool, allow_empty: bool, since: str | None = None,
            **values: Any) -> None:
        _setup_logging(verbose, quiet)
        overrides = _checked_flags(BuildFlags.take(values))
        keys = command.keys(values, name_)
        if keys:
            overrides = merge(overrides, {"source": keys})
        if command.fan_out is None:
            sys.exit(build(name, out, name_, config, overrides, since, limit, allow_empty))
        try:
            plans = command.fan_out(load_settings(name, config, overrides=overrides).source,
                                    name_, since)
        except ConfigError as exc:
            click.echo(f"configuration error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        jobs = [DatasetJob(name, plan.dataset, config,
                           merge(overrides, {"source": plan.source_keys}) if plan.source_keys
                           else overrides, plan.since, limit)
                for plan in plans]
        sys.exit(build_all(jobs, OutputLayout(out), allow_empty, _to_stderr).code if jobs
                 else EXIT_USAGE)

    func: Callable[..., Any] = run
    for option in reversed(command.options):
        func = click_option(option)(func)
    return click.command(name, help=command.help)(common_options(func))


for _name, _source in SOURCES.items():
    main.add_command(source_command(_name, with_views(_source.command,
                                                      _source.config_class.VIEWS)))


# The datasets `demo` builds (sandbox.Sandbox.demo_builds), as their sources declare them, so
# --help shows them without starting the sandbox.
DEMO_DATASETS = tuple(dataset for source in SOURCES.values() for dataset in source.demos)


def _build_stamp(folder: Path) -> int | None:
    """When the dataset's build record was last written (None: never)."""
    try:
        return (folder / "build.json").stat().st_mtime_ns
    except OSError:
        return None


@main.command()
@click.option("--out", type=click.Path(), callback=_local_path, default="data/demo",
              show_default=True, help="Output root; each dataset goes in OUT/NAME.")
@click.option("--docs", type=click.IntRange(min=5), default=24, show_default=True,
              help="Documents the sandbox generates per source.")
@click.option("--only", multiple=True, type=click.Choice(DEMO_DATASETS),
              help="Build only this dataset (repeatable).")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Errors only, no progress bars.")
@FILTER_OPTIONS[0]
@FILTER_OPTIONS[1]
@FILTER_OPTIONS[2]
@click.option("--ocr", is_flag=True, default=None, help="Read the scanned and broken-font "
              "documents with Tesseract (default: when Tesseract and its French model are "
              "installed; with --ocr their absence is an error saying what to install).")
def demo(out: Path, docs: int, only: tuple[str, ...], verbose: int, quiet: bool,
         no_filter: bool, licences: str | None, exclude_ids: Path | None,
         ocr: bool | None) -> None:
    """Build small corpora from the bundled offline sandbox (no network needed)."""
    from loralay_build.sandbox import Sandbox

    _setup_logging(verbose, quiet)
    filters = _checked_flags(BuildFlags(no_filter=no_filter, licences=licences,
                                        exclude_ids=exclude_ids))
    if ocr is None:
        ocr = ocr_ready()
    layout = OutputLayout(out)
    with Sandbox(docs=docs) as sandbox:
        jobs = [DatasetJob(job.source, job.dataset, overrides=merge(
                    merge(job.overrides, filters),
                    {"run": {"timeout": 30.0}, "ocr": {"enabled": ocr and job.ocr}}))
                for job in sandbox.demo_builds() if not only or job.dataset in only]
        stamps = {name: _build_stamp(layout.dataset(name))
                  for job in jobs for name in _demo_names(job)}

        def tell(job: DatasetJob, result: BuildResult) -> None:
            if quiet or result.code not in (0, 3):
                return
            for name in _demo_names(job):
                folder = layout.dataset(name)
                if not folder.exists():
                    click.echo(f"{name}: no document to publish; no folder written")
                elif _build_stamp(folder) != stamps[name]:
                    click.echo(f"{name}: written to {folder}; load it with "
                               f"datasets.load_dataset({str(folder)!r})")
                else:
                    click.echo(f"{name}: nothing new to write in {folder}")

        result = build_all(jobs, layout, allow_empty=False, notify=_to_stderr, after=tell)
    sys.exit(result.code)


def ocr_ready() -> bool:
    """Whether the demo can read its scanned and broken-font documents (HAL's): Tesseract
    and the French model are installed (else they are reported `needs_ocr`)."""
    from loralay_build.parse.ocr import OcrSettings, check_ocr

    try:
        check_ocr(OcrSettings(enabled=True), ["fr"])
    except ConfigError:
        return False
    return True


def _demo_names(job: DatasetJob) -> list[str]:
    """The dataset a demo job builds and its views."""
    views = job.overrides.get("source", {}).get("views", [])
    return [job.dataset, *(f"{job.dataset}-{view}" for view in views)]


def _locate_root(path: Path) -> tuple[OutputLayout, str | None]:
    """The output root: `path` itself, or the one holding the dataset folder `path`
    (published or not: no rows yet), then with that dataset's name."""
    if OutputLayout(path).has_state():
        return OutputLayout(path), None
    if OutputLayout.of_dataset(path).has_state():
        return OutputLayout.of_dataset(path), path.name
    raise click.UsageError(f"no build state under {path}")


@main.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(path: Path, as_json: bool) -> None:
    """What the state database says: candidates per status, rejects and filtered documents per
    reason, last run (in local time)."""
    layout, only = _locate_root(path)
    state = State(layout.root)
    try:
        report: dict[str, dict[str, Any]] = {
            dataset: {
                "statuses": state.status_counts(dataset),
                "rejects": state.reason_counts(dataset),
                "filtered": state.reason_counts(dataset, FILTERED),
                "last_run": state.last_run(dataset),
                "needs_ocr": dict(zip(("documents", "pages"), state.waiting_for_ocr(dataset),
                                      strict=True)),
                "running": state.lock_held(dataset),
            }
            for dataset in state.datasets(with_runs=True) if only in (None, dataset)
        }
    finally:
        state.close()
    report.update(view_status(layout.root, only))
    if only is not None and only not in report:
        _usage_error(f"{path}: no dataset {only!r} in the state of {layout.root}")
    for info in report.values():
        run = info.get("last_run")
        if run:
            when = run["finished"] or run["started"]
            run["when_local"] = datetime.fromtimestamp(when).astimezone().isoformat(" ", "seconds")
    if as_json:
        click.echo(json.dumps(report, indent=2, sort_keys=True))
        return
    for dataset, info in report.items():
        if "view" in info:
            rows = ", ".join(f"{k} {v}" for k, v in info["rows"].items())
            click.echo(f"{dataset}\n  the {info['view']} view of {info['layout_dataset']} "
                       f"(its candidates are those of {info['layout_dataset']}): rows {rows}")
            continue
        click.echo(f"{dataset}")
        for key, value in info["statuses"].items():
            click.echo(f"  {key:<12} {value:>8}")
        if info["needs_ocr"]["documents"]:
            command = (info["last_run"] or {}).get("command")
            click.echo(f"  {ocr_hint(**info['needs_ocr'], command=command)}")
        for title in ("rejects", "filtered"):
            if info[title]:
                click.echo(f"  {title}:")
                for key, value in info[title].items():
                    click.echo(f"    {key:<30} {value:>6}")
        run = info["last_run"]
        if run:
            code = run["exit_code"]
            if code is None:
                code = "running" if info["running"] else "none (the process was killed)"
            click.echo(f"  last run: #{run['id']} at {run['when_local']}, exit {code} "
                       f"({run['command']})")
            if run.get("reason"):
                click.echo(f"    {run['reason']}")


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
def verify(path: Path) -> None:
    """Check a built dataset: checksums, row counts, schema, page CRCs, row invariants."""
    from loralay_build.corpus.verify import republish_problems, verify_dataset

    _require_dataset(path)
    problems = verify_dataset(path)
    work = OutputLayout.of_dataset(path).work
    if not problems and work.is_dir() and "view" not in read_build(path):
        # Beside its build state: the rows must equal what a full republish writes.
        problems = republish_problems(path, work)
    for problem in problems:
        click.echo(problem)
    if problems:
        click.echo(f"{path}: {len(problems)} problem(s)", err=True)
        sys.exit(EXIT_FAILURE)
    click.echo(f"{path}: ok")


@main.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
def gc(out: Path) -> None:
    """Delete downloaded files and work files that no dataset under OUT refers to any more
    (left by changed or vanished documents)."""
    from loralay_build.run.gc import collect

    layout, _ = _locate_root(out)
    state = State(layout.root)
    try:
        done = collect(state)
    except LockHeld as exc:
        click.echo(f"error: {exc}: a build is running", err=True)
        sys.exit(EXIT_LOCKED)
    finally:
        state.close()
    click.echo(f"{layout.root}: {done.blobs} blob(s) and {done.work_files} work file(s) deleted, "
               f"{done.bytes / 1e6:.1f} MB freed")


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--shard-rows", type=click.IntRange(min=1), default=OutputSettings.shard_rows,
              show_default=True,
              help="Rows per shard after repacking (more: fewer files for a release, but a "
                   "later change rewrites more; a build merges shards again when a split "
                   "holds more than [output] rows_per_file allows).")
def compact(path: Path, shard_rows: int) -> None:
    """Repack a dataset's shards full: same rows, fewer files (incremental builds add
    partly filled shards)."""
    from loralay_build.corpus.compact import CompactError, compact_dataset

    _require_dataset(path)
    owner = str(read_build(path).get("layout_dataset") or path.name)  # a view: its build's
    layout = OutputLayout.of_dataset(path)
    try:
        with RunLock(layout.lock(owner)) if layout.has_state() else nullcontext():
            written = compact_dataset(path, shard_rows)
    except LockHeld as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_LOCKED)
    except CompactError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_FAILURE)
    click.echo(f"{path}: {written} shard(s) written" if written else f"{path}: already compact")


@main.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--also", multiple=True, type=click.Path(exists=True, file_okay=False,
                                                       path_type=Path),
              help="Another output folder to compare with (repeatable).")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0, min_open=True),
              default=DedupSettings.threshold, show_default=True,
              help="Estimated Jaccard similarity that makes two documents one work.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--rebuild", is_flag=True, help="Build the folder's band index from scratch first.")
@click.option("--check", is_flag=True,
              help="Compute every pair from scratch too; exit 1 when the stored ones differ.")
def audit(path: Path, also: tuple[Path, ...], threshold: float, as_json: bool, rebuild: bool,
          check: bool) -> None:
    """Works shared across the datasets of a folder, split conflicts, excluded documents.

    Exit 1 when a conflict (one work in train of one dataset and in validation or test of
    another) involves a dataset built under the `guard` policy, or when `--check` finds
    stored pairs that differ from a computation from scratch."""
    from loralay_build.corpus.contamination import audit as run_audit
    from loralay_build.corpus.contamination import format_audit

    layout, _ = _locate_root(path)
    result = run_audit(layout.root, DedupSettings(threshold=threshold,
                                           also=tuple(str(a) for a in also)), rebuild, check)
    if as_json:
        click.echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        click.echo(format_audit(result))
    if result["guarded_conflicts"] or not result.get("index", {}).get("consistent", True):
        sys.exit(1)


@main.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset to take the documents out of.")
@click.option("--ids", "ids_file", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="File of ids, one per line (`<source>:<id>` or `<id>`).")
@click.option("--reason", default="", help="Why (recorded in the state with the date).")
def remove(path: Path, dataset: str, ids_file: Path, reason: str) -> None:
    """Take documents down: unpublish them now, and keep every later run from adding them."""
    from loralay_build.run.takedown import remove as take_down

    layout, _ = _locate_root(path)
    done = take_down(layout, dataset, ids_file, reason)
    click.echo(done.message, err=True)
    sys.exit(done.code)


@main.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset whose rejects are queued again.")
@click.option("--reason", "reasons",
              help="Comma-separated reject reasons, e.g. corrupted,timeout.")
@click.option("--ids", "ids_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="File of ids, one per line (`<source>:<id>` or `<id>`): only these.")
def retry(path: Path, dataset: str, reasons: str | None, ids_file: Path | None) -> None:
    """Queue rejects of the given reasons (or ids) again; the next build of the dataset
    retries them (after fixing what caused them, e.g. a missing program)."""
    from loralay_build.run.retry import parse_reasons, queue_again

    if reasons is None and ids_file is None:
        raise click.UsageError("give --reason, --ids or both")
    try:
        wanted = parse_reasons(reasons)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--reason") from None
    layout, _ = _locate_root(path)
    done = queue_again(layout, dataset, wanted, ids_file)
    click.echo(done.message, err=done.code != 0)
    sys.exit(done.code)


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def stats(path: Path, as_json: bool) -> None:
    """Corpus statistics of a built dataset: sizes, lengths, language confidence, leakage."""
    from loralay_build.corpus.stats import corpus_stats, format_stats

    _require_dataset(path)
    result = corpus_stats(path)
    click.echo(json.dumps(result, indent=2, sort_keys=True) if as_json else format_stats(result))


@main.command()
@click.argument("data_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False), callback=_local_path, default="report",
              show_default=True, help="Folder for report.md, report.json and the PNG plots.")
def report(data_dir: Path, out: Path) -> None:
    """Tables (Markdown, JSON) and plots of every dataset under DATA_DIR: sizes per split,
    lengths, compression, language confidence, documents lost per cause, years."""
    from loralay_build.corpus.report import MissingExtra, write_report

    try:
        check_folder_can_be_made(out, "--out")
        written = write_report(data_dir, out)
    except ConfigError as exc:
        _usage_error(str(exc))
    except OSError as exc:
        click.echo(f"error: cannot write the report into {out}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_FAILURE)
    except MissingExtra as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_FAILURE)
    except ValueError as exc:
        _usage_error(str(exc))
    click.echo(f"{out / 'report.md'}: {len(written['datasets'])} dataset(s), "
               f"{len(written['plots'])} plots written")


def _usage_error(message: str) -> NoReturn:
    click.echo(f"usage error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _require_dataset(path: Path) -> None:
    from loralay_build.corpus.folder import is_dataset

    if not is_dataset(path):
        _usage_error(f"{path} is not a dataset folder (no build.json or shards); "
                     f"give one folder under the output root, e.g. {path / '<dataset>'}")


def _refuse_view(dataset: Path, what: str) -> None:
    """Exit 2, naming the layout dataset, for a command that needs the layout a view lacks."""
    from loralay_build.corpus.folder import read_build

    build = read_build(dataset)
    if build.get("view"):
        layout = OutputLayout.of_dataset(dataset).dataset(str(build.get("layout_dataset")))
        _usage_error(f"{dataset} is the {build['view']} view of {layout.name} (text only): it "
                     f"{what}; give the layout dataset instead, e.g. {layout}")


@main.command("inspect")
@click.argument("dataset", type=click.Path(path_type=Path))
@click.argument("article_id")
@click.option("--page", type=click.IntRange(min=1),
              help="Page to draw, from 1 (default: the page where the abstract was found).")
@click.option("--all-pages", is_flag=True, help="One PNG per page (OUT's name + -pN).")
@click.option("--order", "reading_order", is_flag=True,
              help="Draw the reading order: a polyline through the lines, block numbers.")
@click.option("--out", type=click.Path(dir_okay=False), callback=_local_path,
              help="PNG to write (default: ./inspect-ID.png).")
def inspect_command(dataset: Path, article_id: str, page: int | None, all_pages: bool,
                    reading_order: bool, out: Path | None) -> None:
    """Draw a page of a published or rejected document: kept words, removed abstract,
    words dropped by cleaners. ARTICLE_ID as published (`<source>:<id>`) or the source's
    own id; DATASET may have nothing published yet (its rejects are drawn)."""
    from loralay_build.ids import AmbiguousId
    from loralay_build.inspect.layers import NoSuchPage, document_layers
    from loralay_build.inspect.locate import UnknownDataset, UnknownDocument
    from loralay_build.inspect.render import write_pngs

    if dataset.exists():
        _refuse_view(dataset, "has no page to draw")
    try:
        layers = document_layers(dataset, article_id, page, all_pages)
    except UnknownDataset:
        _usage_error(f"{dataset} is not a dataset folder, and no build state beside it "
                     f"knows a dataset {dataset.name!r}")
    except UnknownDocument:
        _usage_error(f"{article_id!r} is neither published in {dataset} nor in its rejects")
    except (AmbiguousId, NoSuchPage) as exc:
        _usage_error(str(exc))
    if layers.rejected:
        click.echo(f"{layers.article_id}: not published: {layers.rejected}", err=True)
    if layers.pdf_path is None:
        click.echo(f"{layers.article_id}: nothing to draw: {'; '.join(layers.notes)}", err=True)
        sys.exit(EXIT_FAILURE)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in layers.article_id)
    target = out or Path(f"inspect-{safe}.png")
    try:
        check_writable_folder(target.parent, "the folder of --out", create=False)
        paths = write_pngs(layers, target, all_pages, reading_order)
    except (ValueError, ConfigError) as exc:
        _usage_error(str(exc))
    except OSError as exc:
        click.echo(f"error: cannot write {target}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_FAILURE)
    for path in paths:
        click.echo(f"{path}: written")


if __name__ == "__main__":  # pragma: no cover
    main()
