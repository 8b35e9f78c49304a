"""`python3 -m loralay_build.docgen [--check] [--root DIR]`: write the generated parts of the
documentation, or (`--check`) exit 1 naming each page whose committed text differs."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from loralay_build.docgen.pages import PAGES, regenerate
from loralay_build.docgen.settings_page import undocumented


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m loralay_build.docgen",
                                     description=__doc__)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a page is not up to date")
    parser.add_argument("--root", type=Path, default=Path.cwd(),
                        help="the project's folder (default: the current one)")
    args = parser.parse_args(argv)
    stale = []
    for page in PAGES:
        path = args.root / page
        old = path.read_text(encoding="utf-8")
        new = regenerate(page, old, args.root)
        if new == old:
            continue
        stale.append(page)
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True), page, page, n=1))
        else:
            path.write_text(new, encoding="utf-8")
            print(f"wrote {page}")
    missing = undocumented()
    if missing:
        print("settings fields without a comment saying what they mean: " + ", ".join(missing),
              file=sys.stderr)
        return 1
    if args.check and stale:
        print(f"out of date: {', '.join(stale)}; run python3 -m loralay_build.docgen",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
