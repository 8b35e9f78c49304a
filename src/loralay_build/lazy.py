"""A package's public names imported from their modules on first use.

Why: a build's parent imports the `parse` and `text` packages for their settings, and their
parser and matcher modules would load PDFium, edlib and CLD2 into it for nothing.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `modules` maps each public name to the
    submodule defining it; a name is imported once, then kept in the package."""

    def attribute(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return attribute
