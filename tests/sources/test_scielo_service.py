"""SciELO against a sandbox that behaves like the real ArticleMeta: dates parsed with
`strptime("%Y-%m-%d")` (500 otherwise), history by day, a failing collection; built through
the real `build-corpus scielo` command, twice."""

from __future__ import annotations

import logging
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from loralay_build.cli import main
from loralay_build.sandbox import Sandbox
from loralay_build.state import State
from tests.helpers.cli import write_toml

DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
DATASETS = ("scielo-es", "scielo-pt")


@pytest.fixture
def box() -> Iterator[Sandbox]:
    with Sandbox(docs=12, seed=5) as sandbox:
        yield sandbox


@pytest.fixture
def config(box: Sandbox, tmp_path: Path) -> Path:
    overlay: dict[str, Any] = box.scielo.client_config()
    overlay["run"] = {"executor": "serial", "timeout": 30.0}
    overlay["filters"] = {"enabled": False}
    overlay["http"]["backoff_base"] = 0.05
    return write_toml(tmp_path / "scielo.toml", overlay)


def scielo(out: Path, config: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["scielo", "--out", str(out), "--config", str(config),
                                     *args])


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def _published_rows(folder: Path) -> int:
    return sum(pq.read_metadata(shard).num_rows for shard in folder.glob("*.parquet"))


def _history_from(box: Sandbox) -> list[str]:
    return [dict(p.split("=", 1) for p in e.query.split("&"))["from"]
            for e in box.server.requests("/api/v1/article/history/")]


@pytest.mark.parametrize("endpoint", ["identifiers", "history"])
def test_the_sandbox_answers_500_to_a_date_that_is_not_yyyy_mm_dd(box: Sandbox,
                                                                 endpoint: str) -> None:
    base = f"{box.server.base_url}/api/v1/article/{endpoint}/?collection=scl"
    assert _status(f"{base}&from=2020-01-01") == 200
    assert _status(f"{base}&from=2020-01-01&until=2021-12-31") == 200
    for bad in ("2020", "2020-01", "2026-11-24T10:00:00.123456", "yesterday"):
        assert _status(f"{base}&from={bad}") == 500, bad
    assert _status(f"{base}&until=2020-13-01") == 500


def test_two_runs_publish_both_datasets_and_read_history_by_day(
        box: Sandbox, config: Path, tmp_path: Path) -> None:
    first = scielo(tmp_path, config)
    assert first.exit_code == 0, first.output
    published = {n: (tmp_path / n / "build.json").stat().st_mtime_ns for n in DATASETS}
    added = box.scielo.add_articles(2)
    box.scielo.delete(next(a.pid for a in box.scielo.articles.values() if a.variant == "plain"))
    second = scielo(tmp_path, config)
    assert second.exit_code == 0, second.output
    froms = _history_from(box)
    assert froms and all(DAY.fullmatch(f) for f in froms), froms
    assert all(e.status == 200 for e in box.server.requests("/api/v1/"))
    for name in DATASETS:
        assert _published_rows(tmp_path / name) > 0
        assert (tmp_path / name / "build.json").stat().st_mtime_ns > published[name]
    state = State(tmp_path)
    try:
        done = {r.candidate.source_id for n in DATASETS for r in state.rows(n, ["published"])}
    finally:
        state.close()
    assert set(added) <= done
    # the second dataset's pass took no event the first one had taken
    requested = [e.query for e in box.server.requests("/api/v1/article/") if "code=" in e.query]
    assert len(requested) == len(set(requested))


def test_a_partial_since_is_sent_as_a_full_day_to_every_dataset(
        box: Sandbox, config: Path, tmp_path: Path) -> None:
    result = scielo(tmp_path, config, "--since", "2019")
    assert result.exit_code == 0, result.output
    listed = [e.query for e in box.server.requests("/api/v1/article/identifiers/")]
    assert listed and all("from=2019-01-01&" in q for q in listed)
    state = State(tmp_path)
    try:  # both datasets were built with the date (the second from the crawl's marks)
        assert state.get_mark("scielo", "since:scl") == "2019-01-01"
        assert all(state.rows(n, ["published"]) for n in DATASETS)
    finally:
        state.close()


@pytest.mark.parametrize("bad", ["2020/01", "20", "2020-13", "2021-02-30", "soon"])
def test_a_malformed_since_is_a_usage_error(box: Sandbox, config: Path, tmp_path: Path,
                                            bad: str) -> None:
    result = scielo(tmp_path, config, "--since", bad)
    assert result.exit_code == 2
    assert "--since" in result.output and "YYYY-MM-DD" in result.output
    assert "Traceback" not in result.output
    assert box.server.requests("/api/v1/") == []


def test_a_mark_stored_as_a_timestamp_is_sent_as_its_day(box: Sandbox, config: Path,
                                                        tmp_path: Path) -> None:
    assert scielo(tmp_path, config).exit_code == 0
    state = State(tmp_path)
    try:  # what the previous release stored
        state.set_mark("scielo", "changes:scl", "2026-01-05T10:11:12.131415")
    finally:
        state.close()
    assert scielo(tmp_path, config).exit_code == 0
    assert "2026-01-05" in _history_from(box)


def test_a_failing_collection_does_not_block_the_others(
        box: Sandbox, config: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    box.scielo.broken = {"ecu"}
    with caplog.at_level(logging.INFO):
        result = scielo(tmp_path, config)
    assert result.exit_code == 3, result.output
    for name in DATASETS:  # what the other collections gave was downloaded and published
        assert _published_rows(tmp_path / name) > 0
    errors = [r.getMessage() for r in caplog.records if "discovery of collection ecu" in
              r.getMessage()]
    assert len(errors) == 1  # one listing feeds both datasets
    line = errors[0]
    assert "\n" not in line and line.startswith("scielo-es: ")
    assert f"{box.server.base_url}/api/v1/article/identifiers/?collection=ecu&from=" in line
    assert "HTTP 500" in line and "ServerSelectionTimeoutError" in line
    ecu = [e for e in box.server.requests("/api/v1/article/identifiers/")
           if "collection=ecu" in e.query]
    assert len(ecu) == 3  # one listing: three identical 500s, then it gave up
    summaries = [r.getMessage() for r in caplog.records
                 if r.getMessage().startswith("scielo-pt: ") and "this run" in r.getMessage()]
    assert summaries and "partial, exit 3" in summaries[-1]
    assert "nothing new" not in summaries[-1]


def test_discovery_counts_only_the_dataset_being_built(
        box: Sandbox, config: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        assert scielo(tmp_path, config).exit_code == 0
    line = next(r.getMessage() for r in caplog.records
                if r.getMessage().startswith("discovery:"))
    es = sum(1 for a in box.scielo.articles.values() if a.collection not in ("scl", "prt"))
    seen = int(line.split()[1])
    assert seen < len(box.scielo.articles) and seen <= es + 1, line
    assert "more for other datasets" in line
