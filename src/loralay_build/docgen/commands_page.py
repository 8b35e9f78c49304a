"""The reference of every `build-corpus` command: its usage, what it does and each option
with its help, read from the click command tree the tool runs."""

from __future__ import annotations

import html

import click

from loralay_build.cli import main


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    """Code in a table cell: HTML, as a Markdown code span would show an escaped pipe's
    backslash."""
    return "<code>" + html.escape(" ".join(text.split())).replace("|", "&#124;") + "</code>"


def render() -> str:
    """The commands as Markdown, in the order `build-corpus --help` lists them."""
    assert isinstance(main, click.Group)
    out: list[str] = []
    # the group's settings (`-h` beside `--help`), as an invocation applies them
    root = click.Context(main, info_name="build-corpus", **main.context_settings)
    for name, command in main.commands.items():
        ctx = click.Context(command, info_name=name, parent=root)
        usage = " ".join(command.collect_usage_pieces(ctx))
        out += [f"### `{name}`", "", f"`build-corpus {name} {usage}`", "",
                " ".join((command.help or "").split()), "",
                "| option | what it does |", "|---|---|"]
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                out.append(f"| {_code(record[0])} | {_cell(record[1])} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
