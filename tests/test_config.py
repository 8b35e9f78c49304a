from __future__ import annotations

from pathlib import Path

import pytest

from loralay_build.config import env_overrides
from loralay_build.errors import ConfigError
from loralay_build.sources import load_settings
from loralay_build.sources.hal import HalConfig
from tests.helpers.cli import run_cli_in_process


def test_builtin_hal_config_has_the_paper_selection() -> None:
    settings = load_settings("hal", environ={})
    assert isinstance(settings.source, HalConfig)
    assert settings.source.filters == (
        "docType_s:(ART OR COMM)", "language_s:fr", "submitType_s:file",
    )
    assert settings.http.min_interval >= 1.0
    assert (settings.split.train, settings.split.validation, settings.split.test) == (
        0.94, 0.03, 0.03,
    )


def test_precedence_flag_over_env_over_file(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[http]\nmin_interval = 5\n[source]\nsearch_url = "http://file/"\n')
    env = {"LORALAY_HTTP__MIN_INTERVAL": "7.5", "LORALAY_SOURCE__ROWS": "20"}
    settings = load_settings("hal", config, environ=env)
    assert settings.http.min_interval == 7.5
    assert isinstance(settings.source, HalConfig)
    assert settings.source.search_url == "http://file/"
    assert settings.source.rows == 20
    flagged = load_settings("hal", config, environ=env, overrides={"http": {"min_interval": 2}})
    assert flagged.http.min_interval == 2.0


def test_env_values_parse_as_toml_or_fall_back_to_strings() -> None:
    parsed = env_overrides({
        "LORALAY_RUN__WORKERS": "3",
        "LORALAY_SOURCE__SEARCH_URL": "http://127.0.0.1:9/search/",
        "LORALAY_HTTP__ALLOWED_HOSTS": '["a.org", "*.b.org"]',
        "OTHER": "x",
    })
    assert parsed == {
        "run": {"workers": 3},
        "source": {"search_url": "http://127.0.0.1:9/search/"},
        "http": {"allowed_hosts": ["a.org", "*.b.org"]},
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[http]\nnot_a_key = 1\n", "unknown key"),
        ("[http]\nmin_interval = 'fast'\n", "expected float"),
        ("[nonsense]\na = 1\n", "unknown section"),
        ("[split]\ntrain = 0.5\n", "sum to 1"),
    ],
)
def test_invalid_config_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings("hal", config, environ={})


def test_processing_hash_ignores_politeness_but_not_matching() -> None:
    base = load_settings("hal", environ={})
    slower = load_settings("hal", environ={}, overrides={"http": {"min_interval": 9}})
    faithful = load_settings("hal", environ={}, overrides={"match": {"mode": "faithful"}})
    assert base.processing_hash() == slower.processing_hash()
    assert base.processing_hash() != faithful.processing_hash()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[source]\ncleaners = "running_headers"\n', "cleaners = 'running_headers'"),
        ('[source]\ncleaners = ["running_header"]\n', "running_headers"),
        ("[run]\ntimeout = -1\n", "[run] timeout = -1.0: must be above 0"),
        ("[run]\nexecutor = \"threads\"\n", "[run] executor = 'threads'"),
        ("[http]\nmin_interval = -5\n", "[http] min_interval = -5.0: must be at least 0"),
        ("[http]\nhost_intervals = { \"a.org\" = -1 }\n", "host_intervals 'a.org'"),
        ("[filters]\nmax_pages_percentile = 120\n", "must be at most 100"),
        ("[output]\nzstd_level = 0\n", "[output] zstd_level"),
        ('[source]\nlanguage_check = "bodyy"\n', "language_check = 'bodyy': must be one of"),
        ('[source]\nabstract_format = "htm"\n', "abstract_format = 'htm': must be one of"),
        ("[source]\nrows = \"many\"\n", "[source] rows = 'many': expected an integer"),
    ],
)
def test_values_out_of_type_or_range_name_the_file(tmp_path: Path, text: str,
                                                    message: str) -> None:
    """Each of these was accepted, then rejected every document (or was silently ignored)."""
    config = tmp_path / "bad.toml"
    config.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings("hal", config, environ={})
    assert message in str(caught.value)
    assert str(caught.value).endswith(f"(set by --config {config})")


def test_a_refused_value_names_the_environment_variable_or_flag(tmp_path: Path) -> None:
    config = tmp_path / "fine.toml"
    config.write_text("[http]\nmin_interval = 2\n")
    env = {"LORALAY_HTTP__MIN_INTERVAL": "-5", "LORALAY_RUN__WORKERS": "2"}
    with pytest.raises(ConfigError, match=r"\(set by environment variable "
                       r"LORALAY_HTTP__MIN_INTERVAL\)$"):
        load_settings("hal", config, environ=env)
    with pytest.raises(ConfigError, match=r"\(set by command-line options\)$"):
        load_settings("hal", config, environ={}, overrides={"run": {"timeout": -1}})


def test_a_bad_value_stops_the_build_before_any_work(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[run]\ntimeout = -1\n")
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("")
    out = tmp_path / "out"
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--config",
                                str(config))
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "[run] timeout" in line and str(config) in line
    assert not out.exists()


@pytest.mark.parametrize(("source", "key", "value"), [
    ("scielo", "via", "sitee"), ("eurlex", "split_preset", "eurlexsum"),
    ("arxiv", "version", "newest"), ("openreview", "api", "v3"),
    ("pubmed", "citation_unit", "sentences"),
])
def test_a_typo_in_a_source_choice_is_refused(source: str, key: str, value: str) -> None:
    variable = f"LORALAY_SOURCE__{key.upper()}"
    with pytest.raises(ConfigError, match=rf"\[source\] {key} = '{value}': must be one of .*"
                       rf"\(set by environment variable {variable}\)$"):
        load_settings(source, environ={variable: value})
