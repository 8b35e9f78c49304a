"""How far each source spreads: the production files outside its own package that name it.

Usage: python scripts/source_spread.py [-v]

A source should be self-contained: only the two registries (`sources/__init__.py` and
`sandbox/__init__.py`) name it outside `sources/<name>/` (or `sources/<name>.py`) and its
sandbox fake (`sandbox/<name>*.py`). For every source of the registry this counts the other
files under `src/loralay_build` whose code names it, prints a table (with -v, the files and
the first names found) and exits 1 when a count is above `LIMIT`.

Matching rule. Only code is read, through `ast`: identifiers (names, attributes, definitions,
arguments, keywords, imports) and string constants; docstrings and comments are not code.
An identifier is split into words at `_`, `.` and lower-to-upper case changes (`HalSource`
is "hal source", `eurlex_docs` is "eurlex docs"); a string is read as it is. Either names a
source when one of its spellings (`SPELLINGS`, case ignored, `-`, `_` or a space allowed
where the spelling has a break) stands as a whole word, not inside a longer word. `local`
is an ordinary English word and also the name of an executor and of Ray's private instance,
so that source is named only by its module or class (`LocalSource`, `sources.local`, in an
identifier or a string).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from loralay_build.sources import SOURCES

ROOT = Path(__file__).resolve().parent.parent / "src" / "loralay_build"
LIMIT = 2  # the two registries
# The spellings of each source in code, parts separated by a space where a break may be.
SPELLINGS: dict[str, tuple[str, ...]] = {
    "arxiv": ("ar xiv",),
    "eurlex": ("eur lex", "celex"),
    "hal": ("hal",),
    "koreascience": ("korea science", "kci"),
    "openreview": ("open review",),
    "pubmed": ("pub med", "pmc"),
    "scielo": ("sci elo",),
}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@cache
def pattern(spellings: tuple[str, ...]) -> re.Pattern[str]:
    """A whole-word pattern of the spellings, a break matching `-`, `_`, a space or nothing."""
    parts = ["[-_ ]?".join(map(re.escape, s.split())) for s in spellings]
    return re.compile(rf"(?<![a-z0-9])(?:{'|'.join(parts)})(?![a-z0-9])", re.IGNORECASE)


def words(identifier: str) -> str:
    """An identifier as space-separated words."""
    return _CAMEL.sub(" ", identifier).replace("_", " ").replace(".", " ")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                found.add(id(body[0].value))
    return found


def code_tokens(source: str) -> Iterator[tuple[str, str]]:
    """("id", identifier) and ("str", constant) of a module's code."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield "id", node.id
        elif isinstance(node, ast.Attribute):
            yield "id", node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield "id", node.name
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            yield "id", node.arg
        elif isinstance(node, ast.alias):
            yield "id", node.name
            if node.asname:
                yield "id", node.asname
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield "id", node.module
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in skip:
            yield "str", node.value


def names(source: str, kind: str, text: str) -> bool:
    """Whether one token of code names `source` (see the module's matching rule)."""
    if source == "local":
        return text == "LocalSource" or words(text).split()[-2:] == ["sources", "local"]
    found = pattern(SPELLINGS.get(source, (source,)))
    return bool(found.search(words(text) if kind == "id" else text))


def own(source: str, path: Path) -> bool:
    """Whether `path` is the source's package (or module) or its sandbox fake."""
    rel = path.relative_to(ROOT).parts
    return (rel[:2] in {("sources", source), ("sources", f"{source}.py")}
            or (rel[0] == "sandbox" and len(rel) == 2 and rel[1].startswith(source)))


@cache
def file_tokens(path: Path) -> frozenset[tuple[str, str]]:
    """The distinct code tokens of a file, read once for every source."""
    return frozenset(code_tokens(path.read_text(encoding="utf-8")))


def spread(source: str) -> dict[str, list[str]]:
    """The files outside the source's own that name it, with the tokens that do."""
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        if own(source, path):
            continue
        hits = sorted({text for kind, text in file_tokens(path) if names(source, kind, text)})
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    return found


def main(verbose: bool) -> int:
    """Print the table; 1 when a source is named by more files than the registries."""
    worst = 0
    print(f"{'source':<14} files")
    for source in sorted(SOURCES):
        found = spread(source)
        worst = max(worst, len(found))
        print(f"{source:<14} {len(found)}")
        if verbose:
            for path, hits in found.items():
                print(f"    {path}: {', '.join(repr(h[:40]) for h in hits[:4])}")
    return 1 if worst > LIMIT else 0


if __name__ == "__main__":
    sys.exit(main("-v" in sys.argv[1:]))
