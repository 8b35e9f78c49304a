"""Text utilities: abstract cleaning, normalisation, abstract location and removal, language id.

The names below are imported on first use: a build's parent reads the settings and the
leakage summary, and importing the matcher would load edlib and CLD2 into it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loralay_build.text.clean import prepare_abstract
    from loralay_build.text.langid import detect_language
    from loralay_build.text.leakage import leakage_summary
    from loralay_build.text.match import Match, locate
    from loralay_build.text.normalize import normalise_words
    from loralay_build.text.settings import MatchSettings
    from loralay_build.text.strip import StripResult, strip_abstracts

__all__ = [
    "Match",
    "MatchSettings",
    "StripResult",
    "detect_language",
    "leakage_summary",
    "locate",
    "normalise_words",
    "prepare_abstract",
    "strip_abstracts",
]

_MODULES = {
    "Match": "match",
    "MatchSettings": "settings",
    "StripResult": "strip",
    "detect_language": "langid",
    "leakage_summary": "leakage",
    "locate": "match",
    "normalise_words": "normalize",
    "prepare_abstract": "clean",
    "strip_abstracts": "strip",
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module when first asked for."""
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
