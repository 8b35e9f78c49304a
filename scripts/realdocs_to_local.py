"""Convert a realdocs-style manifest (gold abstracts per PDF) into `build-corpus local` input.

Usage: python scripts/realdocs_to_local.py DIR OUT.jsonl
       build-corpus local --input OUT.jsonl --allow-outside   (the PDFs stay in DIR)
DIR holds `manifest.jsonl` with `id`, `file`, `language`, `abstracts`, `date`, `title`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from loralay_build.sandbox.realdocs import realdocs_manifest

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(f"{realdocs_manifest(Path(sys.argv[1]), Path(sys.argv[2]))} documents")
