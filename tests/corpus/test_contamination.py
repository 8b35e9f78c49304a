"""One work, one split across datasets: signatures, the report/guard/drop policies, published
test sets kept out, and the audit across output folders."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from loralay_build.corpus.contamination import excluded_ids, id_keys
from loralay_build.corpus.workindex import WorkIndex, pairs_among, published_docs
from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.textgen import ProseGenerator
from loralay_build.state import State
from loralay_build.text.minhash import jaccard, signature, similar_pairs, to_text
from tests.helpers.cli import run_cli_in_process, write_toml
from tests.helpers.local import write_manifest


def _words(seed: int, n: int = 600) -> list[str]:
    gen = ProseGenerator(seed)
    words: list[str] = []
    while len(words) < n:
        words += gen.paragraph("en", 6).split()
    return words[:n]


def test_signatures_are_the_same_in_every_process() -> None:
    words = _words(1)
    script = ("import sys, json; from loralay_build.text.minhash import signature, to_text; "
              "print(to_text(signature(json.loads(sys.stdin.read()))))")
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", script], input=json.dumps(words),
                             capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": seed, **dict(__import__("os").environ)})
        sig = signature(words)
        assert sig is not None and out.stdout.strip() == to_text(sig)


def test_one_text_extracted_twice_is_similar_and_other_texts_are_not() -> None:
    text = _words(2)
    variant = [w.upper() if i % 50 == 0 else w for i, w in enumerate(text)]  # case, re-typeset
    variant[100:110] = []  # a lost line
    sigs = {"a": signature(text), "b": signature(variant), "c": signature(_words(3)),
            "d": signature(_words(4))}
    assert all(s is not None for s in sigs.values())
    clean = {k: v for k, v in sigs.items() if v is not None}
    assert jaccard(clean["a"], clean["b"]) > 0.8
    assert jaccard(clean["a"], clean["c"]) < 0.3  # generated prose repeats its phrases
    assert [(a, b) for a, b, _ in similar_pairs(clean, 0.5)] == [("a", "b")]
    assert signature(["too", "short"]) is None


def test_ids_match_in_every_listed_form() -> None:
    keys = excluded_ids(["2101.00001v2", "PMC123456 # a test set", "https://doi.org/10.1/ABC"])
    assert id_keys("arxiv:2101.00001") & keys
    assert id_keys("pubmed:PMC123456") & keys and id_keys("123456") & keys
    assert id_keys("local:x", "10.1/abc") & keys
    assert not id_keys("arxiv:2101.00002", "10.1/abd") & keys


def _doc(folder: Path, name: str, seed: int, published: str, *, title: str = "",
         columns: int = 1, body_seed: int | None = None) -> dict[str, object]:
    """A PDF whose body comes from `body_seed` (a copy of another paper when shared)."""
    gen = ProseGenerator(seed)
    body = ProseGenerator(seed if body_seed is None else body_seed)
    abstract = body.paragraph("fr", 4)
    paragraphs = [[body.paragraph("fr", 7) for _ in range(3)] for _ in range(3)]
    spec = ArticleSpec(title=title or gen.title("fr"), authors=gen.authors(),
                       abstracts=[("Résumé", abstract)],
                       sections=[(f"{k + 1} Partie", p) for k, p in enumerate(paragraphs)],
                       columns=columns)
    (folder / f"{name}.pdf").write_bytes(render_article(spec))
    return {"id": name, "pdf": f"{name}.pdf", "language": "fr", "abstracts": {"fr": abstract},
            "published": published, "title": spec.title}


def _corpora(tmp_path: Path) -> tuple[Path, Path]:
    """Two manifests: alpha's newest paper is in beta too, re-typeset, retitled, older-dated."""
    docs = tmp_path / "docs"
    docs.mkdir()
    alpha = [_doc(docs, f"a{i}", 100 + i, f"20{10 + i}-01-01") for i in range(6)]
    beta = [_doc(docs, f"b{i}", 200 + i, f"20{12 + i}-06-01") for i in range(5)]
    beta.append(_doc(docs, "b-copy", 300, "2009-01-01", title="Une autre version du même",
                     columns=2, body_seed=105))
    return write_manifest(docs / "alpha.jsonl", alpha), write_manifest(docs / "beta.jsonl", beta)


def _build(manifest: Path, out: Path, name: str, config: Path,
           *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--name", name,
                              "--config", str(config), "--executor", "serial", "--no-filter",
                              *extra)


def _splits(folder: Path) -> dict[str, str]:
    return {row["article_id"]: path.name.split("-", 1)[0] for path in folder.glob("*.parquet")
            for row in pq.read_table(path, columns=["article_id"]).to_pylist()}


def _config(tmp_path: Path, across: str) -> Path:
    return write_toml(tmp_path / f"{across}.toml",
                      {"split": {"train": 0.6, "validation": 0.2, "test": 0.2},
                       "dedup": {"across": across}})


def test_policies_keep_a_work_out_of_train_when_it_is_evaluated_elsewhere(
        tmp_path: Path) -> None:
    alpha, beta = _corpora(tmp_path)
    results = {}
    for across in ("report", "guard", "drop"):
        out = tmp_path / across
        config = _config(tmp_path, across)
        assert _build(alpha, out, "alpha", config).returncode == 0
        assert _splits(out / "alpha")["local:a5"] == "test"  # the newest
        result = _build(beta, out, "beta", config)
        assert result.returncode == 0, result.stderr
        results[across] = _splits(out / "beta")
        build = json.loads((out / "beta" / "build.json").read_text())
        shared = build["dedup"]["shared_works"]
        assert [w["members"] for w in shared] == [["alpha/local:a5", "beta/local:b-copy"]]
        assert "## Shared works" in (out / "beta" / "README.md").read_text()
    assert results["report"]["local:b-copy"] == "train"
    assert "local:b-copy" not in results["guard"]
    assert "local:b-copy" not in results["drop"]
    rejects = (tmp_path / "guard" / "beta" / "rejects.jsonl").read_text()
    assert "same work as alpha/local:a5 (test)" in rejects


def test_a_published_evaluation_copy_never_leaves_and_the_audit_sees_the_conflict(
        tmp_path: Path) -> None:
    """beta (report) has the copy in train; alpha built afterwards under guard keeps its own
    copy in test, since guard never empties an evaluation split: the conflict remains and
    the audit says so with exit 1."""
    alpha, beta = _corpora(tmp_path)
    out = tmp_path / "out"
    assert _build(beta, out, "beta", _config(tmp_path, "report")).returncode == 0
    assert _splits(out / "beta")["local:b-copy"] == "train"
    assert _build(alpha, out, "alpha", _config(tmp_path, "guard")).returncode == 0
    assert _splits(out / "alpha")["local:a5"] == "test"
    result = run_cli_in_process("audit", str(out), "--json")
    assert result.returncode == 1, result.stderr
    audit = json.loads(result.stdout)
    assert audit["clusters"][0]["members"] == ["alpha/local:a5", "beta/local:b-copy"]
    assert audit["conflicts"][0]["members"] == {"alpha/local:a5": "test",
                                                "beta/local:b-copy": "train"}
    # beta rebuilt under guard drops its train copy: no conflict is left.
    assert _build(beta, out, "beta", _config(tmp_path, "guard")).returncode == 0
    result = run_cli_in_process("audit", str(out), "--json")
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["conflicts"] == []


def _indexed(out: Path) -> bool:
    state = State(out)
    try:
        return WorkIndex(state).present()
    finally:
        state.close()


def test_audit_across_two_output_folders(tmp_path: Path) -> None:
    alpha, beta = _corpora(tmp_path)
    config = _config(tmp_path, "report")
    assert _build(alpha, tmp_path / "one", "alpha", config).returncode == 0
    assert _build(beta, tmp_path / "two", "beta", config).returncode == 0
    alone = json.loads(run_cli_in_process("audit", str(tmp_path / "one"), "--json").stdout)
    assert alone["clusters"] == []
    result = run_cli_in_process("audit", str(tmp_path / "one"), "--also", str(tmp_path / "two"))
    assert result.returncode == 0, result.stderr
    assert "1 shared work(s)" in result.stdout and "beta/local:b-copy" in result.stdout
    assert "1 split conflict(s)" in result.stdout
    # once the other folder has its own index, it is read instead: the same audit
    assert not _indexed(tmp_path / "two")
    assert run_cli_in_process("audit", str(tmp_path / "two")).returncode == 0
    assert _indexed(tmp_path / "two")
    again = run_cli_in_process("audit", str(tmp_path / "one"), "--also", str(tmp_path / "two"))
    assert again.stdout == result.stdout


def test_excluded_ids_never_enter_and_come_back_when_unlisted(tmp_path: Path) -> None:
    alpha, _ = _corpora(tmp_path)
    out = tmp_path / "out"
    ids = tmp_path / "test-set.txt"
    ids.write_text("a2\nlocal:a4 # from a published test split\n")
    config = _config(tmp_path, "report")
    assert _build(alpha, out, "alpha", config, "--exclude-ids", str(ids)).returncode == 0
    assert set(_splits(out / "alpha")) == {f"local:a{i}" for i in (0, 1, 3, 5)}
    rejects = {json.loads(x)["id"]: json.loads(x)["reason"]
               for x in (out / "alpha" / "rejects.jsonl").read_text().splitlines()}
    assert rejects == {"local:a2": "excluded", "local:a4": "excluded"}
    audit = json.loads(run_cli_in_process("audit", str(out), "--json").stdout)
    assert audit["excluded"] == ["alpha/local:a2", "alpha/local:a4"]
    ids.write_text("a2\n")
    assert _build(alpha, out, "alpha", config, "--exclude-ids", str(ids)).returncode == 0
    assert "local:a4" in _splits(out / "alpha")


def _stored_pairs(out: Path) -> set[tuple[str, str]]:
    """The band index's pairs, checked equal to every pair computed from scratch; returns
    those that make one work."""
    state = State(out)
    try:
        index = WorkIndex(state)
        assert index.present()
        stored = index.pairs()
        assert stored == pairs_among(published_docs(state), index.abstract)
    finally:
        state.close()
    result = run_cli_in_process("audit", str(out), "--json", "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["index"]["consistent"]
    return {(a, b) for a, b, kind, score in stored if kind == "title" or score >= 0.5}


def test_the_band_index_follows_every_publish_takedown_change_and_departure(
        tmp_path: Path) -> None:
    """Build alpha, build beta, grow alpha, take a document down, change one, drop one from
    the manifest: after every step the stored pairs equal a computation from scratch."""
    alpha, beta = _corpora(tmp_path)
    docs, out = alpha.parent, tmp_path / "out"
    config = _config(tmp_path, "report")
    assert _build(alpha, out, "alpha", config).returncode == 0
    assert not _indexed(out)  # one dataset: no index, nothing read
    assert _build(beta, out, "beta", config).returncode == 0
    assert _stored_pairs(out) == {("alpha/local:a5", "beta/local:b-copy")}
    # alpha grows by a copy of beta's b3
    entries = [json.loads(x) for x in alpha.read_text().splitlines()]
    entries.append(_doc(docs, "a6", 106, "2021-01-01", body_seed=203))
    write_manifest(alpha, entries)
    assert _build(alpha, out, "alpha", config).returncode == 0
    assert _stored_pairs(out) == {("alpha/local:a5", "beta/local:b-copy"),
                                  ("alpha/local:a6", "beta/local:b3")}
    # a takedown
    ids = tmp_path / "takedown.txt"
    ids.write_text("b-copy\n")
    result = run_cli_in_process("remove", str(out), "--dataset", "beta", "--ids", str(ids))
    assert result.returncode == 0, result.stderr
    assert _stored_pairs(out) == {("alpha/local:a6", "beta/local:b3")}
    # a1 now holds b2's text
    entries[1] = _doc(docs, "a1", 101, "2011-01-01", body_seed=202)
    write_manifest(alpha, entries)
    assert _build(alpha, out, "alpha", config).returncode == 0
    assert _stored_pairs(out) == {("alpha/local:a1", "beta/local:b2"),
                                  ("alpha/local:a6", "beta/local:b3")}
    # a6 leaves alpha's manifest
    write_manifest(alpha, entries[:-1])
    assert _build(alpha, out, "alpha", config).returncode == 0
    assert _stored_pairs(out) == {("alpha/local:a1", "beta/local:b2")}
    # stored pairs lost are found by --check, and --rebuild brings them back
    db = sqlite3.connect(out / ".loralay" / "state.sqlite")
    db.execute("DELETE FROM work_pairs")
    db.commit()
    db.close()
    stale = run_cli_in_process("audit", str(out), "--json", "--check")
    assert stale.returncode == 1
    assert json.loads(stale.stdout)["clusters"] == []
    assert ["alpha/local:a1", "beta/local:b2"] in [p[:2] for p in
                                                    json.loads(stale.stdout)["index"]["missing"]]
    assert run_cli_in_process("audit", str(out), "--rebuild").returncode == 0
    assert _stored_pairs(out) == {("alpha/local:a1", "beta/local:b2")}
