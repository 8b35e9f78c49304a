"""Text utilities: abstract cleaning, normalisation, abstract location and removal, language id."""

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
