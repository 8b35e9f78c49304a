"""Convert a realdocs-style manifest (gold abstracts per PDF) into `build-corpus local` input.

Usage: python scripts/realdocs_to_local.py DIR OUT.jsonl
       build-corpus local --input OUT.jsonl --allow-outside   (the PDFs stay in DIR)
DIR holds `manifest.jsonl` with `id`, `file`, `language`, `abstracts`, `date`, `title`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def convert(folder: Path, out: Path) -> int:
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


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(f"{convert(Path(sys.argv[1]), Path(sys.argv[2]))} documents")
