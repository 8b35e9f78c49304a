"""Every `make` target and every `build-corpus` command and option that the README and the
documentation name exists, and the README's install and test commands are those CI runs."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import click

from loralay_build.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# Options of the other programs the pages show commands of (pip, pytest, mkdocs, hf, ray,
# apt-get, cron lines); the scripts' own options are read from their argparse calls.
OTHER_PROGRAMS = {"-e", "-m", "-n", "-q", "-y", "-x", "--strict", "--repo-type", "--delete",
                  "--head", "--port", "--address", "--site-dir", "--quiet", "--durations",
                  "--runslow", "--check", "--root"}
OPTION = re.compile(r"(?:^|\s)\[?(--?[A-Za-z][\w-]*)")  # a word of its own, maybe in [ ]
COMMAND = re.compile(r"build-corpus(?:\s+([a-z][\w-]*))?((?:[^|;&#`\n]|\\\|)*)")
MAKE = re.compile(r"(?:^|[\s;&(])make ([a-z][\w-]*)")


def code(text: str) -> Iterator[str]:
    """The code of a Markdown page: fenced blocks line by line, then inline code spans."""
    fenced = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
    for block in fenced.findall(text):
        yield from block.splitlines()
    yield from re.findall(r"`([^`\n]+)`", fenced.sub("", text))


def named() -> Iterator[tuple[Path, str]]:
    for page in PAGES:
        for snippet in code(page.read_text(encoding="utf-8")):
            yield page, snippet


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):(?!=)", text, re.M))


def options(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


def script_options() -> set[str]:
    """The options of `scripts/*.py`, from their `add_argument` calls."""
    found = set()
    for script in (ROOT / "scripts").glob("*.py"):
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                found |= {a.value for a in node.args if isinstance(a, ast.Constant)
                          and isinstance(a.value, str) and a.value.startswith("-")}
    return found


def test_every_make_target_named_exists() -> None:
    targets = make_targets()
    missing = {(page.name, target) for page, snippet in named()
               for target in MAKE.findall(snippet) if target not in targets}
    assert missing == set()


def test_every_build_corpus_command_and_option_named_exists() -> None:
    assert isinstance(main, click.Group)
    every = set().union(*(options(c) for c in main.commands.values()), options(main))
    missing = set()
    for page, snippet in named():
        for name, rest in COMMAND.findall(snippet):
            if not name:
                continue
            command = main.commands.get(name)
            if command is None:
                missing.add((page.name, name))
                continue
            known = options(command) | options(main)
            missing |= {(page.name, f"{name} {opt}") for opt in OPTION.findall(rest)
                        if opt not in known}
        if "build-corpus" not in snippet and "scripts/" not in snippet:
            # An option named on its own (`--with-reviews`) is one of some command's.
            missing |= {(page.name, opt) for opt in OPTION.findall(snippet)
                        if snippet.lstrip().startswith(opt) and opt not in every
                        and opt not in script_options() and opt not in OTHER_PROGRAMS}
    assert missing == set()


def test_the_readme_installs_and_tests_as_ci_does() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace(" --quiet", "")
    assert 'python3 -m pip install -e ".[dev,ray]"' in readme
    assert "\npython3 -m pytest -q\n" in readme
    for command in ('python3 -m pip install -e ".[dev,ray]"', "python3 -m pytest -q"):
        assert f"\n{command}\n" in ci
