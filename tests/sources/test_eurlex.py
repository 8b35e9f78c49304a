"""EUR-Lex through Cellar: whole builds of eurlex-en/fr/el against the sandbox (real HTTP on
loopback, SPARQL paging, content negotiation, real SQLite, real OJ PDFs), incremental runs and
the protocol's error answers."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import datasets
import pytest

from loralay_build.blobs import BlobStore
from loralay_build.bundle import read_bundle
from loralay_build.config import HttpSettings, merge
from loralay_build.errors import ConfigError, Reject
from loralay_build.http import HttpClient
from loralay_build.parse import parse_pdf
from loralay_build.records import Candidate
from loralay_build.sandbox.eurlex import FAMILIES, EurlexSandbox
from loralay_build.sandbox.eurlex_docs import act_body, summary_lines
from loralay_build.sandbox.server import SandboxServer
from loralay_build.sources import load_settings
from loralay_build.sources.eurlex import cellar as eurlex_cellar
from loralay_build.sources.eurlex.discover import EurlexConfig, EurlexSource, datasets_for
from loralay_build.state import State
from tests.helpers.cli_runner import (
    FAST,
    assert_dataset_schema,
    invoke_cli,
    rejects,
    rows,
    write_config,
)

LANGS = ("en", "fr", "el")


@dataclass
class Built:
    sandbox: EurlexSandbox
    server: SandboxServer
    out: Path
    config: Path

    def act(self, index: int) -> str:
        return next(a.celex for a in self.sandbox.cat.acts.values() if a.index == index)

    def build(self, *extra: str) -> int:
        result = invoke_cli("eurlex", "--out", str(self.out), "--config", str(self.config), "-q",
                            *extra)
        return result.exit_code



def eurlex_config(table: dict[str, Any] | None = None) -> EurlexConfig:
    """The shipped EUR-Lex configuration with `table` overlaid on its `[source]`."""
    source = load_settings("eurlex", environ={}, overrides={"source": table or {}}).source
    assert isinstance(source, EurlexConfig)
    return source

def sandbox_config(sandbox: EurlexSandbox, path: Path, **source: Any) -> Path:
    overlay = merge(sandbox.client_config(LANGS), FAST)
    overlay = merge(overlay, {"source": source} if source else {})
    return write_config(path, overlay)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    tmp = tmp_path_factory.mktemp("eurlex")
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=12, seed=3)
        state = Built(sandbox, server, tmp / "out", sandbox_config(sandbox, tmp / "c.toml"))
        assert state.build() == 0
        yield state


def test_every_language_dataset_loads_with_words_boxes_pages_and_reference_text(
        built: Built) -> None:
    for lang in LANGS:
        folder = built.out / f"eurlex-{lang}"
        loaded = datasets.load_dataset(str(folder))
        table = loaded["train"]
        assert "reference_text" in table.column_names
        assert all(r["language"] == lang and r["source"] == "eurlex" for r in table)
        verified = invoke_cli("verify", str(folder))
        assert verified.exit_code == 0, verified.output
        assert_dataset_schema(folder, EurlexSource)
    published = rows(built.out / "eurlex-en")
    regular = published[f"eurlex:en:{built.act(6)}"]
    assert regular["article_words"] and len(regular["article_bboxes"]) == len(
        regular["article_words"])
    assert max(regular["word_pages"]) == len(regular["page_sizes"]) - 1
    assert "Article 1" in (regular["reference_text"] or "")
    assert regular["matches"][0]["method"] == "separate"
    assert regular["matches"][0]["leakage"] == 0.0  # the act does not contain its summary
    assert regular["abstract"].split("\n")[0] not in (regular["reference_text"] or "")


def test_every_sentence_of_a_summary_is_in_the_abstract_once(built: Built) -> None:
    """Nested key points included: a point's own words above its nested list are kept."""
    published = rows(built.out / "eurlex-en")
    checked = 0
    for summary in built.sandbox.cat.summaries.values():
        rows_of = [published[f"eurlex:en:{c}"] for c in summary.acts
                   if f"eurlex:en:{c}" in published and not summary.obsolete]
        for row in rows_of:
            lines = summary_lines(int(summary.legissum.strip("l")), "en", summary.sentences)
            assert row["abstract"].endswith(": " + lines[0].split(" ", 3)[-1] + " "
                                            + " ".join(lines))  # the title, then each line
            checked += 1
    assert checked >= 8


def test_greek_act_text_comes_through_pdf_and_html(built: Built) -> None:
    row = rows(built.out / "eurlex-el")[f"eurlex:el:{built.act(6)}"]
    assert "Άρθρο" in row["article_words"] and "Άρθρο 1" in row["reference_text"]
    assert row["lang_detected"] == "el"


def test_multi_part_act_is_fetched_part_by_part_in_order(built: Built) -> None:
    celex = built.act(0)
    row = rows(built.out / "eurlex-en")[f"eurlex:en:{celex}"]
    assert len(row["page_sizes"]) == 2
    annex = row["article_words"].index("ANNEX")
    assert row["word_pages"][annex] == 1  # the second part's page keeps its place
    parts = [e.path for e in built.server.requests("/cellar/resource/parts/")
             if ".eng/" in e.path]
    assert [p.rsplit("/", 1)[-1] for p in parts] == ["DOC_1", "DOC_2", "DOC_1", "DOC_2"]


def test_waf_challenge_becomes_a_blocked_reject_after_backing_off(built: Built) -> None:
    celex = built.act(1)
    for lang in LANGS:
        assert rejects(built.out / f"eurlex-{lang}")[f"eurlex:{lang}:{celex}"] == "blocked"
    challenged = [e for e in built.server.requests(f"/cellar/resource/celex/{celex}")]
    assert [e.status for e in challenged] == [202] * 3 * len(LANGS)  # waf_retries = 2


def test_throttled_act_is_retried_after_retry_after(built: Built) -> None:
    celex = built.act(2)
    statuses = [e.status for e in built.server.requests(f"/cellar/resource/celex/{celex}")]
    assert statuses[0] == 429 and statuses[1] == 200
    assert f"eurlex:en:{celex}" in rows(built.out / "eurlex-en")


def test_rows_with_only_one_of_pdf_and_html_are_still_published(built: Built) -> None:
    published = rows(built.out / "eurlex-en")
    html_only = published[f"eurlex:en:{built.act(3)}"]
    assert html_only["article_words"] == [] and "Article 1" in html_only["reference_text"]
    pdf_only = published[f"eurlex:en:{built.act(4)}"]
    assert pdf_only["article_words"] and pdf_only["reference_text"] is None


def test_pairing_coverage_obsolete_and_length_filter(built: Built) -> None:
    en, fr = rows(built.out / "eurlex-en"), rows(built.out / "eurlex-fr")
    assert f"eurlex:en:{built.act(5)}" in en and f"eurlex:fr:{built.act(5)}" not in fr
    assert f"eurlex:en:{built.act(9)}" not in en  # its only summary is obsolete
    assert rejects(built.out / "eurlex-en")[f"eurlex:en:{built.act(10)}"] == (
        "reference_too_short")
    state = State(built.out)
    try:
        extra = {r.candidate.source_id: r.candidate.extra for r in state.rows("eurlex-en")}
        assert state.get_mark("eurlex", "obsolete_skipped") is not None
    finally:
        state.close()
    shared = sorted([built.act(6), built.act(7)])
    assert extra[built.act(6)]["summary_acts"] == shared == extra[built.act(7)]["summary_acts"]
    assert extra[built.act(6)]["group"] == extra[built.act(7)]["group"] == shared[0]
    two = extra[built.act(8)]["summaries"]
    assert [s["obsolete"] for s in two] == [False, True]  # current one paired, both kept
    assert extra[built.act(8)]["legissum"] == two[0]["legissum"]
    assert extra[built.act(11)]["summary_format"] == "flat"


def test_sparql_is_paged_with_limit_and_offset_and_survives_a_timeout(built: Built) -> None:
    calls = built.server.requests("/cellar/sparql")
    queries = [parse_qs(e.query)["query"][0] for e in calls]
    offsets = [int(q.rsplit("OFFSET", 1)[1]) for q in queries]
    assert all("LIMIT 10 " in q for q in queries)
    # 13 links in pages of 10; the first try of the second page timed out (500) once; the
    # short second page ends the listing.
    assert len(built.sandbox.bindings()) == 13
    assert offsets[:3] == [0, 10, 10] and [e.status for e in calls][:3] == [200, 500, 200]
    # The en build listed for fr and el too: their builds do not ask again.
    assert len(queries) == 3 and "FILTER" not in queries[0]


def test_incremental_run_lists_only_newer_acts_and_changed_summaries(tmp_path: Path) -> None:
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=12, seed=3, faults=False)
        run = Built(sandbox, server, tmp_path / "out",
                    sandbox_config(sandbox, tmp_path / "c.toml", languages=["en"]))
        assert run.build() == 0
        first = rows(run.out / "eurlex-en")
        before = len(server.requests("/cellar/resource/"))
        new = sandbox.add_acts(2)
        changed = run.act(3)
        sandbox.touch_summary(changed, "2025-06-01")
        assert run.build() == 0
        second = rows(run.out / "eurlex-en")
        query = parse_qs(server.requests("/cellar/sparql")[-1].query)["query"][0]
        assert 'FILTER(?date > "' in query and '?modified > "' in query
        assert set(second) == set(first) | {f"eurlex:en:{c}" for c in new}
        assert second[f"eurlex:en:{changed}"]["abstract"] != first[f"eurlex:en:{changed}"][
            "abstract"]
        # Only the three listed acts were fetched again: summary + PDF + XHTML each.
        assert len(server.requests("/cellar/resource/")) - before == 3 * 3


def test_a_language_code_cellar_refuses_stops_the_run(monkeypatch: pytest.MonkeyPatch,
                                                      built: Built) -> None:
    client = HttpClient(HttpSettings(min_interval=0.0), trusted_urls=[built.server.base_url])
    url = f"{built.server.base_url}/cellar/resource/celex/{built.act(6)}"
    monkeypatch.setitem(eurlex_cellar.LANGUAGES, "de", "ger")  # 639-2/B: Cellar says 400
    with pytest.raises(ConfigError, match="HTTP 400"):
        eurlex_cellar.negotiate(client, url, eurlex_cellar.PDF_TYPE, "de", eurlex_config())
    assert eurlex_cellar.negotiate(client, url, eurlex_cellar.PDF_TYPE, "bg",
                                   eurlex_config()) is not None
    body = eurlex_cellar.negotiate(client, url.replace(built.act(6), "39999R9999"),
                                   eurlex_cellar.PDF_TYPE, "en", eurlex_config())
    assert body is None  # 404: missing, not an error


def test_a_bot_challenge_is_a_warning_except_from_the_sandbox(
        built: Built, caplog: pytest.LogCaptureFixture) -> None:
    """The sandbox's challenges are the sandbox doing its job: logged at INFO, not WARNING."""
    client = HttpClient(HttpSettings(min_interval=0.0), trusted_urls=[built.server.base_url])
    url = f"{built.server.base_url}/cellar/resource/celex/{built.act(1)}"  # always challenged
    sandbox = built.sandbox.client_config(LANGS)["source"]
    default = {**sandbox, "waf_log": eurlex_config().waf_log}
    for table, level in ((sandbox, logging.INFO), (default, logging.WARNING)):
        cfg = eurlex_config(table)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="loralay_build"), \
                pytest.raises(Reject, match="bot challenge"):
            eurlex_cellar.negotiate(client, url, eurlex_cellar.PDF_TYPE, "en", cfg)
        levels = [r.levelno for r in caplog.records if "bot challenge" in r.getMessage()]
        assert levels == [level] * sandbox["waf_retries"]


def test_an_unknown_waf_log_level_stops_the_run_before_work(built: Built,
                                                            tmp_path: Path) -> None:
    config = sandbox_config(built.sandbox, tmp_path / "c.toml", waf_log="loud")
    before = len(built.server.requests())
    result = invoke_cli("eurlex", "--out", str(tmp_path / "out"), "--config", str(config),
                        "--languages", "en")
    assert result.exit_code == 2 and "waf_log" in result.output
    assert "Traceback" not in result.output
    assert len(built.server.requests()) == before  # nothing was asked of Cellar


def test_usage_errors_are_one_line_and_exit_2(built: Built, tmp_path: Path) -> None:
    result = invoke_cli("eurlex", "--out", str(tmp_path), "--config", str(built.config),
                        "--languages", "en,xx")
    assert result.exit_code == 2 and "unknown EUR-Lex language" in result.output
    assert "Traceback" not in result.output
    result = invoke_cli("eurlex", "--out", str(tmp_path), "--config", str(built.config), "--since",
                        "2020-13", "--languages", "en")
    assert result.exit_code == 2 and "'--since': expects a date" in result.output


def test_reference_text_is_exactly_the_act_for_every_html_family(built: Built) -> None:
    published = rows(built.out / "eurlex-en")
    families = set()
    for act in built.sandbox.cat.acts.values():
        row = published.get(f"eurlex:en:{act.celex}")
        if row is None or row["reference_text"] is None or act.behaviour == "multipart":
            continue
        expected = act_body(built.sandbox.seed * 1000 + act.index, "en", act.number,
                            act.articles).lines()
        assert row["reference_text"].split("\n") == expected, act.family
        families.add(act.family)
    assert families == set(FAMILIES)


@pytest.mark.parametrize(("lang", "article", "journal"), [
    ("bg", "Член", "Официален"), ("ga", "Airteagal", "Oifigiúil"), ("el", "Άρθρο", "Επίσημη"),
])
def test_oj_pdfs_in_cyrillic_greek_and_irish_have_a_real_text_layer(
        built: Built, tmp_path: Path, lang: str, article: str, journal: str) -> None:
    client = HttpClient(HttpSettings(min_interval=0.0), trusted_urls=[built.server.base_url])
    url = f"{built.server.base_url}/cellar/resource/celex/{built.act(6)}"
    pdf = eurlex_cellar.negotiate(client, url, eurlex_cellar.PDF_TYPE, lang, eurlex_config())
    assert pdf is not None
    (tmp_path / "act.pdf").write_bytes(pdf)
    words = parse_pdf(tmp_path / "act.pdf").words
    assert article in words and journal in words


def test_build_record_counts_which_formats_each_row_has(built: Built) -> None:
    record = json.loads((built.out / "eurlex-en" / "build.json").read_text())
    formats = record["counts"]["formats"]
    assert formats["html"] == 1 and formats["pdf"] == 1 and formats["pdf+html"] >= 5
    assert sum(formats.values()) == sum(record["counts"]["splits"].values())


def candidate_for(sandbox: EurlexSandbox, index: int, lang: str) -> Candidate:
    act = next(a for a in sandbox.cat.acts.values() if a.index == index)
    cellar = sandbox.client_config()["source"]["cellar_url"]
    return Candidate(id=f"eurlex:{lang}:{act.celex}", source="eurlex", source_id=act.celex,
                     dataset=f"eurlex-{lang}", language=lang,
                     file_url=f"{cellar}celex/{act.celex}")


@pytest.mark.parametrize("faults", [False, True])
def test_eurlex_website_is_only_a_configured_fallback(tmp_path: Path, faults: bool) -> None:
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=12, seed=3, faults=faults)
        cfg = {**sandbox.client_config()["source"], "eurlex_fallback": True}
        client = HttpClient(HttpSettings(min_interval=0.0), trusted_urls=[server.base_url])
        source = EurlexSource()
        source.config = eurlex_config(cfg)
        blobs = BlobStore(tmp_path / "blobs")
        no_html = candidate_for(sandbox, 4, "en")  # Cellar has its PDF, not its XHTML
        bundle = read_bundle(blobs.path(source.fetch(no_html, client, blobs)))
        assert bundle is not None and bundle.pdf is not None
        if faults:  # the website challenged us: the row keeps its PDF, the text is missing
            assert bundle.reference is None and bundle.info["html_fallback"] == "blocked"
        else:
            assert bundle.reference is not None and bundle.info["html_fallback"] == "eur-lex"
            text = blobs.path(bundle.reference).read_text(encoding="utf-8")
            assert "Article 1" in text
        assert len(server.requests("/eurlex/")) == (3 if faults else 1)
        source.config = eurlex_config({**cfg, "eurlex_fallback": False})
        source.fetch(candidate_for(sandbox, 4, "el"), client, blobs)
        assert len(server.requests("/eurlex/")) == (3 if faults else 1)


def test_a_sparql_page_that_keeps_failing_publishes_the_pages_before_it(tmp_path: Path) -> None:
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=12, seed=3, faults=False)
        sandbox.failing_offset = 10
        overlay = merge(sandbox.client_config(("en",)), FAST)
        config = write_config(tmp_path / "c.toml", overlay, {"http": {"max_retries": 1}})
        run = Built(sandbox, server, tmp_path / "out", config)
        assert run.build() == 3  # partial: discovery failed in part
        first = rows(run.out / "eurlex-en")
        assert 0 < len(first) <= 10
        state = State(run.out)
        try:
            assert state.get_mark("eurlex", "act_date") is None  # the pass was incomplete
        finally:
            state.close()
        sandbox.failing_offset = None
        assert run.build() == 0
        assert set(first) < set(rows(run.out / "eurlex-en"))


def test_defaults_talk_to_the_real_cellar_endpoints_for_24_languages() -> None:
    source = eurlex_config()
    assert source.sparql_url == "http://publications.europa.eu/webapi/rdf/sparql"
    assert source.cellar_url == "http://publications.europa.eu/resource/"
    assert not source.eurlex_fallback
    found = datasets_for(source)
    assert len(found) == 24 and found["ga"] == "eurlex-ga"
    assert [eurlex_cellar.LANGUAGES[k] for k in ("en", "fr", "de", "ga", "el", "bg")] == [
        "eng", "fra", "deu", "gle", "ell", "bul"]


def test_name_languages_and_limit_flags(built: Built, tmp_path: Path) -> None:
    result = invoke_cli("eurlex", "--out", str(tmp_path), "--config", str(built.config), "--name",
                        "lex", "--languages", "fr", "--limit", "2", "-q")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "lex-fr"]
    published = rows(tmp_path / "lex-fr")
    assert len(published) + len(rejects(tmp_path / "lex-fr")) == 2
    assert all(k.startswith("eurlex:fr:") for k in published)


def challenged(server: SandboxServer) -> int:
    return sum(1 for e in server.requests("/cellar/resource/") if e.status == 202)


def test_cellar_challenging_everything_costs_a_few_requests_then_waits(tmp_path: Path) -> None:
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=12, seed=3, faults=False)
        sandbox.challenge_cellar = True
        run = Built(sandbox, server, tmp_path / "out", sandbox_config(sandbox, tmp_path / "c.toml"))
        # Three language builds, a dozen summaries each: the first summary is tried three
        # times (waf_retries = 2), the next one once, then Cellar is left alone.
        assert run.build() == 3
        assert challenged(server) == 4
        assert not any((run.out / f"eurlex-{lang}" / "data").exists() for lang in LANGS)
        before = len(server.log)
        assert run.build() == 3  # within waf_host_pause: not asked at all, SPARQL included
        assert len(server.log) == before
        sandbox.challenge_cellar = False
        run.config = sandbox_config(sandbox, tmp_path / "later.toml", waf_host_pause=0)
        assert run.build() == 0
        assert challenged(server) == 4
        for lang in LANGS:
            assert len(rows(run.out / f"eurlex-{lang}")) >= 8


def test_acts_behind_a_challenging_cellar_wait_without_being_asked(tmp_path: Path) -> None:
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=12, seed=3, faults=False)
        client = HttpClient(HttpSettings(min_interval=0.0), trusted_urls=[server.base_url])
        state = State(tmp_path / "out")
        try:
            source = EurlexSource()
            source.config = eurlex_config(sandbox.client_config()["source"])
            source.guard = eurlex_cellar.ChallengeGuard(state, source.config)
            blobs = BlobStore(tmp_path / "blobs")
            assert source.fetch(candidate_for(sandbox, 6, "en"), client, blobs)
            sandbox.challenge_cellar = True
            with pytest.raises(Reject, match="blocked"):  # one act behind a challenge
                source.fetch(candidate_for(sandbox, 7, "en"), client, blobs)
            for index in (8, 9, 10, 11):  # the next one confirms it: the rest waits
                with pytest.raises(eurlex_cellar.HostChallenged):
                    source.fetch(candidate_for(sandbox, index, "en"), client, blobs)
            assert challenged(server) == 3 + 1
            assert state.get_mark("eurlex", f"challenged:{urlsplit(server.base_url).netloc}")
        finally:
            state.close()


def test_a_host_pause_ends_exactly_when_it_says(tmp_path: Path) -> None:
    """The stop time is kept to the fraction of a second: a zero pause never holds the next
    run back (stored in whole seconds, a stop at hh:mm:ss.6 held it for 0.4 s)."""
    state = State(tmp_path / "out")
    try:
        url = "http://127.0.0.1:1/cellar/resource/x"
        for _ in range(8):
            guard = eurlex_cellar.ChallengeGuard(state, eurlex_config({"waf_host_limit": 1}))
            with pytest.raises(eurlex_cellar.HostChallenged):
                guard.challenged(url)
            with pytest.raises(eurlex_cellar.HostChallenged, match="waf_host_pause"):
                paused = eurlex_config({"waf_host_pause": 60})
                eurlex_cellar.ChallengeGuard(state, paused).check(url)
            eurlex_cellar.ChallengeGuard(state, eurlex_config({"waf_host_pause": 0})).check(url)
            time.sleep(0.13)
    finally:
        state.close()


def full_listings(server: SandboxServer, since: int) -> int:
    """SPARQL listings without a FILTER started after request `since`."""
    queries = [parse_qs(e.query)["query"][0] for e in server.requests("/cellar/sparql")[since:]]
    return sum(1 for q in queries if "FILTER" not in q and "OFFSET 0" in q)


def a_day_passes(out: Path) -> None:
    state = State(out)
    try:
        listed = float(state.get_mark("eurlex", "summary_ids_listed") or 0)
        state.set_mark("eurlex", "summary_ids_listed", f"{listed - 86_400:.0f}")
    finally:
        state.close()


def test_summaries_of_older_acts_are_found_when_cellar_binds_no_modification_date(
        tmp_path: Path) -> None:
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=12, seed=3, faults=False)
        sandbox.bind_modified = False
        run = Built(sandbox, server, tmp_path / "out", sandbox_config(sandbox, tmp_path / "c.toml"))
        assert run.build() == 0
        first = {lang: rows(run.out / f"eurlex-{lang}") for lang in LANGS}
        # A day later: a new summary of a 2006 act, a new act, an updated summary.
        older = sandbox.add_acts(1, date="2006-05-05")[0]
        newer = sandbox.add_acts(1)[0]
        updated = run.act(3)
        sandbox.touch_summary(updated, "2025-06-01")
        a_day_passes(run.out)
        before, sparql = len(server.requests("/cellar/resource/")), len(
            server.requests("/cellar/sparql"))
        assert run.build() == 0
        second = {lang: rows(run.out / f"eurlex-{lang}") for lang in LANGS}
        for lang in LANGS:
            assert set(second[lang]) == set(first[lang]) | {f"eurlex:{lang}:{older}",
                                                            f"eurlex:{lang}:{newer}"}
        # The ids were listed once for the three languages, and only the two new acts were
        # read: summary, PDF and XHTML in each language.
        assert full_listings(server, sparql) == 1
        assert len(server.requests("/cellar/resource/")) - before == 2 * 3 * len(LANGS)
        # The updated text is found by the periodic full pass (summary_recheck_days).
        key = f"eurlex:en:{updated}"
        assert second["en"][key]["abstract"] == first["en"][key]["abstract"]
        run.config = sandbox_config(sandbox, tmp_path / "recheck.toml", summary_recheck_days=0)
        assert run.build() == 0
        third = {lang: rows(run.out / f"eurlex-{lang}") for lang in LANGS}
        assert set(third["en"]) == set(second["en"])
        assert third["en"][key]["abstract"] != first["en"][key]["abstract"]
        # Another day without changes: the ids are listed, nothing is read.
        run.config = sandbox_config(sandbox, tmp_path / "c.toml")
        a_day_passes(run.out)
        before, sparql = len(server.requests("/cellar/resource/")), len(
            server.requests("/cellar/sparql"))
        assert run.build() == 0
        assert full_listings(server, sparql) == 1
        assert len(server.requests("/cellar/resource/")) == before
        assert {lang: rows(run.out / f"eurlex-{lang}") for lang in LANGS} == third
