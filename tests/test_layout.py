"""The output layout owns every path under `--out`: no other module spells the state folder or
the files in it, so their names change in one place."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import loralay_build
from loralay_build.layout import OutputLayout

PACKAGE = Path(loralay_build.__file__).parent
# The names only the layout may spell: the state folder and the files it holds.
OWNED = re.compile(r"(^|[/\\])(\.loralay|state\.sqlite|views(-abstracts)?\.sqlite)($|[/\\])")


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def owned_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of the string constants of `source` that spell a path of the layout,
    f-string parts included, docstrings left out."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in skip and OWNED.search(node.value)]


def test_no_module_but_the_layout_spells_its_paths() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "layout.py" and path.parent == PACKAGE:
            continue
        hits = owned_literals(path.read_text(encoding="utf-8"))
        if hits:
            found[str(path.relative_to(PACKAGE))] = hits
    assert found == {}


def test_the_scan_finds_a_path_spelled_again() -> None:
    """The check above goes red when a module joins the state folder itself."""
    source = ('"""A module: its state lives in `.loralay`."""\n'
              'def f(root, name):\n'
              '    """Docstrings may name `.loralay/state.sqlite`."""\n'
              '    return (root / ".loralay" / f"{name}.lock", f"{root}/.loralay/x",\n'
              '            "state.sqlite")\n')
    assert sorted(line for line, _ in owned_literals(source)) == [4, 4, 5]
    assert owned_literals('MEMBERS = b"loralay.members"; NAME = "loralay.allow_empty"\n') == []


def test_the_paths_of_an_output_root(tmp_path: Path) -> None:
    layout = OutputLayout(tmp_path)
    state = tmp_path / ".loralay"
    assert (layout.state_dir, layout.state_db) == (state, state / "state.sqlite")
    assert (layout.blobs, layout.work) == (state / "blobs", state / "work")
    assert (layout.views_index, layout.views_abstracts) == (
        state / "views.sqlite", state / "views-abstracts.sqlite")
    assert layout.lock("hal") == state / "hal.lock"
    assert layout.dataset("hal") == tmp_path / "hal"
    assert OutputLayout.of_dataset(tmp_path / "hal") == layout
    assert not layout.has_state()
    state.mkdir()
    assert layout.has_state()
