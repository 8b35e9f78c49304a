"""A Korean abstract read by OCR: the words are spaced at random (a word cut at its
syllables, two words run together), so it is searched syllable by syllable when it is not
found word by word, and the words it spans are removed."""

from __future__ import annotations

import pytest

from loralay_build.errors import Reason, Reject
from loralay_build.text import strip_abstracts
from loralay_build.text.settings import MatchSettings

ABSTRACT = ("지난 10여 년간 탄소 나노튜브는 자체의 독특한 전기적, 기계적 성질로 인하여 다가오는 "
            "나노기술 분야의 이상적인 기초물질중의 하나로 떠오르고 있다. 흑연을 감는 세세한 "
            "방법에 따라 전기적 특성이 금속성에서 반도체 특성까지 다양한 분포로 존재한다.")
BEFORE = ["안진현", "탄소", "나노튜브의", "물리적", "특성에", "대한", "이론", "연구", "전산학부",
          "2020", "년", "초록"]
AFTER = ["핵심낱말", "가", "나", "다", "1", "서론", "이", "논문은", "다음과", "같이", "구성된다"]
OTHER = "이 장에서는 실험 장치와 측정 방법을 설명하고 결과를 비교한다 "


def _respaced(text: str) -> list[str]:
    """Words as OCR gives them: every third word cut at its syllables, every fifth run into
    the next one."""
    words: list[str] = []
    for i, word in enumerate(text.split(" ")):
        if i % 5 == 4 and words:
            words[-1] += word
        elif i % 3 == 0:
            words += list(word)
        else:
            words.append(word)
    return words


def test_a_respaced_korean_abstract_is_found_and_removed() -> None:
    body = _respaced(ABSTRACT)
    words = [*BEFORE, *body, *AFTER]
    pages = [0] * len(words)
    result = strip_abstracts(words, pages, {"ko": ABSTRACT}, "ko", MatchSettings())
    (match,) = result.matches
    assert match.found
    assert (match.word_start, match.word_end) == (len(BEFORE) - 1, len(BEFORE) + len(body))
    assert [words[i] for i in result.keep] == [*BEFORE[:-1], *AFTER]  # with its heading


def test_korean_text_that_is_not_the_abstract_is_still_not_found() -> None:
    words = [*BEFORE, *_respaced((OTHER * 4).strip()), *AFTER]
    with pytest.raises(Reject) as info:
        strip_abstracts(words, [0] * len(words), {"ko": ABSTRACT}, "ko", MatchSettings())
    assert info.value.reason == Reason.ABSTRACT_NOT_FOUND
