"""Licences: every source's spellings as SPDX ids, the licence filter, cards, and takedowns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

from loralay_build.errors import ConfigError
from loralay_build.licences import (
    HUB_LICENCES,
    KNOWN,
    check_patterns,
    hub_id,
    hub_licences,
    hub_other,
    redistributable,
    to_spdx,
)
from loralay_build.sources.scielo.discover import licence_of
from loralay_build.state import REMOVED, State
from tests.helpers.cli import hub_licence_faults, run_cli_in_process
from tests.helpers.local import make_corpus, write_manifest

# Values each real service documents, and the SPDX id each must become.
REAL_VALUES = {
    "arxiv": {
        "http://arxiv.org/licenses/nonexclusive-distrib/1.0/":
            "LicenseRef-arXiv-nonexclusive-distrib-1.0",
        "http://arxiv.org/licenses/assumed-1991-2003/": "LicenseRef-arXiv-assumed-1991-2003",
        "http://creativecommons.org/licenses/by/3.0/": "CC-BY-3.0",
        "http://creativecommons.org/licenses/by/4.0/": "CC-BY-4.0",
        "http://creativecommons.org/licenses/by-sa/4.0/": "CC-BY-SA-4.0",
        "http://creativecommons.org/licenses/by-nc-sa/3.0/": "CC-BY-NC-SA-3.0",
        "http://creativecommons.org/licenses/by-nc-sa/4.0/": "CC-BY-NC-SA-4.0",
        "http://creativecommons.org/licenses/by-nc-nd/4.0/": "CC-BY-NC-ND-4.0",
        "http://creativecommons.org/licenses/publicdomain/": "CC-PDDC",
        "http://creativecommons.org/publicdomain/zero/1.0/": "CC0-1.0",
        "": "NOASSERTION",
    },
    "pubmed": {
        "CC BY": "LicenseRef-CC-BY", "CC BY-NC": "LicenseRef-CC-BY-NC",
        "CC BY-NC-ND": "LicenseRef-CC-BY-NC-ND", "CC BY-SA": "LicenseRef-CC-BY-SA",
        "CC BY-ND": "LicenseRef-CC-BY-ND", "CC0": "CC0-1.0", "TDM": "LicenseRef-PMC-TDM",
        "": "NOASSERTION", "none": "NOASSERTION",
    },
    "hal": {
        "http://creativecommons.org/licenses/by/": "LicenseRef-CC-BY",
        "http://creativecommons.org/licenses/by/4.0/": "CC-BY-4.0",
        "http://creativecommons.org/licenses/by-nc-nd/": "LicenseRef-CC-BY-NC-ND",
        "http://creativecommons.org/licenses/by-nc-sa/4.0/": "CC-BY-NC-SA-4.0",
        "http://creativecommons.org/publicdomain/zero/1.0/": "CC0-1.0",
        "http://hal.archives-ouvertes.fr/licences/etalab/": "etalab-2.0",
        "http://hal.archives-ouvertes.fr/licences/copyright/": "LicenseRef-all-rights-reserved",
        "http://hal.archives-ouvertes.fr/licences/publicDomain/": "LicenseRef-HAL-public-domain",
        "Attribution - NonCommercial - NoDerivatives": "LicenseRef-CC-BY-NC-ND",
        "http://creativecommons.org/choose/mark/": "CC-PDM-1.0",
        "Domaine public": "LicenseRef-HAL-public-domain",
        "ETALAB - Licence Ouverte": "etalab-2.0",
        "Copyright (Tous droits réservés)": "LicenseRef-all-rights-reserved",
        "": "NOASSERTION",
    },
    "scielo": {
        "by": "LicenseRef-CC-BY", "by-nc": "LicenseRef-CC-BY-NC", "BY-NC": "LicenseRef-CC-BY-NC",
        "by/4.0": "CC-BY-4.0", "by-nc/3.0": "CC-BY-NC-3.0",
        "http://creativecommons.org/licenses/by-nc/3.0/": "CC-BY-NC-3.0",
        "http://creativecommons.org/licenses/by-nc/4.0/deed.pt": "CC-BY-NC-4.0",
        "BY/4.0": "CC-BY-4.0",
        "journal: http://creativecommons.org/licenses/by-nc/3.0/": "CC-BY-NC-3.0",
        "journal: BY-NC": "LicenseRef-CC-BY-NC",
    },
    "openreview": {
        "CC BY 4.0": "CC-BY-4.0", "CC BY-SA 4.0": "CC-BY-SA-4.0", "CC0 1.0": "CC0-1.0",
        "CC BY-NC 4.0": "CC-BY-NC-4.0", "CC BY-NC-SA 4.0": "CC-BY-NC-SA-4.0",
        "CC BY-ND 4.0": "CC-BY-ND-4.0", "CC BY-NC-ND 4.0": "CC-BY-NC-ND-4.0",
    },
    "eurlex": {"": "CC-BY-4.0", "CC-BY-4.0": "CC-BY-4.0"},
    "koreascience": {
        "": "NOASSERTION", "http://creativecommons.org/licenses/by-nc/4.0/": "CC-BY-NC-4.0",
    },
    "local": {
        "CC-BY-4.0": "CC-BY-4.0", "cc0-1.0": "CC0-1.0", "weird licence": "NOASSERTION",
        "http://creativecommons.org/licenses/by/3.0/de/": "CC-BY-3.0-DE",
        "Attribution 4.0 International (CC BY 4.0)": "CC-BY-4.0",
        "http://arxiv.org/licenses/nonexclusive-distrib/1.0/":
            "LicenseRef-arXiv-nonexclusive-distrib-1.0",
    },
}

# Forms Creative Commons and arXiv URLs take in real records, which every source must read
# alike (one recogniser): the scheme, the version, the locale of the deed, the legal code,
# IGO ports, the public-domain tools, and SPDX ids in any case.
URL_FORMS = {
    "https://creativecommons.org/licenses/by/4.0/": "CC-BY-4.0",
    "http://www.creativecommons.org/licenses/by-sa/4.0": "CC-BY-SA-4.0",
    "http://creativecommons.org/licenses/by-nc/4.0/deed.pt_BR": "CC-BY-NC-4.0",
    "https://creativecommons.org/licenses/by/4.0/deed.en_GB": "CC-BY-4.0",
    "https://creativecommons.org/licenses/by-nc-nd/4.0/deed.zh-hans": "CC-BY-NC-ND-4.0",
    "https://creativecommons.org/licenses/by/4.0/legalcode": "CC-BY-4.0",
    "https://creativecommons.org/licenses/by-sa/4.0/legalcode.de": "CC-BY-SA-4.0",
    "https://creativecommons.org/licenses/by/4.0/legalcode.txt": "CC-BY-4.0",
    "http://creativecommons.org/licenses/by-nc-sa/": "LicenseRef-CC-BY-NC-SA",
    "https://creativecommons.org/licenses/by/3.0/igo/": "CC-BY-3.0-IGO",
    "https://creativecommons.org/licenses/by-nc/3.0/igo/legalcode": "CC-BY-NC-3.0-IGO",
    "https://creativecommons.org/licenses/by-nd/3.0/igo/": "LicenseRef-CC-BY-ND-3.0-IGO",
    "https://creativecommons.org/licenses/by-sa/2.1/jp/": "CC-BY-SA-2.1-JP",
    "http://creativecommons.org/licenses/by-nd-nc/1.0/": "CC-BY-NC-ND-1.0",
    "http://creativecommons.org/licenses/publicdomain/": "CC-PDDC",
    "https://creativecommons.org/publicdomain/mark/1.0/deed.fr": "CC-PDM-1.0",
    "http://creativecommons.org/choose/mark/": "CC-PDM-1.0",
    "https://creativecommons.org/publicdomain/zero/1.0/legalcode": "CC0-1.0",
    "https://arxiv.org/licenses/nonexclusive-distrib/1.0":
        "LicenseRef-arXiv-nonexclusive-distrib-1.0",
    "http://arxiv.org/licenses/assumed-1991-2003/": "LicenseRef-arXiv-assumed-1991-2003",
    "cc-by-nc-3.0-igo": "CC-BY-NC-3.0-IGO",
    "cc-pdm-1.0": "CC-PDM-1.0",
    "CC BY-NC 3.0 IGO": "CC-BY-NC-3.0-IGO",
}


@pytest.mark.parametrize("source", sorted(REAL_VALUES))
def test_every_documented_value_maps_to_its_spdx_id(source: str) -> None:
    assert {raw: to_spdx(source, raw) for raw in REAL_VALUES[source]} == REAL_VALUES[source]


@pytest.mark.parametrize("source", ["arxiv", "hal", "pubmed", "scielo", "openreview",
                                    "koreascience", "local"])
def test_every_source_reads_every_url_form_alike(source: str) -> None:
    assert {raw: to_spdx(source, raw) for raw in URL_FORMS} == URL_FORMS


def test_a_journal_licence_is_the_fallback_of_a_scielo_article() -> None:
    # The journal (`title`) fields as SciELO's ArticleMeta serves them (xylose's recorded
    # full_document.json); the article states no licence of its own.
    statement = ('<a rel="license" href="http://creativecommons.org/licenses/by-nc/3.0/">'
                 '<img alt="Creative Commons License" /></a> Todo el contenido de esta revista')
    record = {"title": {"v540": [{"t": statement}], "v541": [{"_": "BY-NC"}]}, "article": {}}
    licence = licence_of(record, record["article"])
    assert licence == "journal: http://creativecommons.org/licenses/by-nc/3.0/"
    assert to_spdx("scielo", licence) == "CC-BY-NC-3.0"
    record["title"] = {"v541": [{"_": "BY/4.0"}]}
    assert to_spdx("scielo", licence_of(record, {})) == "CC-BY-4.0"
    record["title"] = {"v541": [{"_": "nd"}]}  # "not defined": no licence
    assert licence_of(record, {}) == ""
    own = {**record, "license": "by"}
    assert licence_of(own, {}) == "by"


def test_hub_ids_come_only_from_the_hubs_list() -> None:
    for spdx in sorted(KNOWN):
        assert hub_id(spdx) in HUB_LICENCES | {None}, spdx
    refused = ["CC-BY-SA-3.0-IGO", "CC-BY-1.0", "CC-BY-SA-2.5", "CC-BY-ND-3.0", "CC-BY-3.0-US",
               "CC-BY-NC-SA-2.0-FR", "CC-PDDC", "CC-PDM-1.0", "LicenseRef-CC-BY"]
    assert {spdx: hub_id(spdx) for spdx in refused} == dict.fromkeys(refused)
    assert hub_licences(["CC-BY-ND-3.0", "NOASSERTION", "PDDL-1.0"]) == [
        "pddl", "unknown", "other"]
    assert hub_other(["CC-BY-4.0", "LicenseRef-CC-BY-ND-3.0-IGO"]) == (
        "cc-by-nd-3.0-igo", "https://creativecommons.org/licenses/by-nd/3.0/igo/")
    assert hub_other(["CC-PDDC"]) == ("cc-pddc", "https://spdx.org/licenses/CC-PDDC.html")
    assert hub_other(["CC-BY-4.0", "NOASSERTION"]) is None


def test_redistributable_group_and_hub_ids() -> None:
    assert redistributable("CC-BY-4.0") and redistributable("CC-BY-SA-3.0")
    assert redistributable("CC0-1.0") and redistributable("LicenseRef-CC-BY")
    for restricted in ("CC-BY-NC-4.0", "CC-BY-ND-4.0", "LicenseRef-CC-BY-NC",
                       "LicenseRef-arXiv-nonexclusive-distrib-1.0", "NOASSERTION",
                       "LicenseRef-PMC-TDM"):
        assert not redistributable(restricted), restricted
    assert hub_licences(["CC-BY-4.0", "CC0-1.0"]) == ["cc-by-4.0", "cc0-1.0"]
    assert hub_licences(["CC-BY-NC-4.0", "NOASSERTION"]) == ["cc-by-nc-4.0", "unknown"]
    assert redistributable("CC-PDDC") and redistributable("CC-PDM-1.0")


def test_unknown_licence_patterns_name_the_closest_ids() -> None:
    assert check_patterns(["CC-BY-*", "redistributable", "CC0-1.0"]) == (
        "CC-BY-*", "redistributable", "CC0-1.0")
    with pytest.raises(ConfigError, match=r"did you mean CC-BY-4\.0"):
        check_patterns(["CC-BY-40"])


LICENCES = [
    "http://creativecommons.org/licenses/by/4.0/",  # URL
    "CC BY-NC",  # short, no version
    "",  # nothing stated
    "my own terms",  # unknown
    "CC0-1.0",  # SPDX
]


def _corpus(tmp_path: Path, n: int = 5) -> tuple[Path, list[dict[str, object]]]:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, n)
    for entry, licence in zip(entries, LICENCES, strict=False):
        entry["licence"] = licence
    return docs, entries


def _build(manifest: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                              "1", "--no-filter", *extra)


def _rows(folder: Path) -> dict[str, dict[str, object]]:
    return {row["article_id"]: row for path in folder.glob("*.parquet")
            for row in pq.read_table(path).to_pylist()}


def test_mixed_licences_give_spdx_rows_and_card(tmp_path: Path) -> None:
    docs, entries = _corpus(tmp_path)
    out = tmp_path / "out"
    result = _build(write_manifest(docs / "m.jsonl", entries), out)
    assert result.returncode == 0, result.stderr
    rows = _rows(out / "local")
    assert {k: (r["licence"], r["licence_source"]) for k, r in rows.items()} == {
        "local:doc0": ("CC-BY-4.0", "http://creativecommons.org/licenses/by/4.0/"),
        "local:doc1": ("LicenseRef-CC-BY-NC", "CC BY-NC"),
        "local:doc2": ("NOASSERTION", None),
        "local:doc3": ("NOASSERTION", "my own terms"),
        "local:doc4": ("CC0-1.0", "CC0-1.0"),
    }
    card = (out / "local" / "README.md").read_text()
    data = DatasetCard.load(out / "local" / "README.md").data
    assert data.license == ["cc-by-4.0", "cc0-1.0", "unknown", "other"]
    assert (data.license_name, data.license_link) == (
        "cc-by-nc", "https://creativecommons.org/licenses/by-nc/")
    assert "| `NOASSERTION` |" in card and "**Warning:** 3 documents" in card
    build = json.loads((out / "local" / "build.json").read_text())
    assert sum(sum(v.values()) for v in build["licences"].values()) == 5
    loaded = datasets.load_dataset(str(out / "local"))
    assert "licence_source" in loaded["train"].column_names
    stats = run_cli_in_process("stats", str(out / "local"), "--json")
    assert json.loads(stats.stdout)["licences"] == build["licences"], stats.stderr
    assert "CC0-1.0*:" in run_cli_in_process("stats", str(out / "local")).stdout
    report = run_cli_in_process("report", str(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert "| local | LicenseRef-CC-BY-NC |" in (tmp_path / "report" / "report.md").read_text()


def test_licence_filter_keeps_exactly_the_matching_rows_and_widens_without_download(
        tmp_path: Path) -> None:
    docs, entries = _corpus(tmp_path)
    manifest = write_manifest(docs / "m.jsonl", entries)
    out = tmp_path / "out"
    result = _build(manifest, out, "--licences", "redistributable")
    assert result.returncode == 0, result.stderr
    assert set(_rows(out / "local")) == {"local:doc0", "local:doc4"}
    rejects = [json.loads(x) for x in (out / "local" / "rejects.jsonl").read_text().splitlines()]
    assert {r["id"]: r["reason"] for r in rejects} == {
        "local:doc1": "licence", "local:doc2": "licence", "local:doc3": "licence"}
    result = _build(manifest, out, "--licences", "CC-BY-*,LicenseRef-CC-BY-*,NOASSERTION")
    assert result.returncode == 0, result.stderr
    assert set(_rows(out / "local")) == {"local:doc0", "local:doc1", "local:doc2", "local:doc3"}
    # A narrower filter drops processed documents at publish, without processing them again.
    blobs = sorted(p.name for p in (out / ".loralay" / "blobs").rglob("*") if p.is_file())
    result = _build(manifest, out, "--licences", "CC0-1.0,CC-BY-4.0")
    assert result.returncode == 0, result.stderr
    assert set(_rows(out / "local")) == {"local:doc0", "local:doc4"}
    assert sorted(p.name for p in (out / ".loralay" / "blobs").rglob("*") if p.is_file()) == blobs


def test_bad_licence_input_is_a_one_line_usage_error(tmp_path: Path) -> None:
    docs, entries = _corpus(tmp_path, 2)
    out = tmp_path / "out"
    result = _build(write_manifest(docs / "m.jsonl", entries), out, "--licences", "CC-BY-40")
    assert result.returncode == 2
    assert "did you mean CC-BY-4.0" in result.stderr and "Traceback" not in result.stderr
    entries[1]["licence"] = {"id": "CC-BY-4.0"}
    result = _build(write_manifest(docs / "bad.jsonl", entries), tmp_path / "out2")
    assert result.returncode == 2, result.stderr
    assert "line 2: 'licence' must be a string" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_removed_document_never_comes_back(tmp_path: Path) -> None:
    docs, entries = _corpus(tmp_path, 4)
    manifest = write_manifest(docs / "m.jsonl", entries[:3])
    out = tmp_path / "out"
    assert _build(manifest, out).returncode == 0
    ids = tmp_path / "takedown.txt"
    ids.write_text("doc1\n")
    result = run_cli_in_process("remove", str(out), "--dataset", "local", "--ids", str(ids),
                                "--reason", "copyright request")
    assert result.returncode == 0, result.stderr
    assert set(_rows(out / "local")) == {"local:doc0", "local:doc2"}
    card = (out / "local" / "README.md").read_text()
    assert "1 document(s) were taken down" in card
    # A crawl, a retry and a grown manifest: it stays down.
    assert _build(manifest, out).returncode == 0
    assert run_cli_in_process("retry", str(out), "--dataset", "local", "--reason",
                              "licence,corrupted").returncode == 0
    # Grown, and the taken-down record listed again with new metadata.
    entries[1]["title"] = f"{entries[1]['title']} (corrected)"
    grown = write_manifest(docs / "m.jsonl", entries)
    assert _build(grown, out).returncode == 0
    assert set(_rows(out / "local")) == {"local:doc0", "local:doc2", "local:doc3"}
    status = run_cli_in_process("status", str(out), "--json")
    assert json.loads(status.stdout)["local"]["statuses"].get(REMOVED) == 1, \
        status.stdout
    state = State(out)
    try:
        row = next(r for r in state.rows("local") if r.candidate.id == "local:doc1")
    finally:
        state.close()
    assert row.status == REMOVED and row.detail and "copyright request" in row.detail


def test_remove_refuses_unknown_ids_and_a_held_lock(tmp_path: Path) -> None:
    docs, entries = _corpus(tmp_path, 2)
    out = tmp_path / "out"
    assert _build(write_manifest(docs / "m.jsonl", entries), out).returncode == 0
    before = {p.name: p.read_bytes() for p in (out / "local").iterdir()}
    ids = tmp_path / "ids.txt"
    ids.write_text("doc0\nnot-there\n")
    result = run_cli_in_process("remove", str(out), "--dataset", "local", "--ids", str(ids))
    assert result.returncode == 1 and "not-there" in result.stderr
    assert {p.name: p.read_bytes() for p in (out / "local").iterdir()} == before
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from loralay_build.state import State; "
         "lock = State(Path(sys.argv[1])).lock('local'); lock.__enter__(); print('held', "
         "flush=True); time.sleep(60)", str(out)],
        stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        ids.write_text("doc0\n")
        result = run_cli_in_process("remove", str(out), "--dataset", "local", "--ids", str(ids))
        assert result.returncode == 75, result.stderr
    finally:
        holder.kill()
        holder.wait()
    assert {p.name: p.read_bytes() for p in (out / "local").iterdir()} == before


def test_remove_finishes_the_job_after_a_kill_between_marking_and_publishing(
        tmp_path: Path) -> None:
    docs, entries = _corpus(tmp_path, 3)
    out = tmp_path / "out"
    assert _build(write_manifest(docs / "m.jsonl", entries), out).returncode == 0
    state = State(out)
    try:  # what a run killed right after marking leaves behind
        state.remove("local", ["local:doc2"], "2026-01-01: killed")
    finally:
        state.close()
    assert "local:doc2" in _rows(out / "local")  # the previous version is intact
    ids = tmp_path / "ids.txt"
    ids.write_text("local:doc2\n")
    result = run_cli_in_process("remove", str(out), "--dataset", "local", "--ids", str(ids))
    assert result.returncode == 0, result.stderr
    assert set(_rows(out / "local")) == {"local:doc0", "local:doc1"}


def test_an_entry_dropped_from_the_manifest_leaves_and_may_come_back(tmp_path: Path) -> None:
    docs, entries = _corpus(tmp_path, 3)
    out = tmp_path / "out"
    assert _build(write_manifest(docs / "m.jsonl", entries), out).returncode == 0
    assert _build(write_manifest(docs / "m.jsonl", entries[:2]), out).returncode == 0
    assert set(_rows(out / "local")) == {"local:doc0", "local:doc1"}
    assert _build(write_manifest(docs / "m.jsonl", entries), out).returncode == 0
    assert set(_rows(out / "local")) == {"local:doc0", "local:doc1", "local:doc2"}


def test_a_card_with_licences_outside_the_hubs_list_says_other_with_name_and_link(
        tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 3)
    real = ["http://arxiv.org/licenses/nonexclusive-distrib/1.0/",  # an arXiv record's
            "https://creativecommons.org/licenses/by-nd/3.0/igo/",  # no SPDX id, no Hub id
            "http://creativecommons.org/licenses/by/4.0/deed.en_GB"]
    for entry, licence in zip(entries, real, strict=True):
        entry["licence"] = licence
    out = tmp_path / "out"
    result = _build(write_manifest(docs / "m.jsonl", entries), out)
    assert result.returncode == 0, result.stderr
    build = json.loads((out / "local" / "build.json").read_text())
    assert sorted(build["licences"]) == [
        "CC-BY-4.0", "LicenseRef-CC-BY-ND-3.0-IGO", "LicenseRef-arXiv-nonexclusive-distrib-1.0"]
    card = out / "local" / "README.md"
    data = DatasetCard.load(card).data
    assert data.license == ["cc-by-4.0", "other"]
    assert (data.license_name, data.license_link) == ("several-licences", "README.md")
    assert hub_licence_faults(card) == []
    # One licence outside the list: the card names it and links its terms.
    result = _build(write_manifest(docs / "m.jsonl", entries[1:]), out)
    assert result.returncode == 0, result.stderr
    data = DatasetCard.load(card).data
    assert data.license == ["cc-by-4.0", "other"]
    assert (data.license_name, data.license_link) == (
        "cc-by-nd-3.0-igo", "https://creativecommons.org/licenses/by-nd/3.0/igo/")
    assert hub_licence_faults(card) == []
