"""The eurlex demo's figures: rows per language and split, HTTP requests per (act, language),
and the share of rows that have both the OJ PDF and the XHTML text.

Builds eurlex-en, -fr and -el from the same sandbox `build-corpus demo` uses (24 generated
acts, faults on), then reads the sandbox's access log and the published shards.

    PYTHONPATH=src python scripts/eurlex_demo_report.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from loralay_build.cli import build
from loralay_build.config import merge
from loralay_build.sandbox.eurlex import EurlexSandbox
from loralay_build.sandbox.server import SandboxServer

LANGS = ("en", "fr", "el")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="output root (default: a temporary folder)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="eurlex-demo-"))
    with SandboxServer() as server:
        sandbox = EurlexSandbox(server, n_docs=24, seed=7, faults=True)
        overrides = merge(sandbox.client_config(LANGS), {"run": {"timeout": 30.0}})
        codes = [build("eurlex", out, f"eurlex-{lang}", None, overrides) for lang in LANGS]
        log = list(server.log)
    print(f"exit codes {codes}; output {out}")
    units: dict[str, float] = defaultdict(float)  # requests per act, all languages
    summary_acts = {s.legissum: s.acts for s in sandbox.cat.summaries.values()}
    sparql = 0
    for entry in log:
        parts = entry.path.split("/")
        if entry.path.startswith("/cellar/sparql"):
            sparql += 1
        elif entry.path.startswith("/cellar/resource/celex/"):
            units[parts[-1]] += 1
        elif entry.path.startswith("/cellar/resource/parts/"):
            units[parts[-2].split(".")[0]] += 1
        elif entry.path.startswith("/cellar/resource/legissum/"):
            acts = summary_acts[parts[-1]]
            for celex in acts:  # a shared summary's request counts for each of its acts
                units[celex] += 1 / len(acts)
    published = 0
    both = 0
    per_act_lang = []
    for lang in LANGS:
        folder = out / f"eurlex-{lang}"
        build_record = json.loads((folder / "build.json").read_text())
        print(f"eurlex-{lang}: splits {build_record['counts']['splits']}, "
              f"rejects {build_record['counts']['rejects']}")
        for shard in folder.glob("*.parquet"):
            table = pq.read_table(shard, columns=["article_words", "reference_text"])
            for words, text in zip(table.column(0).to_pylist(), table.column(1).to_pylist(),
                                   strict=True):
                published += 1
                both += bool(words) and text is not None
    # Requests are per act over all languages; an act is listed for each language it has.
    for celex, count in units.items():
        languages = [lang for lang in LANGS if lang in sandbox.cat.acts[celex].languages]
        per_act_lang.append(count / max(1, len(languages)))
    acts_listed = len(units)
    print(f"SPARQL requests: {sparql} for {acts_listed} acts "
          f"({sparql / max(1, acts_listed * len(LANGS)):.2f} per act and language)")
    print(f"requests per (act, language), summary + PDF + XHTML incl. retries: median "
          f"{statistics.median(per_act_lang):.2f}, max {max(per_act_lang):.2f}")
    print(f"rows with both PDF and HTML: {both}/{published} = {both / max(1, published):.1%}")


if __name__ == "__main__":
    main()
