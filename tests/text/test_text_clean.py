"""Metadata abstract cleaning: nothing is lost, markup is flattened, LaTeX never truncates."""

from __future__ import annotations

from loralay_build.text import prepare_abstract


def test_plain_collapses_whitespace_and_keeps_newline_as_space() -> None:
    assert prepare_abstract("  first line\nsecond\t\tline \r\n end ", "plain") == (
        "first line second line end"
    )


def test_latex_percent_does_not_truncate() -> None:
    text = "The response rate was 45% in group A\nand 30% in group B, a clear gain."
    assert prepare_abstract(text, "latex") == (
        "The response rate was 45% in group A and 30% in group B, a clear gain."
    )


def test_latex_ampersand_math_and_escapes_survive() -> None:
    out = prepare_abstract(r"R&D with $x$ and $O(n^2)$ time, \% and \& kept, cost \$5", "latex")
    assert out == "R&D with x and O(n2) time, % and & kept, cost $5"


def test_latex_markup_accents_and_ties() -> None:
    out = prepare_abstract(
        r"Caf\'e na\"{\i}ve \emph{very} good~\cite{x}, see Fig.~1 --- done", "latex"
    )
    assert out == "Café naïve very good, see Fig. 1 — done"


def test_latex_lone_dollars_are_text() -> None:
    assert prepare_abstract("prices of $5 and $10 rose", "latex") == "prices of $5 and $10 rose"


def test_html_entities_and_inline_markup_are_flattened() -> None:
    text = "<p>Rats &amp; mice <i>in vivo</i> had H<sub>2</sub>O &lt;5 mg</p><p>Next</p>"
    assert prepare_abstract(text, "html") == "Rats & mice in vivo had H2O <5 mg Next"


def test_jats_and_mathml_keep_the_text_once() -> None:
    text = (
        "<abstract><title>Background</title><p>The <italic>rate</italic> was "
        "<inline-formula><mml:math><mml:mi>p</mml:mi><mml:mo>&lt;</mml:mo><mml:mn>0.05</mml:mn>"
        "<mml:annotation encoding='TeX'>p&lt;0.05</mml:annotation></mml:math>"
        "</inline-formula>.</p></abstract>"
    )
    assert prepare_abstract(text, "html") == "Background The rate was p<0.05."
