"""`build-corpus`: one subcommand per source, plus local, demo, status and stats."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from loralay_build.config import load_settings, merge
from loralay_build.errors import ConfigError, LockHeld, LoralayError
from loralay_build.progress import interactive
from loralay_build.run.pipeline import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_USAGE,
    BuildRequest,
    Pipeline,
    check_dataset_name,
)
from loralay_build.state import STATE_DIR, State

log = logging.getLogger("loralay_build")


def _setup_logging(verbose: int, quiet: bool) -> None:
    """Warnings only by default (progress bars show the rest on a terminal); -v for a log."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    if quiet:
        level = logging.ERROR
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)


def build(
    source: str,
    out: Path,
    name: str | None,
    config: Path | None,
    overrides: dict[str, Any],
    since: str | None = None,
    limit: int | None = None,
) -> int:
    """Load settings, take the dataset lock and run the pipeline; returns the exit code."""
    try:
        settings = load_settings(source, config, overrides=overrides)
    except ConfigError as exc:
        click.echo(f"configuration error: {exc}", err=True)
        return EXIT_USAGE
    try:
        dataset = check_dataset_name(source if name is None else name)
    except ConfigError as exc:
        click.echo(f"usage error: --name: {exc}", err=True)
        return EXIT_USAGE
    state = State(out)
    request = BuildRequest(source, dataset, out, settings, since, limit, " ".join(sys.argv[1:]))
    try:
        with state.lock(dataset):
            run_id = state.start_run(dataset, request.command or source)
            code = EXIT_FAILURE
            pipeline = Pipeline(request, state)
            try:
                code = pipeline.run()
            except ConfigError as exc:
                click.echo(f"configuration error: {exc}", err=True)
                code = EXIT_USAGE
            except LoralayError as exc:
                log.error("build failed: %s", exc)
            except KeyboardInterrupt:
                click.echo("interrupted; run the same command again to resume", err=True)
                code = EXIT_INTERRUPTED
            finally:
                state.finish_run(run_id, code, dict(pipeline.report.counts))
            _summary(state, dataset, out, pipeline.report.counts)
            return code
    except LockHeld as exc:
        click.echo(f"{exc}: exiting", err=True)
        return EXIT_LOCKED
    finally:
        state.close()


def _summary(state: State, dataset: str, out: Path, counts: dict[str, int]) -> None:
    statuses = state.status_counts(dataset)
    line = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    log.info("%s: %s (this run: %s)", dataset, line,
             ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing new")
    if interactive():
        click.echo(f"{out / dataset}: {line}", err=True)


def common_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options every building subcommand accepts."""
    options = [
        click.option("--out", type=click.Path(path_type=Path), default=Path("data"),
                     show_default=True, help="Output root; the dataset goes in OUT/NAME."),
        click.option("--name", help="Dataset folder name (default: the source name)."),
        click.option("--config", "config", type=click.Path(exists=True, path_type=Path),
                     help="TOML file overlaid on the built-in configuration."),
        click.option("--limit", type=click.IntRange(min=1), help="Stop after N candidates."),
        click.option("--workers", type=click.IntRange(min=1), help="Worker processes."),
        click.option("--executor", type=click.Choice(["local", "serial"]),
                     help="local: isolated process pool (default); serial: in-process."),
        click.option("--parser", type=click.Choice(["pdfium", "pdfplumber", "poppler"]),
                     help="PDF backend."),
        click.option("--no-filter", is_flag=True, help="Keep documents the percentile "
                     "filters would drop."),
        click.option("-v", "--verbose", count=True, help="More log output."),
        click.option("-q", "--quiet", is_flag=True, help="Errors only."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def flag_overrides(workers: int | None, executor: str | None, parser: str | None,
                   no_filter: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if workers:
        out = merge(out, {"run": {"workers": workers}})
    if executor:
        out = merge(out, {"run": {"executor": executor}})
    if parser:
        out = merge(out, {"parse": {"backend": parser}})
    if no_filter:
        out = merge(out, {"filters": {"enabled": False}})
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="loralay-build")
def main() -> None:
    """Build layout-aware long-document summarization corpora."""


@main.command()
@common_options
@click.option("--since", help="Only records modified since this date (YYYY[-MM[-DD]]).")
def hal(out: Path, name: str | None, config: Path | None, limit: int | None,
        workers: int | None, executor: str | None, parser: str | None, no_filter: bool,
        verbose: int, quiet: bool, since: str | None) -> None:
    """Crawl HAL: French articles and conference papers with a file."""
    _setup_logging(verbose, quiet)
    overrides = flag_overrides(workers, executor, parser, no_filter)
    sys.exit(build("hal", out, name, config, overrides, since, limit))


@main.command()
@common_options
@click.option("--since", help="Re-list articles processed since this date (YYYY[-MM[-DD]]).")
@click.option("--via", type=click.Choice(["api", "site"]),
              help="Discovery route: the ArticleMeta API or a crawl of the collection "
                   "websites (default: [source] via).")
def scielo(out: Path, name: str | None, config: Path | None, limit: int | None,
           workers: int | None, executor: str | None, parser: str | None, no_filter: bool,
           verbose: int, quiet: bool, since: str | None, via: str | None) -> None:
    """Crawl SciELO (ArticleMeta, or the websites with --via site): one crawl, one dataset
    per article language (scielo-es, scielo-pt; --name NAME gives NAME-es, NAME-pt)."""
    _setup_logging(verbose, quiet)
    overrides = merge(flag_overrides(workers, executor, parser, no_filter), _source_keys(via=via))
    try:
        datasets = dict(load_settings("scielo", config, overrides).source.get("datasets", {}))
    except ConfigError as exc:
        click.echo(f"configuration error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if name:
        datasets = {lang: f"{name}-{lang}" for lang in datasets}
        overrides = merge(overrides, {"source": {"datasets": datasets}})
    # The first build crawls for every dataset; the next ones find nothing new to list.
    codes = [build("scielo", out, dataset, config, overrides, since if i == 0 else None, limit)
             for i, dataset in enumerate(datasets.values())]
    sys.exit(max(codes, default=EXIT_USAGE))


@main.command()
@common_options
@click.option("--since", help="Only acts dated, or summaries updated, since this date "
              "(YYYY[-MM[-DD]]).")
@click.option("--languages", help="Comma-separated ISO 639-1 codes (en,fr,de) or 'all' "
              "(default: [source] languages, all 24).")
@click.option("--split-preset", type=click.Choice(["chronological", "eurlex-sum"]),
              help="chronological (default) or eurlex-sum: acts in every requested language "
                   "go to validation/test by a hash of their CELEX id.")
def eurlex(out: Path, name: str | None, config: Path | None, limit: int | None,
           workers: int | None, executor: str | None, parser: str | None, no_filter: bool,
           verbose: int, quiet: bool, since: str | None, languages: str | None,
           split_preset: str | None) -> None:
    """Build EUR-Lex-Sum through Cellar: one crawl, one dataset per language (eurlex-en,
    eurlex-fr, ...; --name NAME gives NAME-en, ...), the act's OJ PDF with its XHTML text."""
    from loralay_build.sources.eurlex import datasets_for

    _setup_logging(verbose, quiet)
    keys = _source_keys(languages=languages, split_preset=split_preset, dataset_prefix=name)
    overrides = merge(flag_overrides(workers, executor, parser, no_filter), keys)
    try:
        datasets = datasets_for(load_settings("eurlex", config, overrides=overrides).source)
    except ConfigError as exc:
        click.echo(f"configuration error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    # The first build crawls for every language; the next ones find nothing new to list.
    codes = [build("eurlex", out, dataset, config, overrides, since if i == 0 else None, limit)
             for i, dataset in enumerate(datasets.values())]
    sys.exit(max(codes, default=EXIT_USAGE))


@main.command()
@common_options
def koreascience(out: Path, name: str | None, config: Path | None, limit: int | None,
                 workers: int | None, executor: str | None, parser: str | None,
                 no_filter: bool, verbose: int, quiet: bool) -> None:
    """Crawl KoreaScience (Scrapy, resumable): Korean articles with a Korean abstract."""
    _setup_logging(verbose, quiet)
    overrides = flag_overrides(workers, executor, parser, no_filter)
    sys.exit(build("koreascience", out, name, config, overrides, None, limit))


@main.command()
@common_options
@click.option("--input", "input_", required=True, type=click.Path(exists=True, path_type=Path),
              help="JSON-lines manifest: id, pdf, abstracts, language, published, ...")
def local(out: Path, name: str | None, config: Path | None, limit: int | None,
          workers: int | None, executor: str | None, parser: str | None, no_filter: bool,
          verbose: int, quiet: bool, input_: Path) -> None:
    """Build from your own PDFs listed in a manifest."""
    _setup_logging(verbose, quiet)
    overrides = merge(flag_overrides(workers, executor, parser, no_filter),
                      {"source": {"input": str(input_.resolve())}})
    sys.exit(build("local", out, name, config, overrides, None, limit))


def _source_keys(**values: Any) -> dict[str, Any]:
    """Flags that were given, as `[source]` keys; paths made absolute."""
    table = {key: str(v.resolve()) if isinstance(v, Path) else v
             for key, v in values.items() if v not in (None, (), False)}
    return {"source": table} if table else {}


def _id_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--ids / --split-ids / --from / --until, shared by arxiv and pubmed."""
    options = [
        click.option("--ids", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="File of ids to build (one per line, or JSON lines with article_id)."),
        click.option("--split-ids", type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="Folder of the original dataset's train/val/test id files: each "
                     "document keeps its original split."),
        click.option("--from", "from_", help="Start date (YYYY-MM-DD): OAI-PMH `from`, or the "
                     "earliest v1 date kept from a snapshot."),
        click.option("--until", help="End date (YYYY-MM-DD)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@main.command()
@common_options
@_id_options
@click.option("--metadata", help="Kaggle-format metadata snapshot (path or URL), streamed.")
@click.option("--oai", is_flag=True, help="Harvest OAI-PMH arXivRaw (incremental from the last "
              "committed datestamp).")
@click.option("--set", "set_", help="OAI-PMH set, e.g. cs or physics:hep-th.")
@click.option("--categories", help="Comma-separated categories or prefixes to keep (cs,stat.ML).")
@click.option("--version", "version_policy", type=click.Choice(["latest", "metadata"]),
              help="PDF version: newest in the bucket, or the one the metadata abstract is of.")
def arxiv(out: Path, name: str | None, config: Path | None, limit: int | None,
          workers: int | None, executor: str | None, parser: str | None, no_filter: bool,
          verbose: int, quiet: bool, ids: Path | None, split_ids: Path | None,
          from_: str | None, until: str | None, metadata: str | None, oai: bool,
          set_: str | None, categories: str | None, version_policy: str | None) -> None:
    """Build arXiv-Lay: arXiv papers with layout, the original splits kept."""
    _setup_logging(verbose, quiet)
    if metadata and "://" not in metadata:
        metadata = str(Path(metadata).resolve())
    keys = _source_keys(
        ids=ids, split_ids=split_ids, until=until, metadata=metadata, oai=oai, set=set_,
        version=version_policy,
        categories=[c.strip() for c in categories.split(",") if c.strip()] if categories else None,
        **{"from": from_},
    )
    overrides = merge(flag_overrides(workers, executor, parser, no_filter), keys)
    sys.exit(build("arxiv", out, name, config, overrides, None, limit))


@main.command()
@common_options
@_id_options
@click.option("--set", "set_", help="OAI-PMH set (default pmc-open).")
def pubmed(out: Path, name: str | None, config: Path | None, limit: int | None,
           workers: int | None, executor: str | None, parser: str | None, no_filter: bool,
           verbose: int, quiet: bool, ids: Path | None, split_ids: Path | None,
           from_: str | None, until: str | None, set_: str | None) -> None:
    """Build PubMed-Lay: PMC open-access articles with layout, the original splits kept."""
    _setup_logging(verbose, quiet)
    keys = _source_keys(ids=ids, split_ids=split_ids, until=until, set=set_,
                        **{"from": from_})
    overrides = merge(flag_overrides(workers, executor, parser, no_filter), keys)
    sys.exit(build("pubmed", out, name, config, overrides, None, limit))


@main.command()
@click.option("--out", type=click.Path(path_type=Path), default=Path("data/demo"),
              show_default=True)
@click.option("--docs", type=click.IntRange(min=5), default=24, show_default=True,
              help="Documents the sandbox generates per source.")
@click.option("--only", multiple=True, help="Build only these datasets (repeatable).")
@click.option("-v", "--verbose", count=True)
@click.option("-q", "--quiet", is_flag=True)
def demo(out: Path, docs: int, only: tuple[str, ...], verbose: int, quiet: bool) -> None:
    """Build small corpora from the bundled offline sandbox (no network needed)."""
    from loralay_build.sandbox import Sandbox

    _setup_logging(verbose, quiet)
    codes = []
    with Sandbox(docs=docs) as sandbox:
        for job in sandbox.demo_builds():
            if only and job.dataset not in only:
                continue
            overrides = merge(job.overrides, {"run": {"timeout": 30.0}})
            code = build(job.source, out, job.dataset, None, overrides)
            codes.append(code)
            if code in (0, 3) and not quiet:
                click.echo(f"{job.dataset}: written to {out / job.dataset}; load it with "
                           f"datasets.load_dataset({str(out / job.dataset)!r})")
    sys.exit(max(codes, default=0))


def _locate_root(path: Path) -> tuple[Path, str | None]:
    if (path / STATE_DIR).is_dir():
        return path, None
    if (path.parent / STATE_DIR).is_dir():
        return path.parent, path.name
    raise click.UsageError(f"no build state under {path}")


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(path: Path, as_json: bool) -> None:
    """What the state database says: candidates per status, rejects per reason, last run."""
    root, only = _locate_root(path)
    state = State(root)
    try:
        report: dict[str, dict[str, Any]] = {
            dataset: {
                "statuses": state.status_counts(dataset),
                "rejects": state.reason_counts(dataset),
                "last_run": state.last_run(dataset),
            }
            for dataset in state.datasets() if only in (None, dataset)
        }
    finally:
        state.close()
    if as_json:
        click.echo(json.dumps(report, indent=2, sort_keys=True))
        return
    for dataset, info in report.items():
        click.echo(f"{dataset}")
        for key, value in info["statuses"].items():
            click.echo(f"  {key:<12} {value:>8}")
        if info["rejects"]:
            click.echo("  rejects:")
            for key, value in info["rejects"].items():
                click.echo(f"    {key:<30} {value:>6}")
        run = info["last_run"]
        if run:
            click.echo(f"  last run: #{run['id']} exit {run['exit_code']} "
                       f"({run['command']})")


@main.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
def verify(path: Path) -> None:
    """Check a built dataset: checksums, row counts, schema, page CRCs, row invariants."""
    from loralay_build.corpus.verify import verify_dataset

    problems = verify_dataset(path)
    for problem in problems:
        click.echo(problem)
    if problems:
        click.echo(f"{path}: {len(problems)} problem(s)", err=True)
        sys.exit(EXIT_FAILURE)
    click.echo(f"{path}: ok")


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
def stats(path: Path) -> None:
    """Corpus statistics of a built dataset: sizes, lengths, language confidence, leakage."""
    from loralay_build.corpus.stats import corpus_stats, format_stats

    click.echo(format_stats(corpus_stats(path)))


if __name__ == "__main__":  # pragma: no cover
    main()
