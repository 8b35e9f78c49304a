"""`report`'s years plot: documents without a publication date are shown as undated, not
as an empty corpus."""

from __future__ import annotations

from typing import Any

from loralay_build.corpus.report import UNDATED, _plotting, years_figure


def bar_heights(fig: Any) -> tuple[list[str], list[float], list[str]]:
    """The x labels, the stacked height at each label, and the texts drawn in the axes."""
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_xticklabels()]
    heights: dict[float, float] = {}
    for bar in ax.patches:
        x = bar.get_x() + bar.get_width() / 2
        heights[x] = heights.get(x, 0) + bar.get_height()
    return labels, [heights.get(float(i), 0) for i in range(len(labels))], \
        [t.get_text() for t in ax.texts]


def test_only_undated_documents_are_one_undated_bar() -> None:
    plt = _plotting()
    fig = years_figure(plt, "nodates", {"train": {"year": [None, None, None]},
                                        "test": {"year": [None]}})
    labels, heights, texts = bar_heights(fig)
    assert labels == [UNDATED] and heights == [4]
    assert "no documents" not in texts
    plt.close(fig)


def test_undated_documents_follow_the_years() -> None:
    plt = _plotting()
    fig = years_figure(plt, "some", {"train": {"year": [2001, None, 2003]},
                                     "validation": {"year": [None]}})
    labels, heights, _ = bar_heights(fig)
    assert labels == ["2001", "2002", "2003", UNDATED]
    assert heights == [1, 0, 1, 2]
    plt.close(fig)


def test_a_long_range_still_names_the_undated_bar() -> None:
    plt = _plotting()
    fig = years_figure(plt, "long", {"train": {"year": [*range(1900, 2000), None]}})
    labels, _, _ = bar_heights(fig)
    assert labels[-1] == UNDATED and labels[0] == "1900"
    plt.close(fig)
