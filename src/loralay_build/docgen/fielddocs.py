"""What a settings dataclass says about each of its fields, read from its source: the
comments and docstrings beside a field (its meaning) and the checks of `__post_init__` (its
range).

Why from the source: the field comments are where the code already documents a key, and the
checks are what refuses a value; reading both keeps the reference equal to the code without a
second declaration of either.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import sys
import textwrap
import tokenize
from typing import Any

_OPPOSITE = {ast.Lt: "≥", ast.LtE: ">", ast.Gt: "≤", ast.GtE: "<"}  # the refused side
_ALLOWED = {ast.Lt: "<", ast.LtE: "≤", ast.Gt: ">", ast.GtE: "≥"}  # the accepted side
_FLIP = {"<": ">", "≤": "≥", ">": "<", "≥": "≤"}


def _own_classes(cls: type) -> list[type]:
    """The dataclasses `cls` is made of, base first (an enum is its own class alone)."""
    if not dataclasses.is_dataclass(cls):
        return [cls]
    return [k for k in reversed(cls.__mro__) if dataclasses.is_dataclass(k)]


def _class_tree(klass: type) -> tuple[ast.ClassDef, list[str]]:
    lines, _ = inspect.getsourcelines(klass)
    source = textwrap.dedent("".join(lines))
    tree = ast.parse(source).body[0]
    assert isinstance(tree, ast.ClassDef)
    return tree, source.splitlines()


def _comments(source_lines: list[str]) -> dict[int, str]:
    """Line number (1-based) -> the text of the comment on that line."""
    found: dict[int, str] = {}
    tokens = tokenize.generate_tokens(io.StringIO("\n".join(source_lines) + "\n").readline)
    for token in tokens:
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string.lstrip("#").strip()
    return found


def field_docs(cls: type) -> dict[str, str]:
    """Field (or enum member) name -> its meaning: the comment lines right above it, the
    comment at the end of its line and the docstring right below it, joined. A subclass's
    words win."""
    docs: dict[str, str] = {}
    for klass in _own_classes(cls):
        tree, lines = _class_tree(klass)
        comments = _comments(lines)
        body = tree.body
        for index, node in enumerate(body):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                name = node.target.id
            elif (isinstance(node, ast.Assign) and len(node.targets) == 1
                  and isinstance(node.targets[0], ast.Name)):
                name = node.targets[0].id  # an enum's member
            else:
                continue
            parts: list[str] = []
            above: list[str] = []
            line = node.lineno - 1
            while line >= 1 and lines[line - 1].strip().startswith("#"):
                above.insert(0, comments[line])
                line -= 1
            parts.extend(above)
            last = node.end_lineno or node.lineno
            parts.extend(comments[n] for n in range(node.lineno, last + 1)
                         if n in comments)
            following = body[index + 1] if index + 1 < len(body) else None
            if (isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                parts.append(" ".join(following.value.value.split()))
            text = " ".join(part for part in parts if part)
            if text:
                docs[name] = text
    return docs


def field_ranges(cls: type) -> dict[str, list[str]]:
    """Field name -> what its checks accept ("≥ 1", "one of a, b"), read from the
    `check_ranges` and `check_choice` calls and the `if …: raise` tests of `__post_init__`."""
    ranges: dict[str, list[str]] = {}
    for klass in _own_classes(cls):
        tree, _ = _class_tree(klass)
        namespace = vars(sys.modules[klass.__module__])
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "__post_init__":
                for found in ast.walk(node):
                    for name, text in _read_check(found, namespace):
                        if text not in ranges.setdefault(name, []):
                            ranges[name].append(text)
    return ranges


def _self_field(node: ast.expr) -> str | None:
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "self"):
        return node.attr
    return None


def _bound(node: ast.expr, namespace: dict[str, Any]) -> str:
    """A bound as the reference writes it: a number, a constant's value, or another key."""
    name = _self_field(node)
    if name is not None:
        return f"`{name}`"
    value = eval(compile(ast.Expression(node), "<check>", "eval"), dict(namespace))
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def _choices(node: ast.expr, namespace: dict[str, Any]) -> str:
    other = _self_field(node)
    if other is not None:
        return f"one of the names of `{other}`"
    values = eval(compile(ast.Expression(node), "<check>", "eval"), dict(namespace))
    return "one of " + ", ".join(f"`{value}`" for value in values)


def _read_check(node: ast.AST, namespace: dict[str, Any]) -> list[tuple[str, str]]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "check_ranges":
            words = {"at_least": "≥", "above": ">", "at_most": "≤"}
            found = []
            for keyword in node.keywords:
                if keyword.arg in words and isinstance(keyword.value, ast.Dict):
                    for key, value in zip(keyword.value.keys, keyword.value.values,
                                          strict=True):
                        if isinstance(key, ast.Constant):
                            found.append((str(key.value),
                                          f"{words[keyword.arg]} {_bound(value, namespace)}"))
            return found
        if node.func.id == "check_choice" and len(node.args) == 4:
            key = node.args[2]
            if isinstance(key, ast.Constant):
                return [(str(key.value), _choices(node.args[3], namespace))]
    if isinstance(node, ast.If) and any(isinstance(s, ast.Raise) for s in node.body):
        return _refused(node.test, namespace)
    return []


def _refused(test: ast.expr, namespace: dict[str, Any]) -> list[tuple[str, str]]:
    """What an `if <refused>: raise` accepts, for the shapes the settings use."""
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.Or):
            return [found for value in test.values for found in _refused(value, namespace)]
        # `x is not None and not a <= self.x <= b`: the range applies when the key is set
        return [found for value in test.values[1:] for found in _refused(value, namespace)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _accepted(test.operand, namespace)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        name = _self_field(test.left)
        op = type(test.ops[0])
        if name is not None and isinstance(test.ops[0], ast.NotIn):
            return [(name, _choices(test.comparators[0], namespace))]
        if name is not None and op in _OPPOSITE:
            return [(name, f"{_OPPOSITE[op]} {_bound(test.comparators[0], namespace)}")]
    return []


def _accepted(test: ast.expr, namespace: dict[str, Any]) -> list[tuple[str, str]]:
    """What `low <= self.x <= high` accepts, as the two bounds."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 2:
        return []
    low, middle, high = test.left, test.comparators[0], test.comparators[1]
    name = _self_field(middle)
    first, second = type(test.ops[0]), type(test.ops[1])
    if name is None or first not in _ALLOWED or second not in _ALLOWED:
        return []
    return [(name, f"{_FLIP[_ALLOWED[first]]} {_bound(low, namespace)}"),
            (name, f"{_ALLOWED[second]} {_bound(high, namespace)}")]
