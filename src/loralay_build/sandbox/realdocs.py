"""A realdocs-style folder (`manifest.jsonl` of PDFs with gold abstracts) as `local` input, for
the benchmarks and the tests that run on real documents."""

from __future__ import annotations

import json
from pathlib import Path


def realdocs_manifest(folder: Path, out: Path) -> int:
    """Write the `local` manifest of `folder`'s documents to `out` (the PDFs stay where they
    are, named by absolute path); the number of documents."""
    lines = []
    for raw in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(raw)
        abstracts = dict(record.get("abstracts") or {})
        abstracts.update(record.get("abstracts_in_metadata_not_printed") or {})
        entry = {
            "id": record["id"],
            "pdf": str((folder / record["file"]).resolve()),
            "language": record["language"],
            "abstracts": abstracts,
            "published": record.get("date") or "",
            "title": record.get("title") or "",
            "licence": record.get("licence") or "",
        }
        lines.append(json.dumps(entry, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)
