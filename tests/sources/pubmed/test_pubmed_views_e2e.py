"""`build-corpus pubmed --view sumpubmed --view citations` end to end against the PMC fake."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import pytest

from loralay_build.sandbox.pubmed import PubmedSandbox
from loralay_build.sandbox.pubmed_jats import ACK, CAPTION, FOOTNOTE, TABLE_CELL
from loralay_build.sandbox.server import SandboxServer
from loralay_build.views.schema import view_layout
from tests.helpers.cli_runner import (
    FAST,
    assert_card_features,
    invoke_cli,
    published_splits,
    write_config,
)

OAI = "/pmc/api/oai/v1/mh/"


@pytest.fixture
def pmc_box() -> Iterator[PubmedSandbox]:
    with SandboxServer() as server:
        yield PubmedSandbox(server, n_docs=10)


def _rows(folder: Path, key: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """key -> (split, row) over every shard of a dataset folder."""
    import pyarrow.parquet as pq

    out = {}
    for shard in folder.glob("*.parquet"):
        for row in pq.read_table(shard).to_pylist():
            out[str(row[key])] = (shard.name.split("-")[0], row)
    return out


def _cited_lookups(box: PubmedSandbox) -> int:
    """GetRecord calls for papers only cited (known to PMC or not), never crawled."""
    return sum(1 for e in box.server.requests(OAI) if "verb=GetRecord" in e.query
               and ("%3A700000" in e.query or "%3A900000" in e.query))


def test_three_datasets_same_splits_and_resolution(pmc_box: PubmedSandbox,
                                                   tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", pmc_box.client_config(), FAST)
    out = tmp_path / "data"
    splits = pmc_box.write_split_dir(tmp_path / "splits")  # every split gets articles
    args = ("pubmed", "--out", str(out), "--config", str(config), "--split-ids", str(splits),
            "--view", "sumpubmed", "--view", "citations")
    result = invoke_cli(*args)
    assert result.exit_code == 0, result.output
    for name in ("pubmed", "pubmed-sumpubmed", "pubmed-citations"):
        loaded = datasets.load_dataset(str(out / name))
        assert set(loaded) == {"train", "validation", "test"}
    for view in ("sumpubmed", "citations"):
        known = view_layout(view)
        assert known is not None
        assert_card_features(out / f"pubmed-{view}", known[0])
    layout = published_splits(out / "pubmed")
    clean = _rows(out / "pubmed-sumpubmed", "article_id")
    cites = _rows(out / "pubmed-citations", "citation_id")
    assert set(clean) == set(layout) and len({s for s, _ in clean.values()}) > 1
    for article_id, (split, row) in clean.items():
        assert split == layout[article_id]
        text = str(row["text"])
        for never in (CAPTION, TABLE_CELL, FOOTNOTE, ACK, "References"):
            assert never not in text
        assert "<cit>" in text and "[" not in text
    assert cites and all(split == layout[str(row["article_id"])] for split, row in cites.values())
    cited = {(str(r["article_id"]), c["ref_id"]): c for _, r in cites.values()
             for c in r["cited"]}
    some = next(iter(clean))
    assert cited[(some, "R1")]["resolved_from"] == "state"  # an article of this crawl
    assert cited[(some, "R2")]["resolved_from"] == "state"  # matched by DOI
    assert cited[(some, "R3")]["resolved_from"] == "oai"  # GetRecord pmc_fm
    via_pmid = cited[(some, "R9")]  # PMID only: ID converter -> PMCID -> GetRecord
    assert via_pmid["resolved_from"] == "oai" and via_pmid["pmcid"].startswith("PMC700000")
    assert (some, "R6") not in cited  # its sentence cites nothing resolvable: no record
    unknown = cited[(some, "R5")]  # a PMCID PMC does not know: flagged, never guessed
    assert unknown["resolved"] is False and unknown["abstract"] == ""
    assert unknown["pmcid"] and unknown["title"]
    ranged = [r for _, r in cites.values() if r["article_id"] == some
              and [c["ref_id"] for c in r["cited"]] == ["R3", "R4", "R5"]]
    assert ranged and str(ranged[0]["citation_text"]).endswith("[1, 2, 3].")
    build = json.loads((out / "pubmed-citations" / "build.json").read_text())
    assert 0 < build["counts"]["cited_resolved"] < build["counts"]["cited"]
    assert "citation_text" in (out / "pubmed-citations" / "README.md").read_text()
    # A second run rebuilds the views from stored JATS and cached abstracts: nothing fetched.
    xml_before = len([e for e in pmc_box.server.requests() if e.path.endswith(".xml")])
    lookups = _cited_lookups(pmc_box)
    conversions = len(pmc_box.server.requests("/pmc/tools/idconv/api/v1/articles/"))
    assert lookups > 0 and conversions > 0
    assert invoke_cli(*args).exit_code == 0
    assert len([e for e in pmc_box.server.requests() if e.path.endswith(".xml")]) == xml_before
    assert _cited_lookups(pmc_box) == lookups
    assert len(pmc_box.server.requests("/pmc/tools/idconv/api/v1/articles/")) == conversions
    assert _rows(out / "pubmed-citations", "citation_id").keys() == cites.keys()


def test_strict_resolution_bmc_selection_and_lowercase(pmc_box: PubmedSandbox,
                                                       tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", pmc_box.client_config(), FAST)
    out = tmp_path / "data"
    result = invoke_cli("pubmed", "--out", str(out), "--config", str(config), "--selection", "bmc",
                        "--view", "citations", "--view", "sumpubmed", "--min-resolved", "1",
                        "--lowercase", "--no-dig")
    assert result.exit_code == 0, result.output
    clean = _rows(out / "pubmed-sumpubmed", "article_id")
    assert clean and {r["journal"] for _, r in clean.values()} == {"BMC Biology"}
    assert all(str(r["text"]) == str(r["text"]).lower() and "<dig>" not in str(r["text"])
               for _, r in clean.values())
    records = _rows(out / "pubmed-citations", "citation_id")
    assert records
    assert all(r["n_resolved"] == r["n_cited"] for _, r in records.values())
    bad = invoke_cli("pubmed", "--out", str(out), "--config", str(config), "--selection", "nope")
    assert bad.exit_code == 2 and "unknown selection" in bad.output


def test_full_text_from_the_bucket_or_from_oai(pmc_box: PubmedSandbox, tmp_path: Path) -> None:
    """Without a bucket XML, or with one failing its MD5, the JATS comes from GetRecord `pmc`,
    namespaced but the same body; a record PMC does not disseminate in full is a clear
    reject."""
    from loralay_build.blobs import BlobStore
    from loralay_build.errors import Reject
    from loralay_build.http import HttpClient
    from loralay_build.records import Candidate
    from loralay_build.safexml import parse_xml
    from loralay_build.sources import load_settings
    from loralay_build.sources.pubmed.body import read_body
    from loralay_build.sources.pubmed.discover import fetch_jats

    settings = load_settings("pubmed", None, overrides=pmc_box.client_config())
    client = HttpClient(settings.http, trusted_urls=[pmc_box.oai_url])
    blobs = BlobStore(tmp_path / "blobs")
    article = pmc_box.articles[5_000_001]
    xml_url = f"https://pmc-oa-opendata.s3.amazonaws.com/{article.name}.1/{article.name}.1.xml"
    md5 = hashlib.md5(article.xml()).hexdigest()
    bucket = Candidate("pubmed:x", "pubmed", article.name, "pubmed",
                       extra={"xml_url": xml_url, "xml_md5": md5})
    oai = Candidate("pubmed:x", "pubmed", article.name, "pubmed")
    bodies = [read_body(parse_xml(blobs.path(fetch_jats(c, client, blobs, pmc_box.oai_url))
                                  .read_bytes())) for c in (bucket, oai)]
    assert bodies[0] == bodies[1] and bodies[0].sections
    corrupt = Candidate("pubmed:x", "pubmed", article.name, "pubmed",
                        extra={"xml_url": xml_url, "xml_md5": "0" * 32})
    before = len(pmc_box.server.requests(OAI))
    sha = fetch_jats(corrupt, client, blobs, pmc_box.oai_url)  # md5 fails: OAI instead
    assert read_body(parse_xml(blobs.path(sha).read_bytes())) == bodies[1]
    assert len(pmc_box.server.requests(OAI)) == before + 1
    not_oa = next(a for a in pmc_box.articles.values() if a.behaviour == "not_oa")
    with pytest.raises(Reject, match="cannotDisseminateFormat"):
        fetch_jats(Candidate("pubmed:y", "pubmed", not_oa.name, "pubmed"), client, blobs,
                   pmc_box.oai_url)


def test_full_text_not_fetched_yet_is_a_partial_run(pmc_box: PubmedSandbox,
                                                    tmp_path: Path) -> None:
    """A bucket XML answering 503 leaves its article out of the views for now: the run exits
    3 (pending work, like a download waiting for a retry), and the next run fetches it."""
    from loralay_build.sandbox.pubmed import CLOUD_HOST
    from loralay_build.sandbox.server import Reply, Request

    first = min(pmc_box.articles.values(), key=lambda a: a.pmcid)
    down = {"on": True}
    cloud = pmc_box._cloud

    def flaky(req: Request) -> Reply:
        if down["on"] and req.path.endswith(f"{first.name}.1.xml"):
            return Reply(503, b"busy", {"Content-Type": "text/plain"})
        return cloud(req)

    pmc_box.server.route(f"/_host/{CLOUD_HOST}/{first.name}.", flaky)
    config = write_config(tmp_path / "c.toml", pmc_box.client_config(), FAST,
                          {"http": {"max_retries": 1, "backoff_base": 0.01}})
    out = tmp_path / "data"
    args = ("pubmed", "--out", str(out), "--config", str(config), "--view", "sumpubmed")
    result = invoke_cli(*args)
    assert result.exit_code == 3, result.output
    layout = published_splits(out / "pubmed")
    assert f"pubmed:{first.name}" in layout
    assert f"pubmed:{first.name}" not in _rows(out / "pubmed-sumpubmed", "article_id")
    down["on"] = False
    result = invoke_cli(*args)
    assert result.exit_code == 0, result.output
    assert set(_rows(out / "pubmed-sumpubmed", "article_id")) == set(layout)


def _layout_articles(box: PubmedSandbox) -> list[str]:
    """Names of the articles the layout dataset publishes (the fake's faults aside)."""
    return sorted(a.name for a in box.articles.values() if a.behaviour in ("ok", "two_versions")
                  and not a.deleted)


def _full_text_requests(box: PubmedSandbox) -> list[str]:
    """PMCIDs asked for with GetRecord `pmc` (the full text), in order."""
    out = []
    for e in box.server.requests(OAI):
        if "verb=GetRecord" in e.query and "metadataPrefix=pmc&" in e.query + "&":
            out.append("PMC" + e.query.split("%3A")[-1].split("&")[0])
    return out


def test_bucket_xml_missing_or_corrupt_falls_back_to_oai(pmc_box: PubmedSandbox,
                                                         tmp_path: Path) -> None:
    missing, corrupt = _layout_articles(pmc_box)[:2]
    pmc_box.xml_faults = {missing: "missing", corrupt: "corrupt"}
    config = write_config(tmp_path / "c.toml", pmc_box.client_config(), FAST)
    out = tmp_path / "data"
    result = invoke_cli("pubmed", "--out", str(out), "--config", str(config), "--view", "sumpubmed")
    assert result.exit_code == 0, result.output
    clean = _rows(out / "pubmed-sumpubmed", "article_id")
    assert set(clean) == set(published_splits(out / "pubmed"))
    assert {f"pubmed:{missing}", f"pubmed:{corrupt}"} <= set(clean)
    assert sorted(_full_text_requests(pmc_box)) == sorted([missing, corrupt])


def test_full_text_missing_everywhere_waits_for_a_later_run(pmc_box: PubmedSandbox,
                                                           tmp_path: Path) -> None:
    """A bucket 404 is not final for the views: with OAI not knowing the record either, the
    article waits (exit 3) and comes in once the file exists."""
    late = _layout_articles(pmc_box)[0]
    pmc_box.xml_faults = {late: "missing"}
    pmc_box.oai_full_text = {late: "unknown"}
    config = write_config(tmp_path / "c.toml", pmc_box.client_config(), FAST)
    out = tmp_path / "data"
    args = ("pubmed", "--out", str(out), "--config", str(config), "--view", "sumpubmed")
    assert invoke_cli(*args).exit_code == 3
    assert f"pubmed:{late}" not in _rows(out / "pubmed-sumpubmed", "article_id")
    pmc_box.xml_faults = {}
    result = invoke_cli(*args)
    assert result.exit_code == 0, result.output
    assert set(_rows(out / "pubmed-sumpubmed", "article_id")) == set(
        published_splits(out / "pubmed"))


def test_a_view_without_rows_beside_a_published_dataset_is_exit_3(
        pmc_box: PubmedSandbox, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    names = _layout_articles(pmc_box)
    pmc_box.xml_faults = {name: "missing" for name in names}
    pmc_box.oai_full_text = {name: "refused" for name in names}
    config = write_config(tmp_path / "c.toml", pmc_box.client_config(), FAST)
    out = tmp_path / "data"
    result = invoke_cli("pubmed", "--out", str(out), "--config", str(config), "--view", "sumpubmed")
    assert result.exit_code == 3, result.output
    assert published_splits(out / "pubmed") and not (out / "pubmed-sumpubmed").exists()
    reasons = [r.getMessage() for r in caplog.records if "has no rows although" in
               r.getMessage()]
    assert reasons == [f"view sumpubmed has no rows although pubmed has {len(names)}: "
                       f"{len(names)} of them without full text, 0 waiting for it (exit 3)"]


def test_a_takedown_leaves_the_views_too(pmc_box: PubmedSandbox, tmp_path: Path) -> None:
    """`remove` publishes the layout dataset again, and the source's step after publishing
    follows: the removed article leaves every view, the others stay."""
    config = write_config(tmp_path / "c.toml", pmc_box.client_config(), FAST)
    out = tmp_path / "data"
    result = invoke_cli("pubmed", "--out", str(out), "--config", str(config), "--view", "sumpubmed",
                        "--view", "citations")
    assert result.exit_code == 0, result.output
    before = set(_rows(out / "pubmed-sumpubmed", "article_id"))
    gone = min(before)
    ids = tmp_path / "takedown.txt"
    ids.write_text(f"{gone}\n")
    result = invoke_cli("remove", str(out), "--dataset", "pubmed", "--ids", str(ids))
    assert result.exit_code == 0, result.output
    assert set(published_splits(out / "pubmed")) == before - {gone}
    assert set(_rows(out / "pubmed-sumpubmed", "article_id")) == before - {gone}
    cites = _rows(out / "pubmed-citations", "citation_id")
    assert cites and gone not in {str(r["article_id"]) for _, r in cites.values()}
