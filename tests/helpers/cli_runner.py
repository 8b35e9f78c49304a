"""Helpers for the source tests: config files for the CLI, and reading what a build wrote."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner, Result
from huggingface_hub.repocard import metadata_load

from loralay_build.cli import main
from loralay_build.corpus.schema import dataset_schema
from loralay_build.sources.base import Source

FAST = {"run": {"workers": 1, "timeout": 30.0}, "filters": {"enabled": False}}


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def write_config(path: Path, *tables: dict[str, Any]) -> Path:
    """TOML file merging the given overlays (section -> key -> value), later ones winning."""
    merged: dict[str, dict[str, Any]] = {}
    for table in tables:
        for section, values in table.items():
            merged.setdefault(section, {}).update(values)
    path.write_text("".join(
        f"[{section}]\n" + "".join(f"{k} = {_value(v)}\n" for k, v in values.items())
        for section, values in merged.items()
    ), encoding="utf-8")
    return path


def invoke_cli(*args: str) -> Result:
    """Run `build-corpus` in this interpreter through click's runner; click's `Result`."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def published_splits(dataset_dir: Path) -> dict[str, str]:
    """article_id -> split, from the Parquet shards' file names."""
    out = {}
    for shard in dataset_dir.glob("*.parquet"):
        split = shard.name.split("-")[0]
        for article_id in pq.read_table(shard, columns=["article_id"]).column(0).to_pylist():
            out[article_id] = split
    return out


def rows(dataset_dir: Path) -> dict[str, dict[str, Any]]:
    """Every published row by article_id."""
    out = {}
    for shard in dataset_dir.glob("*.parquet"):
        for row in pq.read_table(shard).to_pylist():
            out[row["article_id"]] = row
    return out


def rejects(dataset_dir: Path) -> dict[str, str]:
    lines = (dataset_dir / "rejects.jsonl").read_text().splitlines()
    return {r["id"]: r["reason"] for r in map(json.loads, lines)}


def status(out: Path, dataset: str) -> dict[str, Any]:
    result = invoke_cli("status", str(out / dataset), "--json")
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.output)[dataset]
    return report


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == []


def assert_dataset_schema(dataset_dir: Path, source: type[Source],
                          unfilled: tuple[str, ...] = ()) -> None:
    """The dataset has the core columns and its source's, none of them empty in every row
    (but `unfilled`, columns the source declares that these documents happen not to fill),
    and loads typed as its card declares (`assert_card_features`)."""
    assert set(unfilled) <= set(source.columns)
    tables = [pq.read_table(p) for p in sorted(dataset_dir.glob("*-of-*.parquet"))]
    assert tables
    schema = dataset_schema(source.columns)
    assert all(t.schema.remove_metadata().equals(schema) for t in tables)
    empty = {name for name in schema.names
             if all(_empty(v) for t in tables for v in t.column(name).to_pylist())}
    assert empty == set(unfilled), f"columns empty in every row: {sorted(empty)}"
    assert_card_features(dataset_dir, schema)


def assert_card_features(dataset_dir: Path, schema: pa.Schema) -> None:
    """`datasets` types the columns exactly as the card declares them, which is also how
    the shards store them (`schema`)."""
    card = metadata_load(dataset_dir / "README.md") or {}
    info = {c["config_name"]: c for c in card["dataset_info"]}
    declared = datasets.Features._from_yaml_list(info["default"]["features"])
    assert declared == datasets.Features.from_arrow_schema(schema)
    with tempfile.TemporaryDirectory() as cache:
        loaded = datasets.load_dataset(str(dataset_dir), cache_dir=cache)
    assert loaded, "no split loaded"
    for split in loaded.values():
        assert split.features == declared
        # `datasets` keeps the stored types (it only drops the id's not-null flag).
        assert split.data.schema.remove_metadata().equals(
            pa.schema([f.with_nullable(True) for f in schema]))
