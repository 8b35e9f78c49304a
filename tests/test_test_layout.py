"""The tests' own layout: test modules share code only through `tests.helpers`.

A test module that imports another test module (or a conftest) runs that module's
module-level code twice under two names and ties two files' private details together;
shared builders live in `tests/helpers/` and fixtures reach tests by injection.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
HELPERS = "tests.helpers"


def _module_name(path: Path) -> str:
    parts = path.relative_to(TESTS.parent).with_suffix("").parts
    return ".".join(parts)


def _allowed(module: str) -> bool:
    """Anything outside `tests`, and `tests.helpers` with its submodules."""
    inside = module == "tests" or module.startswith("tests.")
    return not inside or module == HELPERS or module.startswith(HELPERS + ".")


def _imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every module the file imports, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_name(path).rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            if base == "tests" or (node.level and not node.module):
                # `from tests import x` / `from . import x`: each name may be a module
                found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
            else:
                found.append((node.lineno, base))
    return found


def _checked_files() -> list[Path]:
    tests = sorted(TESTS.rglob("test_*.py"))
    helpers = sorted((TESTS / "helpers").rglob("*.py"))
    return [p for p in tests + helpers if "__pycache__" not in p.parts]


def test_resolver_sees_relative_and_absolute_imports() -> None:
    """The checker itself: both spellings of a test-module import are caught."""
    assert not _allowed("tests.test_local")
    assert not _allowed("tests.conftest")
    assert not _allowed("tests.reliability.buildrun")
    assert _allowed("tests.helpers")
    assert _allowed("tests.helpers.local")
    assert _allowed("loralay_build.run.process")
    here = TESTS / "run" / "test_example.py"
    module = _module_name(here)
    assert module == "tests.run.test_example"


def test_no_test_module_imports_another_test_module() -> None:
    """Test modules, and the helpers, import from `tests` only through `tests.helpers`."""
    offenders = [
        f"{path.relative_to(TESTS.parent)}:{line} imports {module}"
        for path in _checked_files()
        for line, module in _imported(path)
        if not _allowed(module)
    ]
    assert not offenders, "\n".join(offenders)
