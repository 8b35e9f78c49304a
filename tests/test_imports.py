"""The package's import graph, read from the source: no module depends on itself through
others (a circle makes import order matter and the modules one unit to change), and every
import runs down the floors of the package, so each floor can be read, tested and changed
with only the floors below it in mind."""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import loralay_build
from tests.helpers.local import make_corpus, write_manifest

PACKAGE = Path(loralay_build.__file__).parent
NAME = PACKAGE.name


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (a compiled module by
    its stub)."""
    out = {}
    for path in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyi")]:
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The package's modules one import statement names: `from a import b` is `a.b` when
    `b` is a module, else `a`."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:  # relative: resolved against the importing module's package
        package = module.split(".")
        if MODULES[module].name != "__init__.py":
            package.pop()
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, *([node.module] if node.module else [])])
    for alias in node.names:
        yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base


@functools.cache
def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


def imports(module: str) -> Iterator[tuple[str, ast.AST]]:
    """(imported module, the import statement) for every import anywhere in the module's
    file: at the top, inside functions and under TYPE_CHECKING alike."""
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in _imported(module, node):
                if name in MODULES and name != module:
                    yield name, node


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_the_package() -> None:
    graph = {m: {name for name, _ in imports(m)} for m in MODULES}
    assert "loralay_build.run.pipeline" in graph
    assert "loralay_build.run.executors" in graph["loralay_build.run.pipeline"]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circles() -> None:
    graph = {m: {name for name, _ in imports(m)} for m in MODULES}
    assert circles(graph) == []


# The package as a house, bottom floor first. A room is a top-level module or package
# ("__init__" is the package's own module), so a new module joins its package's room; a module
# may import its own room and the rooms of lower floors, never a room beside it or above.
FLOORS: list[set[str]] = [
    {"__init__", "blobs", "deadline", "digests", "errors", "estimates", "http_pool", "ids",
     "layout", "lazy", "native", "progress", "views"},
    {"bundle", "columns", "dates", "gray_png", "licences", "nfc", "records", "safexml",
     "tables", "textfile", "writable"},
    {"identity"},
    {"parse", "state", "structure", "text"},
    {"source_table"},
    {"config"},
    {"corpus", "http", "images"},
    {"fetch"},
    {"sources"},
    {"cli_options", "inspect", "run", "sandbox"},
    {"cli"},
    {"docgen"},  # the documentation written from every floor, the command line included
]
FLOOR = {room: level for level, rooms in enumerate(FLOORS) for room in rooms}


def room(module: str) -> str:
    """The top-level module or package of the package that `module` is or lies in."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_room_is_on_one_floor() -> None:
    assert sum(len(rooms) for rooms in FLOORS) == len(FLOOR)
    assert sorted({room(m) for m in MODULES} - FLOOR.keys()) == []
    assert room(f"{NAME}.sources.pubmed.body") == "sources" and room(NAME) == "__init__"


def test_no_import_runs_up_or_across_a_floor() -> None:
    """Imports under TYPE_CHECKING and inside functions count: each ties the rooms too."""
    found = [f"{module} (floor {FLOOR[room(module)]}) imports {name} "
             f"(floor {FLOOR[room(name)]})"
             for module in MODULES for name, _ in imports(module)
             if room(name) != room(module) and FLOOR[room(name)] >= FLOOR[room(module)]]
    assert found == []


SANDBOX = f"{NAME}.sandbox"


def _within(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _functions(tree: ast.AST) -> dict[ast.AST, str]:
    """Each node inside a function -> the name of its outermost enclosing function."""
    inside: dict[ast.AST, str] = {}
    for top in ast.walk(tree):
        if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef) and top not in inside:
            for node in ast.walk(top):
                inside.setdefault(node, top.name)
    return inside


def test_production_code_never_imports_the_sandbox() -> None:
    """The sandbox may use the production package; the other way only `demo` may, when
    it runs (so an installed CLI never loads the fakes)."""
    found = []
    for module in MODULES:
        if _within(module, SANDBOX):
            continue
        inside = _functions(_tree(module))
        for name, node in imports(module):
            if not _within(name, SANDBOX):
                continue
            where = inside.get(node)
            if (module, where) != (f"{NAME}.cli", "demo"):
                found.append(f"{module} ({where or 'module level'}) imports {name}")
    assert found == []


def test_loading_the_cli_loads_no_sandbox_module() -> None:
    code = ("import sys, loralay_build.cli, loralay_build.run.pipeline, loralay_build.sources; "
            "print([m for m in sys.modules if m.startswith('loralay_build.sandbox')])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_nothing_below_the_driver_imports_it() -> None:
    """Stages, stores and sources are used by `run/` and `cli.py`, never the other way
    (`docgen`, above the command line, documents it)."""
    driver = (f"{NAME}.cli", f"{NAME}.run")
    found = [f"{module} imports {name}" for module in MODULES
             if not _within(module, *driver, f"{NAME}.docgen") for name, _ in imports(module)
             if _within(name, *driver)]
    assert found == []


WORKER_ONLY = ("pypdfium2", "PIL", "edlib", "pycld2", f"{NAME}.run.process", f"{NAME}.parse.api",
               f"{NAME}.text.match", f"{NAME}.images")


def test_a_build_parent_loads_no_worker_engine() -> None:
    """The parent of a build sends tasks and writes rows: the parser, the matcher and their
    engines load in the workers (through the pool's fork server) only."""
    code = ("import sys, loralay_build.cli, loralay_build.run.pipeline, "
            "loralay_build.run.executors, loralay_build.run.process_stage, "
            "loralay_build.run.publish_stage; "
            f"print(sorted(m for m in {WORKER_ONLY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_a_local_build_under_cron_loads_no_network_stack_or_bars(tmp_path: Path) -> None:
    """A build from local files makes no request, so its parent never imports urllib3 (the
    HTTP client makes its connections on its first request); without a terminal it draws no
    bar, so tqdm is never loaded either."""
    write_manifest(tmp_path / "docs.jsonl", make_corpus(tmp_path, 1))
    argv = ["local", "--input", str(tmp_path / "docs.jsonl"), "--out", str(tmp_path / "out"),
            "--workers", "1", "--no-filter", "-q"]
    code = ("import sys\nfrom loralay_build.cli import main\n"
            f"try:\n    main({argv!r}, standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'urllib3', 'tqdm'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=240)
    assert (tmp_path / "out" / "local" / "build.json").exists(), done.stderr
    assert done.stdout.strip() == "[]"


def test_numpy_starts_no_blas_threads_unless_asked() -> None:
    """Importing the command leaves numpy's OpenBLAS at one thread; a user's setting wins."""
    code = ("import os, loralay_build.cli, numpy; "
            "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    runs = {}
    for given in (None, "4"):
        run_env = env if given is None else {**env, "OPENBLAS_NUM_THREADS": given}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env=run_env)
        value, threads = done.stdout.split()
        runs[given] = (value, int(threads))
    assert runs[None][0] == "1" and runs["4"][0] == "4"
    assert runs[None][1] <= runs["4"][1]
