"""Every read command on the PubMed views: they are text datasets, so each command checks
what applies to them and says so, instead of failing on layout columns they do not have."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from loralay_build.corpus.verify import verify_dataset
from loralay_build.sandbox.pubmed import PubmedSandbox
from loralay_build.sandbox.server import SandboxServer
from tests.helpers.cli import run_cli_in_process
from tests.helpers.cli_runner import FAST, invoke_cli, write_config
from tests.helpers.local import relist

VIEWS = ("pubmed-sumpubmed", "pubmed-citations")


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("views-commands")
    with SandboxServer() as server:
        box = PubmedSandbox(server, n_docs=6)
        config = write_config(tmp / "c.toml", box.client_config(), FAST)
        result = invoke_cli("pubmed", "--out", str(tmp / "data"), "--config", str(config),
                            "--split-ids", str(box.write_split_dir(tmp / "splits")), "--view",
                            "sumpubmed", "--view", "citations")
        assert result.exit_code == 0, result.output
    yield tmp / "data"


def test_verify_checks_a_view_against_its_own_schema(data: Path, tmp_path: Path) -> None:
    for name in VIEWS:
        result = run_cli_in_process("verify", str(data / name))
        assert result.returncode == 0 and result.stdout.strip().endswith(": ok"), (
            result.stdout + result.stderr)
    folder = tmp_path / "pubmed-citations"
    shutil.copytree(data / "pubmed-citations", folder)
    train = next(folder.glob("train-*.parquet"))
    copy = "validation-copy-00000-of-00001.parquet"
    pq.write_table(pq.read_table(train), folder / copy, compression="zstd",
                   write_page_checksum=True)
    build = json.loads((folder / "build.json").read_text())
    build["files"].append({"name": copy, "split": "validation"})
    (folder / "build.json").write_text(json.dumps(build))
    relist(folder)
    problems = "\n".join(verify_dataset(folder))
    assert "already in train-" in problems  # a citation id in two splits


def test_stats_status_inspect_and_report_say_what_applies(data: Path, tmp_path: Path) -> None:
    for name in VIEWS:
        view = name.split("-")[1]
        build = json.loads((data / name / "build.json").read_text())
        stats = run_cli_in_process("stats", str(data / name), "--json")
        assert stats.returncode == 0, stats.stderr
        figures = json.loads(stats.stdout)
        assert figures["view"] == view and figures["layout_dataset"] == "pubmed"
        assert {s: v["rows"] for s, v in figures["splits"].items()} == {
            s: n for s, n in build["counts"]["splits"].items() if n}
        text = run_cli_in_process("stats", str(data / name))
        assert text.returncode == 0 and f"the {view} view of pubmed" in text.stdout
        status = run_cli_in_process("status", str(data / name))
        assert status.returncode == 0 and f"the {view} view of pubmed" in status.stdout
        drawn = run_cli_in_process("inspect", str(data / name), "pubmed:PMC5000001", "--out",
                                   str(tmp_path / "x.png"))
        assert drawn.returncode == 2 and "give the layout dataset" in drawn.stderr
        assert len(drawn.stderr.strip().splitlines()) == 1
    everything = run_cli_in_process("status", str(data))
    assert everything.returncode == 0
    assert all(name in everything.stdout for name in ("pubmed", *VIEWS))
    report = run_cli_in_process("report", str(data), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    written = json.loads((tmp_path / "report" / "report.json").read_text())
    assert set(written["views"]) == set(VIEWS) and set(written["datasets"]) == {"pubmed"}
