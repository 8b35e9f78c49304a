"""Only the command line talks to the terminal: the engine (run/, corpus/, sources/ and every
other package module) returns results and takes a sink for its lines, and no module but the
command-line ones imports click."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import loralay_build

PACKAGE = Path(loralay_build.__file__).parent
COMMAND_LINE = {"cli.py", "cli_options.py"}  # where options are made and results printed
# The commands page of the documentation, written from the click command tree.
READS_THE_COMMAND_LINE = {"docgen/commands_page.py"}


def _click_imports(path: Path) -> list[int]:
    """The lines of `path` that import click (or a module of it), anywhere in the file."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        if any(name == "click" or name.startswith("click.") for name in names):
            lines.append(node.lineno)
    return lines


def test_no_engine_module_imports_click() -> None:
    engine = [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).as_posix()
              not in COMMAND_LINE | READS_THE_COMMAND_LINE]
    assert {p.parent.name for p in engine} >= {"run", "corpus", "sources"}
    found = {p.relative_to(PACKAGE).as_posix(): lines for p in engine
             if (lines := _click_imports(p))}
    assert found == {}, f"click imported outside {sorted(COMMAND_LINE)} (file: lines)"


@pytest.mark.parametrize("statement", ["import click", "import click.testing as t",
                                       "from click import echo", "from click.types import Path",
                                       "def f() -> None:\n    import click"])
def test_the_scan_sees_every_form_of_import(statement: str, tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(f"import json\n{statement}\n", encoding="utf-8")
    assert _click_imports(module)


def test_the_scan_ignores_names_that_only_start_alike(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("import clickhouse\nfrom clicks import x\nfrom .click import y\n",
                      encoding="utf-8")
    assert _click_imports(module) == []
