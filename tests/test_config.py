from __future__ import annotations

from pathlib import Path

import pytest

from loralay_build.config import env_overrides, load_settings
from loralay_build.errors import ConfigError


def test_builtin_hal_config_has_the_paper_selection() -> None:
    settings = load_settings("hal", environ={})
    assert settings.source["filters"] == [
        "docType_s:(ART OR COMM)", "language_s:fr", "submitType_s:file",
    ]
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
    assert settings.source["search_url"] == "http://file/"
    assert settings.source["rows"] == 20
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
