"""Build of the optional compiled core (`loralay_build.native._native`).

Everything else is declared in pyproject.toml. The extension is optional: when the compiler
is missing or fails, the package installs without it and runs the pure-Python loop.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NATIVE = Extension(
    "loralay_build.native._native",
    sources=["src/loralay_build/native/_native.c"],
    # Same double arithmetic as the Python loop: no fused multiply-add, no fast-math.
    extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math", "-std=c99"],
    optional=True,
)


class OptionalBuildExt(build_ext):
    """build_ext that reports a failed compile and goes on without the extension."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # a missing compiler raises before any extension is tried
            print(f"loralay_build: compiled core not built ({exc}); using pure Python",
                  file=sys.stderr)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            print(f"loralay_build: compiled core not built ({exc}); using pure Python",
                  file=sys.stderr)


setup(
    ext_modules=[] if os.environ.get("LORALAY_NATIVE") == "0" else [NATIVE],
    cmdclass={"build_ext": OptionalBuildExt},
)
