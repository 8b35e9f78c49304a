"""The eurlex-sum split preset: properties over random summary/act graphs (hypothesis), and a
whole three-language build against the sandbox."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from loralay_build.config import merge
from loralay_build.sandbox.eurlex import EurlexSandbox
from loralay_build.sandbox.server import SandboxServer
from loralay_build.sources.eurlex.links import (
    Link,
    collect_acts,
    link_groups,
    normalise_celex,
    preset_split,
    preset_splits,
    to_link,
)
from tests.helpers.cli_runner import FAST, invoke_cli, published_splits, write_config

ALL = ("en", "fr", "el")
REQUESTED = ["en", "fr", "el"]

langs = st.sets(st.sampled_from(ALL), min_size=1).map(frozenset)
link_rows = st.lists(
    st.tuples(st.integers(0, 11), st.integers(0, 7), langs, langs, st.booleans()),
    min_size=1, max_size=40,
)


def to_links(rows: list[tuple[int, int, frozenset[str], frozenset[str], bool]]) -> list[Link]:
    """(act, summary, act languages, summary languages, obsolete) rows; an act's languages
    and a summary's languages and obsolete flag are those of their first row."""
    act_langs: dict[int, frozenset[str]] = {}
    summary_langs: dict[int, tuple[frozenset[str], bool]] = {}
    out = []
    for act, summary, alang, slang, obsolete in rows:
        alang = act_langs.setdefault(act, alang)
        slang, obsolete = summary_langs.setdefault(summary, (slang, obsolete))
        out.append(Link(f"{4000 + summary}", f"legissum/{summary}", f"32019R{act:04d}",
                        f"2019-01-{1 + act:02d}", "REG", obsolete, "2020-01-01", set(alang),
                        set(slang)))
    return out


def splits_of(links: list[Link], stored: dict[str, str] | None = None) -> dict[str, str]:
    acts, covered = collect_acts(links, include_obsolete=False)
    return preset_splits(acts, link_groups(acts, covered), REQUESTED, stored or {})


@settings(max_examples=200, deadline=None)
@given(link_rows)
def test_a_summary_never_spans_two_splits(rows: list) -> None:  # type: ignore[type-arg]
    links = to_links(rows)
    splits = splits_of(links)
    for summary in {link.legissum for link in links if not link.obsolete}:
        acts = {link.celex for link in links if link.legissum == summary}
        assert len({splits[c] for c in acts}) == 1


@settings(max_examples=200, deadline=None)
@given(link_rows, st.randoms(use_true_random=False))
def test_the_split_does_not_depend_on_listing_order(rows: list,  # type: ignore[type-arg]
                                                    rng: random.Random) -> None:
    links = to_links(rows)
    shuffled = list(links)
    rng.shuffle(shuffled)
    assert splits_of(links) == splits_of(shuffled)


@settings(max_examples=200, deadline=None)
@given(link_rows)
def test_only_acts_in_every_language_leave_train(rows: list) -> None:  # type: ignore[type-arg]
    links = to_links(rows)
    acts, _ = collect_acts(links, include_obsolete=False)
    for celex, split in splits_of(links).items():
        if split != "train":
            assert set(REQUESTED) <= acts[celex].languages
            assert any(set(REQUESTED) <= link.summary_languages for link in acts[celex].links)


@settings(max_examples=100, deadline=None)
@given(link_rows, st.sampled_from(["train", "validation", "test"]))
def test_a_stored_split_is_kept_by_its_whole_group(rows: list,  # type: ignore[type-arg]
                                                   stored: str) -> None:
    links = to_links(rows)
    first = splits_of(links)
    assume(first)  # every summary obsolete: no act to split
    celex = sorted(first)[0]
    again = splits_of(links, {celex: stored})
    acts, covered = collect_acts(links, include_obsolete=False)
    groups = link_groups(acts, covered)
    for other in first:
        if groups.find(other) == groups.find(celex):
            assert again[other] == stored
        else:
            assert again[other] == first[other]


def test_the_preset_split_is_the_same_in_every_process() -> None:
    """Each language is built by its own run: a group must get the same split in another
    interpreter, whatever its string-hash seed."""
    groups = [f"32019R{n:04d}" for n in range(40)]
    script = ("import json, sys; from loralay_build.sources.eurlex.links import preset_split; "
              "print(json.dumps([preset_split(g, True) for g in sys.argv[1:]]))")
    answers = [
        json.loads(subprocess.run(
            [sys.executable, "-c", script, *groups], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout)
        for seed in ("1", "2", "3")
    ]
    assert answers[0] == answers[1] == answers[2] == [preset_split(g, True) for g in groups]
    assert {"validation", "test"} == set(answers[0])


def test_preset_build_puts_each_act_in_one_split_in_every_language(tmp_path: Path) -> None:
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=16, seed=11, faults=False)
        config = write_config(tmp_path / "c.toml", merge(sandbox.client_config(ALL), FAST))
        result = invoke_cli("eurlex", "--out", str(tmp_path / "out"), "--config", str(config),
                            "--split-preset", "eurlex-sum", "-q")
        assert result.exit_code == 0, result.output
    by_act: dict[str, set[str]] = {}
    for lang in ALL:
        for article_id, split in published_splits(tmp_path / "out" / f"eurlex-{lang}").items():
            by_act.setdefault(article_id.rsplit(":", 1)[1], set()).add(split)
    assert all(len(splits) == 1 for splits in by_act.values())
    held_out = {c for c, s in by_act.items() if s & {"validation", "test"}}
    assert held_out and held_out != set(by_act)
    acts = {a.celex: a for a in sandbox.cat.acts.values()}
    assert all(set(ALL) <= set(acts[c].languages) for c in held_out)
    shared = next(s.acts for s in sandbox.cat.summaries.values() if len(s.acts) == 2)
    assert by_act[shared[0]] == by_act[shared[1]]


def test_celex_ids_and_sparql_rows_are_normalised() -> None:
    for raw in ("32021R0847", "CELEX:32021R0847", "CELEX%3A32021R0847", "3A32021R0847",
                "http://publications.europa.eu/resource/celex/32021R0847"):
        assert normalise_celex(raw) == "32021R0847"
    assert normalise_celex("02016R0679-20160504") == "02016R0679-20160504"
    link = to_link({
        "summary": {"type": "uri", "value": "http://publications.europa.eu/resource/legissum/x"},
        "legissum": {"type": "literal", "value": "l24173"},
        "celex": {"type": "literal", "value": "CELEX:32004R0261"},
        "date": {"type": "typed-literal", "value": "2004-02-11"},
        "obsolete": {"type": "typed-literal", "value": "true"},
        "act_languages": {"type": "literal", "value": "http://publications.europa.eu/resource/"
                          "authority/language/ENG,http://publications.europa.eu/resource/"
                          "authority/language/GLE,http://x/language/XYZ"},
    })
    assert link is not None
    assert (link.celex, link.legissum, link.date, link.obsolete) == (
        "32004R0261", "l24173", "2004-02-11", True)
    assert link.act_languages == {"en", "ga"} and link.summary_languages == set()
    assert to_link({"celex": {"value": "32004R0261"}}) is None  # no summary id
