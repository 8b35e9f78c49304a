"""A source's options (sources.command.Option, plain data) as click options.

Why: the sources declare what they accept without depending on click; this module is the one
place where those declarations become a command line, a check's ValueError becoming click's
usage error (exit 2) with the check's own message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from loralay_build.sources.command import Option, OptionKind

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

TYPES: dict[OptionKind, click.ParamType[Any]] = {
    "file": click.Path(exists=True, dir_okay=False, path_type=Path),
    "folder": click.Path(exists=True, file_okay=False, path_type=Path),
    "fraction": click.FloatRange(0.0, 1.0),
}


def _callback(check: Callable[[str], str]) -> Callable[[click.Context, click.Parameter,
                                                         str | None], str | None]:
    """`check` as a click callback: its ValueError is a bad parameter, with its message."""

    def checked(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return check(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    return checked


def click_option(option: Option) -> Decorator:
    """The click option that `option` describes."""
    settings: dict[str, Any] = {"help": option.help}
    if option.kind == "flag":
        settings["is_flag"] = True
    elif option.kind == "choice":
        settings["type"] = click.Choice(option.choices)
    elif option.kind in TYPES:
        settings["type"] = TYPES[option.kind]
    if option.multiple:
        settings["multiple"] = True
    if option.required:
        settings["required"] = True
    if option.check is not None:
        settings["callback"] = _callback(option.check)
    names = (option.flag,) if option.name is None else (option.flag, option.name)
    return click.option(*names, **settings)
