"""`--since` as the one date format every source sends: YYYY-MM-DD.

Services parse dates strictly (SciELO's ArticleMeta answers 500 to anything but
`%Y-%m-%d`), so a partial date is completed here once, not by each source.
"""

from __future__ import annotations

import datetime as dt
import re

from loralay_build.errors import ConfigError

_PARTIAL = re.compile(r"(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?")
# A valid date a source may record: YYYY, YYYY-MM or YYYY-MM-DD.
PARTIAL_DATE = re.compile(r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$")


def normalise_since(value: str) -> str:
    """`2020` -> `2020-01-01`, `2020-05` -> `2020-05-01`, a valid `2020-05-17` unchanged."""
    found = _PARTIAL.fullmatch(value.strip())
    try:
        if not found:
            raise ValueError(value)
        year, month, day = found.groups()
        return dt.date(int(year), int(month or 1), int(day or 1)).isoformat()
    except ValueError:
        raise ConfigError(
            f"--since expects a date as YYYY, YYYY-MM or YYYY-MM-DD, got {value!r}"
        ) from None
