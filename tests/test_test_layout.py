"""The tests' own layout: they mirror the package, and share code only through `tests.helpers`.

A test module that imports another test module (or a conftest) runs that module's
module-level code twice under two names and ties two files' private details together;
shared builders live in `tests/helpers/` and fixtures reach tests by injection.

The mirror: `tests/<a>/<b>/` for the package `loralay_build/<a>/<b>/`, a source's tests in
`tests/sources/test_<source>[_topic].py`, a top-level module's in `tests/test_<module>[_topic].py`;
only the cross-cutting suites below stand outside it. What a test and a benchmark both need
lives in the package or in `tests/helpers/`, never in a benchmark script a test imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "src" / "loralay_build"
HELPERS = "tests.helpers"
# Folders of tests/ that hold no test modules of their own.
SUPPORT = {"helpers", "fixtures", "__pycache__"}
# Suites that cut across the package, each with why it stands outside the mirror.
CROSS_CUTTING = {
    "reliability": "hostile input and faults, through every layer",
    "test_imports.py": "the import floors of the whole package",
    "test_test_layout.py": "this layout",
    "test_realdocs.py": "end to end on real PDFs: abstracts, and what `inspect` draws of them",
    "test_dataset_isolation.py": "end to end: two datasets in one output folder",
    "test_source_config.py": "every source's [source] table through the command line",
    "test_source_spread.py": "every source's knowledge kept in its own package",
    "test_terminal_output.py": "which modules may talk to the terminal",
    "test_toy_source.py": "end to end: a source defined outside the package",
    "test_hub_transfer.py": "the upload model of scripts/hub_transfer.py",
}


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


def _module_names(folder: Path) -> set[str]:
    """The modules and packages directly in a package folder."""
    return {p.stem for p in folder.iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}


def _outside_the_mirror(path: Path) -> str | None:
    """Why a test module is outside the mirror, or None when it mirrors the package."""
    rel = path.relative_to(TESTS)
    if rel.parts[0] in CROSS_CUTTING:
        return None
    folders, stem = rel.parts[:-1], path.stem.removeprefix("test_")
    if folders and not (PACKAGE.joinpath(*folders) / "__init__.py").is_file():
        return f"tests/{'/'.join(folders)}/ mirrors no package of loralay_build"
    if folders == ("sources",):
        names = _module_names(PACKAGE / "sources")
    elif not folders:
        names = _module_names(PACKAGE)
    else:
        return None  # inside a mirrored package folder: its tests are named by topic
    if not any(stem == name or stem.startswith(name + "_") for name in names):
        where = "loralay_build/sources" if folders else "loralay_build"
        return f"names no module of {where} (test_<module>[_topic].py)"
    return None


def test_mirror_rule_sees_stray_modules() -> None:
    """The checker itself: a source's test at the top level, a folder without a package, a
    name without a module, all found; the mirrored places pass."""
    assert _outside_the_mirror(TESTS / "test_hal_source.py") is not None
    assert _outside_the_mirror(TESTS / "pdfs" / "test_fonts.py") is not None
    assert _outside_the_mirror(TESTS / "sources" / "test_nowhere.py") is not None
    assert _outside_the_mirror(TESTS / "sources" / "test_hal_e2e.py") is None
    assert _outside_the_mirror(TESTS / "sources" / "pubmed" / "test_jats_views.py") is None
    assert _outside_the_mirror(TESTS / "test_http.py") is None
    assert _outside_the_mirror(TESTS / "reliability" / "test_crash.py") is None


def test_tests_mirror_the_package() -> None:
    """Every test module sits where the package mirror puts it, or in a cross-cutting suite."""
    strays = [f"{path.relative_to(TESTS.parent)}: {why}"
              for path in sorted(TESTS.rglob("test_*.py"))
              if not SUPPORT & set(path.relative_to(TESTS).parts)
              and (why := _outside_the_mirror(path))]
    assert not strays, "\n".join(strays)


def test_no_test_imports_a_benchmark_script() -> None:
    """What a test shares with a benchmark lives in the package or `tests/helpers/`."""
    offenders = [f"{path.relative_to(TESTS.parent)}:{line} imports {module}"
                 for path in _checked_files()
                 for line, module in _imported(path)
                 if module.split(".")[0].startswith("bench_")]
    edits = [str(path.relative_to(TESTS.parent)) for path in _checked_files()
             if "sys.path.insert" in path.read_text(encoding="utf-8")
             and path.relative_to(TESTS).parts[0] not in CROSS_CUTTING]
    assert not offenders + edits, "\n".join(offenders + edits)
