"""Workers run with the allocator `[run] allocator` names when it is installed, and the
programs they start do not inherit it; without it they run with the C library's malloc."""

from __future__ import annotations

import logging
import os
import sysconfig
from pathlib import Path

import pytest

from loralay_build.config import RunSettings
from loralay_build.run import allocator
from loralay_build.run.isolation import IsolatedPool, Limits
from tests.helpers.workfuncs import libraries

MIMALLOC = allocator.resolve(RunSettings().allocator)
needs_mimalloc = pytest.mark.skipif(not MIMALLOC, reason="mimalloc is not installed")


def _run_in_worker(allocator_setting: str, library: str) -> tuple[bool, str | None]:
    with IsolatedPool(libraries, 1, Limits(60.0, 2 << 30, 10, allocator_setting)) as pool:
        [(_, result)] = list(pool.imap_unordered([library]))
    assert isinstance(result, tuple)
    return result


@needs_mimalloc
def test_workers_run_with_the_allocator_and_give_their_programs_the_build_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    assert _run_in_worker(RunSettings().allocator, MIMALLOC) == (True, None)
    assert "LD_PRELOAD" not in os.environ  # the parent's environment is left as it was


@needs_mimalloc
def test_a_preload_of_the_build_stays_in_the_workers_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LD_PRELOAD", MIMALLOC)  # the user's own preload: the same library
    assert _run_in_worker(MIMALLOC, MIMALLOC) == (True, MIMALLOC)
    assert os.environ["LD_PRELOAD"] == MIMALLOC


@needs_mimalloc
def test_without_an_allocator_workers_use_the_c_librarys_malloc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    assert _run_in_worker("", MIMALLOC) == (False, None)


def test_a_library_is_found_where_the_loader_looks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    library = tmp_path / "libfake.so.1"
    library.write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/nonexistent:{tmp_path}")
    assert allocator.resolve("libfake.so.1") == str(library)
    assert allocator.resolve(str(library)) == str(library)
    with caplog.at_level(logging.DEBUG, logger=allocator.__name__):
        assert allocator.resolve("libabsent.so.9") == ""
        assert allocator.resolve(str(tmp_path / "libabsent.so.9")) == ""
    levels = [r.levelno for r in caplog.records]
    assert levels == [logging.DEBUG, logging.WARNING]  # only a wrong path is a mistake
    assert allocator.resolve("") == ""


@needs_mimalloc
def test_a_python_that_does_not_know_its_multiarch_folder_finds_the_library_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: None)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    found = allocator.resolve(RunSettings().allocator)
    assert found and os.path.realpath(found) == os.path.realpath(MIMALLOC)


@pytest.mark.parametrize(("before", "after"), [
    ("/lib/a.so", None),
    ("/lib/a.so:/lib/b.so", "/lib/b.so"),
    ("/lib/a.so /lib/b.so", "/lib/b.so"),
    ("/lib/b.so:/lib/a.so:/lib/a.so", "/lib/b.so:/lib/a.so"),
    ("/lib/b.so", "/lib/b.so"),
])
def test_unloading_takes_out_one_preload_of_the_library(
    monkeypatch: pytest.MonkeyPatch, before: str, after: str | None,
) -> None:
    monkeypatch.setenv("LD_PRELOAD", before)
    allocator.unload_from_environment("/lib/a.so")
    assert os.environ.get("LD_PRELOAD") == after


def test_preloading_puts_the_library_first_and_then_restores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LD_PRELOAD", "/lib/b.so")
    with allocator.preloaded("/lib/a.so"):
        assert os.environ["LD_PRELOAD"] == "/lib/a.so:/lib/b.so"
    assert os.environ["LD_PRELOAD"] == "/lib/b.so"
    monkeypatch.delenv("LD_PRELOAD")
    with allocator.preloaded("/lib/a.so"):
        assert os.environ["LD_PRELOAD"] == "/lib/a.so"
    assert "LD_PRELOAD" not in os.environ
