"""ParseSettings: defaults and validation of config sections."""

from __future__ import annotations

import pytest

from loralay_build.errors import ConfigError
from loralay_build.parse import ParseSettings


def test_from_mapping_accepts_known_keys_and_int_for_float() -> None:
    s = ParseSettings.from_mapping({"max_pages": 10, "max_garbage_ratio": 1, "backend": "poppler"})
    assert (s.max_pages, s.max_garbage_ratio, s.backend) == (10, 1.0, "poppler")
    assert s.x_tolerance_ratio == 0.15 and s.reading_order is True


@pytest.mark.parametrize(
    "values",
    [
        {"max_page": 3},
        {"max_pages": "3"},
        {"max_pages": True},
        {"reading_order": 1},
        {"max_pages": 0},
    ],
)
def test_from_mapping_rejects_unknown_keys_and_bad_values(values: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        ParseSettings.from_mapping(values)
