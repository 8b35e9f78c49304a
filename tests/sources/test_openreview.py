"""`build-corpus openreview` against the OpenReview sandbox, through the real CLI."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import pytest
from click.testing import CliRunner, Result

from loralay_build.cli import main
from loralay_build.sandbox.openreview import ICLR19, ICLR24, WORKSHOP23, OpenReviewSandbox
from loralay_build.sandbox.server import SandboxServer
from loralay_build.sources.openreview import OpenReviewSource
from loralay_build.sources.openreview.notes import STATUSES, VenueIds, decided_status, to_candidate
from loralay_build.state import State
from loralay_build.text.normalize import normalise_text, normalise_words
from tests.helpers.cli_runner import (
    FAST,
    assert_dataset_schema,
    published_splits,
    rejects,
    rows,
    status,
    write_config,
)

FIXTURES = Path("/work/shared/fixtures/openreview")
PDF = "/_openreview/api2/pdf"


@pytest.fixture
def server() -> Iterator[SandboxServer]:
    with SandboxServer() as srv:
        yield srv


def sandbox_on(server: SandboxServer, **kwargs: Any) -> OpenReviewSandbox:
    return OpenReviewSandbox(server, n_docs=kwargs.pop("n_docs", 12), seed=3, **kwargs)


def config(tmp_path: Path, box: OpenReviewSandbox, *extra: dict[str, Any]) -> Path:
    return write_config(tmp_path / "openreview.toml", box.client_config(STATUSES), FAST, *extra)


def build(out: Path, cfg: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["openreview", "--out", str(out), "--config", str(cfg),
                                     *args], env=env, catch_exceptions=False)


def pdf_successes(server: SandboxServer) -> Counter[str]:
    """How many times each note's PDF was served (200) by the sandbox."""
    return Counter(e.query for e in server.requests(PDF) if e.status == 200)


# -- parsing ----------------------------------------------------------------------------------

@pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared fixtures absent")
def test_v2_fixture_note_parsed() -> None:
    note = json.loads((FIXTURES / "intro-to-notes-v2-forum-note.derived.json").read_text())
    note = note.get("note", note)
    venue = VenueIds.of("TC/2024/Conference")
    cand = to_candidate(note, "or", venue, "under_review", "https://api2.openreview.net/pdf",
                        "https://openreview.net", with_reviews=True)
    assert cand.id == "openreview:WEIzUBsDX6"
    assert cand.title == "Paper title 1"
    assert cand.abstracts == {"en": "This is an abstract 1"}
    assert cand.licence == "CC BY-SA 4.0"
    assert cand.file_url == "https://api2.openreview.net/pdf?id=WEIzUBsDX6"
    assert cand.published == "2025-06-09"  # pdate and odate null: cdate (epoch ms)
    columns = cand.extra["columns"]
    assert columns["keywords"] == ["machine learning", "nlp"]
    assert columns["venue"] == "TC 2024 Conference Submission"
    assert columns["year"] == 2024 and columns["tldr"] is None
    review = next(r for r in columns["reviews"] if r["kind"] == "Official_Review")
    assert review["summary"] == "Excellent paper, accept" and review["rating"] == "10"


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared fixtures absent")
def test_v2_hidden_field_is_absent_not_an_error() -> None:
    note = json.loads((FIXTURES / "api-v2-note-fields-example.json").read_text())
    note = {"id": "x1", **note} if "id" not in note else note
    cand = to_candidate(note, "or", VenueIds.of("OpenReview.net/2023/Conference"), "accepted",
                        "p", "w", with_reviews=False)
    assert cand.extra["columns"]["tldr"] is None


def test_v1_and_v2_notes_from_the_sandbox(server: SandboxServer) -> None:
    box = sandbox_on(server)
    by_venue: dict[str, tuple[Any, Any, Any]] = {}
    for sub in box.subs.values():
        if sub.status == "accepted":
            note = box.note(sub, details="replies")
            cand = to_candidate(note, "or", VenueIds.of(sub.venue), "accepted", "p", "w", True)
            by_venue.setdefault(sub.venue, (note, cand, sub))
    v2_note, v2, sub2 = by_venue[ICLR24]
    assert "invitations" in v2_note and isinstance(v2_note["content"]["title"], dict)
    assert v2.extra["columns"]["tldr_key"] == "TLDR"
    assert v2.extra["columns"]["tldr"] == sub2.tldr
    assert by_venue[WORKSHOP23][1].extra["columns"]["tldr_key"] == "TL;DR"
    v1_note, v1, sub1 = by_venue[ICLR19]
    assert "invitation" in v1_note and isinstance(v1_note["content"]["title"], str)
    assert v1.extra["columns"]["tldr_key"] == "TL;DR" and v1.title == sub1.title
    assert v1.extra["columns"]["decision"] == "Accept (Poster)"
    assert v1.extra["columns"]["status"] == v2.extra["columns"]["status"] == "accepted"
    assert {r["kind"] for r in v1.extra["columns"]["reviews"]} == {"Official_Review",
                                                                   "Decision"}


def test_decision_text_kept_and_status_normalised(server: SandboxServer) -> None:
    box = sandbox_on(server, n_docs=15)
    seen = set()
    for sub in box.subs.values():
        cand = to_candidate(box.note(sub, details="replies"), "or", VenueIds.of(sub.venue),
                            sub.status, "p", "w", False)
        columns = cand.extra["columns"]
        expected = {"accepted": "Accept (Poster)", "rejected": "Reject"}.get(sub.status)
        assert (columns["decision"], columns["status"]) == (expected, sub.status)
        seen.add((sub.v1, sub.status))
    assert {(False, "under_review"), (True, "rejected"), (False, "accepted")} <= seen
    texts = {"Accept (Oral)": "accepted", "Accept: notable-top-5%": "accepted",
             "Reject": "rejected", "Invite to Workshop Track": "rejected",
             "Desk Rejected": "desk_rejected", "Withdrawn": "withdrawn", "": "under_review"}
    assert {t: decided_status(t) for t in texts} == texts


# -- paging -----------------------------------------------------------------------------------

def test_paging_stops_on_an_empty_page(server: SandboxServer, tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False)
    cfg = config(tmp_path, box, {"source": {"page_size": 2}})
    out = tmp_path / "data"
    assert build(out, cfg).exit_code == 0
    discovered = sum(status(out, "openreview")["statuses"].values())
    assert discovered == len(box.subs)
    v2 = [e for e in server.requests("/_openreview/api2/notes")]
    v1 = [e for e in server.requests("/_openreview/api1/notes")]
    # v2: per venue and status, ceil(n/2) full pages plus one empty page, after= from page 2.
    for venue in (ICLR24, WORKSHOP23):
        ids = VenueIds.of(venue)
        for name in STATUSES:
            n = sum(1 for s in box.subs.values() if s.venue == venue and s.status == name)
            asked = [e for e in v2 if f"content.venueid={ids.select(name)}&".replace("/", "%2F")
                     in e.query]
            assert len(asked) == -(-n // 2) + 1, (venue, name)
            assert sum("after=" in e.query for e in asked) == -(-n // 2)
    # v1: offset paging over Blind_Submission, then the withdrawn set.
    blind = [e for e in v1 if "Blind_Submission" in e.query]
    n1 = sum(1 for s in box.subs.values() if s.v1 and s.status not in ("withdrawn",
                                                                        "desk_rejected"))
    assert len(blind) == -(-n1 // 2) + 1
    offsets = [int(e.query.split("offset=")[1]) for e in blind]
    assert offsets == [min(2 * i, n1) for i in range(len(blind))]


def test_page_size_over_the_api_cap_is_a_usage_error(server: SandboxServer,
                                                    tmp_path: Path) -> None:
    box = sandbox_on(server)
    result = build(tmp_path / "d", config(tmp_path, box, {"source": {"page_size": 1001}}))
    assert result.exit_code == 2 and "page_size" in result.output
    assert not server.requests("/_openreview/")


# -- the whole build --------------------------------------------------------------------------

def test_build_loads_with_tldr_and_abstract_removed(server: SandboxServer,
                                                    tmp_path: Path) -> None:
    box = sandbox_on(server, n_docs=15)
    out = tmp_path / "data"
    assert build(out, config(tmp_path, box)).exit_code == 0
    folder = out / "openreview"
    reasons = rejects(folder)
    withdrawn = {f"openreview:{s.note_id}" for s in box.subs.values() if s.status == "withdrawn"}
    assert withdrawn and all(reasons[w] == "unavailable" for w in withdrawn)
    published = rows(folder)
    assert published
    for row in published.values():
        sub = box.subs[row["article_id"].split(":", 1)[1]]
        assert row["tldr"] == sub.tldr and row["tldr_key"] in ("TL;DR", "TLDR")
        assert row["abstract_original"] == sub.abstract  # the original, Markdown kept
        assert row["matches"][0]["found"], row["article_id"]
        body = " " + " ".join(normalise_words(row["article_words"]).texts) + " "
        assert " " + " ".join(normalise_text(row["abstract"])) + " " not in body
        sections = " ".join(p for _, paragraphs in sub.spec.sections for p in paragraphs)
        own = [x for x in row["abstract"].split(". ") if x not in sections]  # not in the body
        assert own and not any(" ".join(normalise_text(x)) in body for x in own)
        assert row["year"] == int(sub.venue.split("/")[1])
        assert row["status"] == sub.status
        assert row["decision"] == {"accepted": "Accept (Poster)", "rejected": "Reject"}.get(
            sub.status)
    markdown = [r for r in published.values() if "**" in r["abstract_original"]]
    assert markdown and "**" not in markdown[0]["abstract"]
    loaded = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf"))
    assert sum(len(loaded[s]) for s in loaded) == len(published)
    assert loaded["train"].features["tldr"].dtype == "string"
    assert_dataset_schema(folder, OpenReviewSource)
    build_record = json.loads((folder / "build.json").read_text())
    clusters = build_record["duplicate_clusters"]
    assert len(clusters) == 2  # the workshop copy (same PDF) and the reworded resubmission
    for cluster in clusters:
        for member in cluster["members"][1:]:
            assert reasons[member] == "duplicate" and member not in published
        assert published[cluster["representative"]]["article_id"]


# -- the guest PDF limit ----------------------------------------------------------------------

def test_rate_limited_run_exits_3_and_the_next_completes(server: SandboxServer,
                                                         tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False, pdf_limit=2)
    cfg = config(tmp_path, box)
    out = tmp_path / "data"
    first = build(out, cfg)
    assert first.exit_code == 3
    report = status(out, "openreview")
    waiting = report["statuses"]["retry"]
    assert waiting > 0
    assert len(server.requests(PDF)) == 3  # two PDFs, one 429, then no more asking
    box.reset_limit()
    fetched_before = set(pdf_successes(server))
    box.pdf_limit = 3
    while status(out, "openreview")["statuses"].get("retry"):
        box.reset_limit()
        assert build(out, cfg).exit_code in (0, 3)
    assert build(out, cfg).exit_code == 0
    served = pdf_successes(server)
    assert all(n == 1 for n in served.values())  # nothing downloaded twice
    assert fetched_before < set(served)
    final = status(out, "openreview")
    assert "retry" not in final["statuses"]
    withdrawn = sum(1 for s in box.subs.values() if s.status == "withdrawn")
    assert final["rejects"].get("unavailable") == withdrawn  # no PDF lost to the limit


def test_challenge_stops_downloads_as_blocked(server: SandboxServer, tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False)
    box.challenge.add("pdf")
    out = tmp_path / "data"
    assert build(out, config(tmp_path, box)).exit_code == 3
    assert len(server.requests(PDF)) == 1  # asked once, then stopped
    report = status(out, "openreview")
    assert report["rejects"].get("blocked") == 1
    assert report["statuses"]["retry"] > 0


def test_challenge_on_listing_stops_discovery(server: SandboxServer, tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False)
    box.challenge.add("notes")
    out = tmp_path / "data"
    assert build(out, config(tmp_path, box)).exit_code == 3
    assert len(server.requests("/_openreview/api2/notes")) == 1
    assert not server.requests("/_openreview/api1/notes")


def test_unknown_venue_is_a_recorded_discovery_failure(server: SandboxServer,
                                                       tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False)
    out = tmp_path / "data"
    result = build(out, config(tmp_path, box), "--venue", "Nowhere.cc/2024/Conference",
                   "--venue", ICLR19)
    assert result.exit_code == 3
    assert sum(status(out, "openreview")["statuses"].values()) > 0  # ICLR19 still built


# -- credentials ------------------------------------------------------------------------------

def test_login_token_and_password_never_written(server: SandboxServer, tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False, pdf_limit=0)  # guests get no PDF at all
    user, password = box.credentials
    env = {"OPENREVIEW_USERNAME": user, "OPENREVIEW_PASSWORD": password}
    out = tmp_path / "data"
    result = build(out, config(tmp_path, box), "-vv", env=env)
    assert result.exit_code == 0, result.output
    assert box.tokens and rows(out / "openreview")
    secrets = [password.encode(), *(t.encode() for t in box.tokens)]
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(s in data for s in secrets), path
    assert not any(s in result.output.encode() for s in secrets)


def test_wrong_credentials_are_a_usage_error(server: SandboxServer, tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False)
    env = {"OPENREVIEW_USERNAME": "someone", "OPENREVIEW_PASSWORD": "wrong"}
    result = build(tmp_path / "d", config(tmp_path, box), env=env)
    assert result.exit_code == 2 and "login refused" in result.output
    assert "wrong" not in result.output


def test_split_ids_keep_a_published_membership(server: SandboxServer, tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False)
    titles = Counter(s.title.lower()[:30] for s in box.subs.values())
    newest = sorted(s.note_id for s in box.subs.values()  # not a duplicate's copy
                    if s.venue == WORKSHOP23 and s.status == "accepted"
                    and titles[s.title.lower()[:30]] == 1)
    folder = tmp_path / "splits"
    folder.mkdir()
    (folder / "train.txt").write_text(f"openreview:{newest[0]}\n{newest[1]}\n")
    (folder / "test.jsonl").write_text("")
    out = tmp_path / "data"
    assert build(out, config(tmp_path, box), "--split-ids", str(folder)).exit_code == 0
    splits = published_splits(out / "openreview")
    assert splits[f"openreview:{newest[0]}"] == splits[f"openreview:{newest[1]}"] == "train"
    assert "test" in splits.values()  # the others still split by venue year


# -- splits across runs -----------------------------------------------------------------------

def test_a_late_twin_never_moves_a_published_paper(server: SandboxServer,
                                                   tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False)
    cfg = config(tmp_path, box)
    out = tmp_path / "data"
    assert build(out, cfg, "--venue", ICLR24).exit_code == 0
    first = published_splits(out / "openreview")
    evaluated = sorted(cid for cid, split in first.items() if split != "train")
    assert evaluated
    twins = [box.add_twin(box.subs[cid.split(":", 1)[1]], ICLR19) for cid in evaluated]
    assert build(out, cfg, "--venue", ICLR24, "--venue", ICLR19).exit_code == 0
    second = published_splits(out / "openreview")
    assert {cid: second.get(cid) for cid in first} == first  # nothing moved or dropped
    reasons = rejects(out / "openreview")
    for twin in twins:  # the 2018 copies came later: they are the duplicates
        assert reasons[f"openreview:{twin.note_id}"] == "duplicate"
    clusters = json.loads((out / "openreview" / "build.json").read_text())["duplicate_clusters"]
    assert {c["representative"]: c["split"] for c in clusters
            if c["representative"] in evaluated} == {cid: first[cid] for cid in evaluated}


def test_limited_then_continued_crawl_ends_with_the_splits_of_an_unlimited_one(
        server: SandboxServer, tmp_path: Path) -> None:
    box = sandbox_on(server, faults=False, n_docs=15)
    cfg = config(tmp_path, box)
    whole = tmp_path / "whole"
    assert build(whole, cfg).exit_code == 0
    expected = published_splits(whole / "openreview")
    box.pdf_limit = 1
    box.reset_limit()
    out = tmp_path / "limited"
    assert build(out, cfg).exit_code == 3
    state = State(out)
    try:
        waiting = {r.candidate.id for r in state.rows("openreview", ["discovered", "retry"])}
    finally:
        state.close()
    # Nothing published yet leaves no folder; what is published lists only works with a
    # downloaded copy.
    build_file = out / "openreview" / "build.json"
    clusters = (json.loads(build_file.read_text())["duplicate_clusters"]
                if build_file.exists() else [])
    assert waiting and all(set(c["members"]) - waiting for c in clusters)
    box.pdf_limit = 3
    seen_partial = False
    while status(out, "openreview")["statuses"].get("retry"):
        partial = published_splits(out / "openreview")
        assert {cid: expected.get(cid) for cid in partial} == partial
        seen_partial |= 0 < len(partial) < len(expected)
        box.reset_limit()
        assert build(out, cfg).exit_code in (0, 3)
    assert seen_partial
    assert published_splits(out / "openreview") == expected
