"""Which implementation of the hot loops runs: the compiled core or Python.

The compiled core (`loralay_build.native._native`, built from `_native.c` when a C compiler
is available at install time) and the Python code give identical output; `LORALAY_NATIVE=0`
forces the Python code, for comparison and for testing the path a compiler-less install runs.
This package sits on the bottom floor and imports nothing of the project, so that any module
(records, nfc, parse, text) can ask for the core without importing the others.
"""

from __future__ import annotations

import os
from types import ModuleType

# "0" makes the build use the Python code even when the compiled core is built. Kept here,
# not in config, so that asking for the core never imports the configuration.
NATIVE_ENV = "LORALAY_NATIVE"


def native_module() -> ModuleType | None:
    """The compiled core, or None when it is not built or disabled by the environment."""
    if os.environ.get(NATIVE_ENV, "1") == "0":
        return None
    try:
        from loralay_build.native import _native
    except ImportError:
        return None
    return _native


def core_name() -> str:
    """"native" or "python": the path PDF parsing takes in this process."""
    return "native" if native_module() is not None else "python"
