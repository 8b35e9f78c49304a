"""What a source adds to `build-corpus <source>`: its help, its own options, the `[source]` keys
they set, and (for a crawl feeding several datasets) the datasets one command builds.

Why: the options every build shares are declared once in `cli.py`; a source that declares its
command here gets a subcommand without `cli.py` knowing anything about it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from loralay_build.dates import normalise_since
from loralay_build.errors import ConfigError
from loralay_build.source_table import SourceConfig

Option = Callable[[Callable[..., Any]], Callable[..., Any]]


@dataclass(frozen=True)
class DatasetPlan:
    """One dataset of a command that builds several: its `[source]` keys and `--since`."""

    dataset: str
    source_keys: dict[str, Any] = field(default_factory=dict)
    since: str | None = None


def _no_keys(values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class SourceCommand:
    """`build-corpus <source>`: `keys` turns the values of `options` (and --name) into
    `[source]` keys; `fan_out`, when set, lists the datasets one crawl feeds."""

    help: str
    options: tuple[Option, ...] = ()
    keys: Callable[[Mapping[str, Any], str | None], dict[str, Any]] = _no_keys
    fan_out: Callable[[SourceConfig, str | None, str | None], list[DatasetPlan]] | None = None


def given(**values: Any) -> dict[str, Any]:
    """Options that were given, as `[source]` keys; paths made absolute."""
    return {key: str(v.resolve()) if isinstance(v, Path) else v
            for key, v in values.items() if v not in (None, (), False)}


def _since(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--since normalised once, for every dataset the command builds; else exit 2."""
    if value is None:
        return None
    try:
        return normalise_since(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc).removeprefix("--since ")) from None


def since_option(help: str) -> Option:
    """--since: passed to discovery, not a `[source]` key."""
    return click.option("--since", callback=_since, help=help)


def _iso_date(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A real calendar date, refused before any request is made."""
    if value is None:
        return None
    try:
        valid = len(value) == 10 and dt.date.fromisoformat(value).isoformat() == value
    except ValueError:
        valid = False
    if not valid:
        raise click.BadParameter(f"{value!r} is not a date of the form YYYY-MM-DD")
    return value


def id_options(from_help: str) -> tuple[Option, ...]:
    """--ids / --split-ids / --from / --until, shared by arxiv and pubmed."""
    return (
        click.option("--ids", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="File of ids to build (one per line, or JSON lines with article_id)."),
        click.option("--split-ids", type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="Folder of the original dataset's train/val/test id files: each "
                     "document keeps its original split."),
        click.option("--from", "from_", callback=_iso_date, help=from_help),
        click.option("--until", callback=_iso_date, help="End date (YYYY-MM-DD)."),
    )


def id_keys(values: Mapping[str, Any]) -> dict[str, Any]:
    """The `[source]` keys of `id_options`."""
    return given(ids=values["ids"], split_ids=values["split_ids"], until=values["until"],
                 **{"from": values["from_"]})
