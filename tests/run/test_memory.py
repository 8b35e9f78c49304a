"""Memory that does not grow with the corpus: `verify` of a large shard, each stage of the
build's parent between a 600- and a 2,400-document build, and `verify` still reporting every
problem."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from loralay_build.corpus.verify import verify_dataset
from loralay_build.inspect.locate import find_row
from loralay_build.sandbox.peak_rss import PeakRss
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess
from tests.helpers.local import make_corpus, relist, write_manifest


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real three-document dataset (generated PDFs, every split filled)."""
    root = tmp_path_factory.mktemp("memory")
    docs = root / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 3)
    for entry, split in zip(entries, ("train", "validation", "test"), strict=True):
        entry["split"] = split
    manifest = write_manifest(docs / "docs.jsonl", entries)
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(root / "data"),
                                "--executor", "serial", "--no-filter")
    assert result.returncode == 0, result.stderr
    return root / "data" / "local"


def _train(folder: Path) -> Path:
    return next(folder.glob("train-*.parquet"))


def test_verify_of_one_large_shard_stays_small(small: Path, tmp_path: Path) -> None:
    """One shard of 1,200 real rows (copies of a generated article, ids made distinct) in
    row groups of 200: verify in its own process stays under a bound that holding the shard
    as Python objects exceeds."""
    folder = tmp_path / "local"
    shutil.copytree(small, folder)
    shard = _train(folder)
    row = pq.read_table(shard)
    copies = 1200
    table = pa.concat_tables([row] * copies).combine_chunks()
    ids = pa.array([f"local:copy-{k}" for k in range(copies)], pa.string())
    table = table.set_column(0, table.schema.field(0), ids)
    pq.write_table(table, shard, row_group_size=200, compression="zstd",
                   write_page_checksum=True, use_dictionary=False, write_statistics=False)
    relist(folder)
    words = pc.sum(pc.list_value_length(table["article_words"])).as_py()
    assert words > 1_000_000  # the shard is large in Python objects
    proc = subprocess.Popen([sys.executable, "-m", "loralay_build.cli", "verify", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = PeakRss(proc.pid, interval=0.02)
    while proc.poll() is None:
        time.sleep(0.01)
    out, err = proc.communicate()
    peak, _ = sampler.stop()
    assert proc.returncode == 0, out + err
    # Holding the shard's rows as Python lists takes over 400 MiB here; one row group of
    # Arrow arrays about 30 MiB above the interpreter with pyarrow loaded.
    assert 0 < peak < 250, f"verify peaked at {peak:.0f} MiB"


PEAK_CHILD = textwrap.dedent("""
    import json, sys, tracemalloc
    from pathlib import Path
    from loralay_build.sandbox.local_corpus import synthetic_corpus
    from loralay_build.layout import OutputLayout
    from loralay_build.run import lifecycle
    from loralay_build.run.pipeline import Pipeline

    n, work = int(sys.argv[1]), Path(sys.argv[2])
    manifest = synthetic_corpus(work / "docs", n)
    # The interpreter's table of interned names grows in steps as work-file paths come and
    # go; it is grown here, before tracing, so that a one-time resize is not counted.
    names = [sys.intern(f"interned-name-{i}") for i in range(200_000)]
    del names
    # Freed tuples of up to 20 items are kept for reuse, 2,000 of each size, still counted as
    # allocated: those lists are filled here, so that filling them is not counted as growth.
    held = [tuple(range(size)) for size in range(1, 21) for _ in range(2000)]
    del held
    peaks = {}

    def measured(name):
        stage = getattr(Pipeline, name)
        def run(self):
            tracemalloc.reset_peak()
            try:
                stage(self)
            finally:
                peaks[name] = tracemalloc.get_traced_memory()[1]
        setattr(Pipeline, name, run)

    for name in STAGES:
        measured(name)
    def to_stderr(line):
        print(line, file=sys.stderr)

    tracemalloc.start()
    code = lifecycle.run_build("local", OutputLayout(work / "out"), None, None,
                               {"source": {"input": str(manifest)},
                                "filters": {"enabled": False}, "run": {"workers": 2},
                                "output": {"shard_rows": 100}},
                               None, None, False, notify=to_stderr).code
    print(json.dumps({"code": code, "peaks": peaks}))
""")
# KB of peak Python memory each stage of the parent may add per document (measured: 0.45,
# 0.16, 0.30 and 0.19 from 600 to 2,400 documents)
GROWTH_KB = {"discover": 0.55, "fetch": 0.25, "process": 0.4, "publish": 0.3}
STAGES = tuple(GROWTH_KB)


def _stage_peaks(n: int, work: Path) -> dict[str, float]:
    """Peak of the Python memory a build's parent allocates in each stage, in MiB, for n
    documents."""
    code = f"STAGES = {STAGES!r}\n{PEAK_CHILD}"
    done = subprocess.run([sys.executable, "-c", code, str(n), str(work)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0
    return {stage: peak / 2**20 for stage, peak in result["peaks"].items()}


@pytest.mark.slow
def test_build_parent_does_not_grow_with_the_corpus(tmp_path: Path) -> None:
    """From 600 to 2,400 documents each stage's peak Python memory in the parent grows by less
    than its GROWTH_KB a document. Each stage is measured apart: the peaks of different
    stages at the two sizes would compare unlike things (a stage growing with the corpus
    hidden under another's larger, fixed peak). Both sizes are past the batches that grow
    with a small corpus (500 manifest entries a discovery batch, 2,000 state rows a page).
    Discovery holds the ids of the whole manifest (to mark what it no longer lists);
    publishing's peak is set by its largest row group, which grows slowly with the number of
    groups. Holding a plan item (id and key) per document adds 0.23 KB to publishing, a
    candidate per document 1.05 KB to discovery, a state row per document 1.8 KB to
    fetching. The interpreter's lists of freed tuples are filled before the build starts:
    filling them during it would count as growth."""
    sizes = (600, 2400)
    small, large = (_stage_peaks(n, tmp_path / f"n{n}") for n in sizes)
    assert set(small) == set(large) == set(STAGES)
    added = sizes[1] - sizes[0]
    growth = {stage: 1024 * (large[stage] - small[stage]) / added for stage in STAGES}
    over = {stage: f"{kb:.2f} KB a document" for stage, kb in growth.items()
            if kb >= GROWTH_KB[stage]}
    assert not over, (over, small, large)


def test_verify_reports_every_problem(small: Path, tmp_path: Path) -> None:
    """Tampered bytes, a truncated shard, two shards swapped and an id in two splits."""
    cases = {}
    for case in ("tamper", "truncate", "swap", "twice"):
        folder = tmp_path / case / "local"
        shutil.copytree(small, folder)
        cases[case] = folder
    shard = _train(cases["tamper"])
    data = bytearray(shard.read_bytes())
    data[len(data) // 3] ^= 0x01
    shard.write_bytes(bytes(data))
    shard = _train(cases["truncate"])
    shard.write_bytes(shard.read_bytes()[:-100])
    train, test = _train(cases["swap"]), next(cases["swap"].glob("test-*.parquet"))
    train_bytes = train.read_bytes()
    train.write_bytes(test.read_bytes())
    test.write_bytes(train_bytes)
    train, test = _train(cases["twice"]), next(cases["twice"].glob("test-*.parquet"))
    pq.write_table(pq.read_table(train), test, compression="zstd", write_page_checksum=True)
    relist(cases["twice"])

    problems = {case: "\n".join(verify_dataset(folder)) for case, folder in cases.items()}
    assert "sha256 differs" in problems["tamper"]
    assert "unreadable" in problems["tamper"]  # the page checksum
    assert "unreadable" in problems["truncate"]
    assert "bytes" in problems["truncate"] and "sha256 differs" in problems["truncate"]
    assert "sha256 differs" in problems["swap"] and "bytes" in problems["swap"]
    assert "local:doc0 already in train-" in problems["twice"]
    for folder in cases.values():
        result = run_cli_in_process("verify", str(folder))
        assert result.returncode == 1 and "problem(s)" in result.stderr


def test_verify_checks_row_invariants_per_row_group(small: Path, tmp_path: Path) -> None:
    """Bad rows in the second row group: lengths, a box past 1000, a page outside the page
    sizes, a row without words; each named with its id, in row order."""
    folder = tmp_path / "local"
    shutil.copytree(small, folder)
    shard = _train(folder)
    rows = pq.read_table(shard).to_pylist()
    good = [dict(rows[0], article_id=f"local:ok-{k}") for k in range(3)]
    lengths = dict(rows[0], article_id="local:lengths",
                   word_pages=rows[0]["word_pages"][:-1])
    box = dict(rows[0], article_id="local:box", article_norm_bboxes=[
        [0, 0, 10, 10], [5, 0, 1001, 5], *rows[0]["article_norm_bboxes"][2:]])
    page = dict(rows[0], article_id="local:page",
                word_pages=[*rows[0]["word_pages"][:-1], len(rows[0]["page_sizes"])])
    empty = dict(rows[0], article_id="local:empty", article_words=[], article_bboxes=[],
                 article_norm_bboxes=[], word_pages=[])
    table = pa.Table.from_pylist([*good, lengths, box, page, empty],
                                 schema=pq.read_schema(shard))
    pq.write_table(table, shard, row_group_size=2, compression="zstd", write_page_checksum=True)
    relist(folder)
    name = shard.name
    assert verify_dataset(folder) == [
        f"{name}: local:lengths: list lengths differ: words {len(rows[0]['article_words'])}, "
        f"boxes {len(rows[0]['article_words'])}, norm boxes {len(rows[0]['article_words'])}, "
        f"word_pages {len(rows[0]['article_words']) - 1}",
        f"{name}: local:box: normalised box out of range: [5, 0, 1001, 5]",
        f"{name}: local:page: word page {len(rows[0]['page_sizes'])} outside the "
        f"{len(rows[0]['page_sizes'])} page sizes",
        f"{name}: local:empty: no words",
    ]


def test_inspect_reads_only_the_row_group_of_its_document(tmp_path: Path) -> None:
    """A shard of three row groups or more with the first one's pages zeroed: the ids' ranges
    written at publish send the lookup straight to the last row group, so the damage is
    never read (a scan of the shard fails on it)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 6)
    for entry in entries:
        entry["split"] = "train"
    manifest = write_manifest(docs / "docs.jsonl", entries)
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(tmp_path / "data"),
                                "--executor", "serial", "--no-filter",
                                env={"LORALAY_OUTPUT__ROW_GROUP_ROWS": "2"})
    assert result.returncode == 0, result.stderr
    dataset = tmp_path / "data" / "local"
    shard = _train(dataset)
    meta = pq.ParquetFile(shard).metadata
    assert meta.num_row_groups >= 3
    data = bytearray(shard.read_bytes())
    first = meta.row_group(0)
    for j in range(first.num_columns):
        column = first.column(j)
        start = column.data_page_offset
        data[start : start + column.total_compressed_size] = bytes(column.total_compressed_size)
    shard.write_bytes(bytes(data))
    row = find_row(dataset, "local:doc5")
    assert row is not None and row["article_id"] == "local:doc5" and row["article_words"]
    drawn = run_cli_in_process("inspect", str(dataset), "local:doc5", "--out",
                               str(tmp_path / "p.png"))
    assert drawn.returncode == 0, drawn.stderr
