"""Text utilities: abstract cleaning, normalisation, abstract location and removal, language id.

The names below are imported on first use: a build's parent reads the settings and the
leakage summary, and importing the matcher would load edlib and CLD2 into it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loralay_build.lazy import lazy_attributes

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

__getattr__ = lazy_attributes(__name__, _MODULES)
