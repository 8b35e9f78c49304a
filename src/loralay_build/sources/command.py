"""What a source adds to `build-corpus <source>`: its help, its own options, the `[source]` keys
they set, and (for a crawl feeding several datasets) the datasets one command builds.

Why: the options every build shares are declared once in `cli.py`; a source that declares its
command here gets a subcommand without `cli.py` knowing anything about it. Options are plain
data: only `cli_options.py` turns them into click options, so no source depends on click.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, Literal

from loralay_build.dates import normalise_since
from loralay_build.errors import ConfigError
from loralay_build.source_table import SourceConfig

# text: any string; flag: on when given; file / folder: an existing one, passed as a Path;
# choice: one of `choices`; fraction: a number from 0 to 1.
OptionKind = Literal["text", "flag", "file", "folder", "choice", "fraction"]


@dataclass(frozen=True)
class Option:
    """One option of `build-corpus <source>`, as data.

    `name`: the parameter its value is passed as, when not the flag's own (`--set` -> `set_`).
    `check`: for a text option given once, returns the value to use (normalised) or raises
    ValueError with the message the command line shows (exit 2).
    """

    flag: str
    help: str
    _: KW_ONLY
    name: str | None = None
    kind: OptionKind = "text"
    choices: tuple[str, ...] = ()
    multiple: bool = False
    required: bool = False
    check: Callable[[str], str] | None = None

    def __post_init__(self) -> None:
        if bool(self.choices) != (self.kind == "choice"):
            raise ValueError(f"{self.flag}: choices go with, and only with, kind 'choice'")
        if self.check is not None and (self.kind != "text" or self.multiple):
            raise ValueError(f"{self.flag}: a check applies to a text option given once")


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


def with_views(command: SourceCommand, views: tuple[str, ...]) -> SourceCommand:
    """`command` with `--view` (repeatable) among `views`, setting `[source] views`."""
    if not views:
        return command
    option = Option("--view", "Also write a view of the dataset as NAME-<view> "
                    f"(repeatable): {', '.join(views)}.", name="views", kind="choice",
                    multiple=True, choices=views)
    keys = command.keys

    def keys_with_views(values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        chosen = values["views"]
        return {**keys(values, name), **({"views": list(chosen)} if chosen else {})}

    return dataclasses.replace(command, options=(option, *command.options),
                               keys=keys_with_views)


def given(**values: Any) -> dict[str, Any]:
    """Options that were given, as `[source]` keys; paths made absolute."""
    return {key: str(v.resolve()) if isinstance(v, Path) else v
            for key, v in values.items() if v not in (None, (), False)}


def _since(value: str) -> str:
    """--since normalised once, for every dataset the command builds; else exit 2."""
    try:
        return normalise_since(value)
    except ConfigError as exc:
        raise ValueError(str(exc).removeprefix("--since ")) from None


def since_option(help: str) -> Option:
    """--since: passed to discovery, not a `[source]` key."""
    return Option("--since", help, check=_since)


def _iso_date(value: str) -> str:
    """A real calendar date, refused before any request is made."""
    try:
        valid = len(value) == 10 and dt.date.fromisoformat(value).isoformat() == value
    except ValueError:
        valid = False
    if not valid:
        raise ValueError(f"{value!r} is not a date of the form YYYY-MM-DD")
    return value


def id_options(from_help: str) -> tuple[Option, ...]:
    """--ids / --split-ids / --from / --until, shared by arxiv and pubmed."""
    return (
        Option("--ids", "File of ids to build (one per line, or JSON lines with article_id).",
               kind="file"),
        Option("--split-ids", "Folder of the original dataset's train/val/test id files: each "
               "document keeps its original split.", kind="folder"),
        Option("--from", from_help, name="from_", check=_iso_date),
        Option("--until", "End date (YYYY-MM-DD).", check=_iso_date),
    )


def id_keys(values: Mapping[str, Any]) -> dict[str, Any]:
    """The `[source]` keys of `id_options`."""
    return given(ids=values["ids"], split_ids=values["split_ids"], until=values["until"],
                 **{"from": values["from_"]})
