"""Each source's `[source]` is a declared dataclass: a wrong key or value stops the command with
exit 2 and one line naming the key and the layer, before any request; the per-document part
feeds the processing hash exactly as before, so existing builds keep their work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loralay_build.sandbox import Sandbox
from loralay_build.sources import SOURCES, load_settings
from tests.helpers.cli_runner import FAST, invoke_cli, write_config

# Values the sources accepted before their configuration was typed: each one either turned a
# check off, rejected every document, or failed only once discovery had started.
BAD_VALUES = [
    ("hal", "language_check", "bodyy", "must be one of none, abstract, body"),
    ("hal", "abstract_format", "htm", "must be one of plain, html, latex, markdown"),
    ("hal", "rows", "many", "expected an integer"),
    ("hal", "rows", 0, "must be at least 1"),
    ("hal", "cleaners", ["running_header"], "[source] cleaners = 'running_header'"),
    ("scielo", "via", "sitee", "must be one of api, site"),
    ("scielo", "collections", ["xyz"], "unknown SciELO collection(s) xyz"),
    ("koreascience", "last_year", 2001, "last_year = 2001: must be at least"),
    ("koreascience", "timeout", 0, "timeout = 0.0: must be above 0"),
    ("arxiv", "oai", "yes", "expected a boolean"),
    ("arxiv", "categories", [1, 2], "expected a string"),
    ("pubmed", "citation_context", -1, "must be at least 0"),
    ("pubmed", "selection", "bmcc", "selection = 'bmcc': unknown"),
    ("pubmed", "views", ["sumpubmedd"], "must be one of sumpubmed, citations"),
    ("openreview", "select", ["acepted"], "select = 'acepted': must be one of"),
    ("openreview", "page_size", 5000, "must be at most 1000"),
    ("eurlex", "languages", "en,xx", "unknown EUR-Lex language(s) ['xx']"),
    ("eurlex", "waf_log", "loud", "waf_log = 'loud'"),
    ("eurlex", "formats", ["pdf", "doc"], "formats = 'doc': must be one of pdf, xhtml"),
    ("eurlex", "formats", [], "formats = []: give pdf, xhtml or both"),
    ("eurlex", "dedup_threshold", 1.5, "dedup_threshold = 1.5"),
    ("local", "allow_outside", "yes", "expected a boolean"),
]
UNKNOWN_KEYS = [(name, "serch_url") for name in sorted(SOURCES)]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(docs=5, faults=False) as box:
        yield box


def _overlay(sandbox: Sandbox, source: str) -> dict[str, Any]:
    if source == "local":
        return {}
    return next(job.overrides for job in sandbox.demo_builds() if job.source == source)


def _refused(sandbox: Sandbox, tmp_path: Path, source: str, key: str, value: Any) -> str:
    """The one line of a build whose --config sets `[source] key = value`; nothing written,
    nothing asked."""
    before = len(sandbox.server.requests())
    config = write_config(tmp_path / "bad.toml", _overlay(sandbox, source), FAST,
                          {"source": {key: value}})
    out = tmp_path / "out"
    args = [source, "--out", str(out), "--config", str(config)]
    if source == "local":
        manifest = tmp_path / "m.jsonl"
        manifest.write_text("")
        args += ["--input", str(manifest)]
    result = invoke_cli(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert len(sandbox.server.requests()) == before  # no request reached the sandbox
    assert not out.exists()
    return lines[0]


@pytest.mark.parametrize(("source", "key", "value", "message"), BAD_VALUES)
def test_a_bad_source_value_stops_the_command_before_any_request(
        sandbox: Sandbox, tmp_path: Path, source: str, key: str, value: Any,
        message: str) -> None:
    line = _refused(sandbox, tmp_path, source, key, value)
    assert message in line and f"(set by --config {tmp_path / 'bad.toml'})" in line, line


@pytest.mark.parametrize(("source", "key"), UNKNOWN_KEYS)
def test_an_unknown_source_key_stops_the_command_before_any_request(
        sandbox: Sandbox, tmp_path: Path, source: str, key: str) -> None:
    line = _refused(sandbox, tmp_path, source, key, "x")
    assert f"unknown [source] key(s) for {source}: {key}" in line, line


def test_an_environment_variable_is_named_when_it_sets_the_bad_value() -> None:
    with pytest.raises(Exception, match=r"\[source\] waf_retries = -1: must be at least 0 "
                       r"\(set by environment variable LORALAY_SOURCE__WAF_RETRIES\)$"):
        load_settings("eurlex", environ={"LORALAY_SOURCE__WAF_RETRIES": "-1"})


# The processing hash of each shipped configuration as computed before the configuration was
# typed: a build made then must find its work keys unchanged, so nothing is processed again.
SHIPPED_HASHES = {
    "arxiv": "82c9cabb8069fa6c", "eurlex": "6d46194cb0646332", "hal": "c2e243091e008d30",
    "koreascience": "f0dc461636743b94", "local": "c9eb27477de932ea",
    "openreview": "ad1e9f10dc388e0c", "pubmed": "4481aa22840a61d5",
    "scielo": "91eeeac34fda9214",
}
HASH_SCRIPT = """
import json
from loralay_build.sources import SOURCES, load_settings
print(json.dumps({name: load_settings(name, environ={}).processing_hash() for name in SOURCES}))
"""


@pytest.mark.parametrize("seed", ["1", "2"])
def test_the_processing_hash_of_every_shipped_config_is_unchanged_in_any_process(
        seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    found = subprocess.run([sys.executable, "-c", HASH_SCRIPT], capture_output=True, text=True,
                           check=True, env=env).stdout
    assert json.loads(found) == SHIPPED_HASHES


def test_only_per_document_options_change_the_processing_hash() -> None:
    base = load_settings("hal", environ={})
    listing = load_settings("hal", environ={}, overrides={"source": {"rows": 7}})
    check = load_settings("hal", environ={}, overrides={"source": {"language_check": "body"}})
    assert listing.processing_hash() == base.processing_hash()
    assert check.processing_hash() != base.processing_hash()
    assert check.source.document_options().language_check == "body"


def test_every_source_command_has_the_common_options_once_then_its_own() -> None:
    from loralay_build.cli import main

    common = [p.name for p in main.commands["koreascience"].params]  # declares none of its own
    for name in SOURCES:
        names = [p.name for p in main.commands[name].params]
        assert names[:len(common)] == common, name
        assert not set(names[len(common):]) & set(common), name


def test_a_crawl_feeding_several_datasets_lists_them_itself() -> None:
    from loralay_build.sources.eurlex import EurlexSource
    from loralay_build.sources.scielo import SciELOSource

    fan_out = SciELOSource.command.fan_out
    assert fan_out is not None
    plans = fan_out(load_settings("scielo", environ={}).source, "sci", "2024-01-01")
    assert [(p.dataset, p.since) for p in plans] == [("sci-es", "2024-01-01"),
                                                     ("sci-pt", "2024-01-01")]
    assert plans[0].source_keys == {"datasets": {"es": "sci-es", "pt": "sci-pt"}}
    fan_out = EurlexSource.command.fan_out
    assert fan_out is not None
    keys = EurlexSource.command.keys({"languages": "fr,en", "split_preset": None}, "lex")
    settings = load_settings("eurlex", environ={}, overrides={"source": keys})
    plans = fan_out(settings.source, "lex", "2024-01-01")
    # Only the first build lists the crawl from --since; the others reuse that listing.
    assert [(p.dataset, p.since) for p in plans] == [("lex-fr", "2024-01-01"), ("lex-en", None)]
