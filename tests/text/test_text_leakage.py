"""The leakage audit: the share of an abstract's word n-grams still present in the body."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.text.leakage import Leakage, ngrams


def reference_share(body: list[str], abstract: list[str], n: int) -> float:
    """The definition, with every n-gram of the body built."""
    if not abstract:
        return 0.0
    n = min(n, len(abstract))
    grams = ngrams(abstract, n)
    return len(grams & ngrams(body, n)) / len(grams)


def test_shares_of_abstracts_measured_together() -> None:
    english = ["we", "study", "the", "cost", "of", "models"]
    body = [*english, "and", "the", "cost", "of", "data", "in", "this", "work"]
    other = ["the", "cost", "of", "data", "in", "this", "work", "today"]
    audit = Leakage(body, 3, [english, other])
    assert audit.share(english) == 1.0
    assert audit.share(other) == 5 / 6
    assert audit.share(["cost", "of"]) == 1.0  # shorter than n: one 2-gram
    assert audit.share([]) == 0.0


def test_an_abstract_not_announced_is_measured_all_the_same() -> None:
    body = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    audit = Leakage(body, 2, [["alpha", "beta"]])
    assert audit.share(["alpha", "beta"]) == 1.0
    assert audit.share(["gamma", "delta", "zeta"]) == 0.5
    assert audit.share(["alpha", "beta"]) == 1.0


words = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), max_size=40)


@settings(max_examples=200, deadline=None)
@given(words, st.lists(words, min_size=1, max_size=4), st.integers(1, 5), st.booleans())
def test_same_share_as_the_definition(
    body: list[str], abstracts: list[list[str]], n: int, announced: bool
) -> None:
    audit = Leakage(body, n, abstracts if announced else ())
    for abstract in abstracts:
        expected = reference_share(body, abstract, n)
        assert audit.share(abstract) == expected
        assert audit.share_python(abstract) == expected
