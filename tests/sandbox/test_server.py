"""The fakes' throttling wait is a setting: real services' 1 second by default, what
LORALAY_SANDBOX_RETRY_AFTER says otherwise (the suite says 0), and a clear error for a value
that is not whole seconds."""

from __future__ import annotations

import pytest

from loralay_build.http import parse_retry_after
from loralay_build.sandbox.server import RETRY_AFTER_ENV, retry_after


def test_retry_after_is_one_second_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RETRY_AFTER_ENV, raising=False)
    assert retry_after() == "1"
    monkeypatch.setenv(RETRY_AFTER_ENV, "0")
    assert retry_after() == "0" and parse_retry_after(retry_after()) == 0.0
    monkeypatch.setenv(RETRY_AFTER_ENV, "7")
    assert parse_retry_after(retry_after()) == 7.0


def test_a_retry_after_that_is_not_whole_seconds_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RETRY_AFTER_ENV, "0.5")
    with pytest.raises(ValueError, match=RETRY_AFTER_ENV):
        retry_after()


def test_the_suite_runs_the_fakes_without_the_wait() -> None:
    """Set by the suite's conftest for every test (and the builds it starts)."""
    assert retry_after() == "0"
