"""`retry`: queue rejects again, chosen by reason, by id, or both.

The outcome comes back as one line for the user and an exit code: nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loralay_build.errors import ConfigError, Reason
from loralay_build.ids import read_id_lines, resolve_ids
from loralay_build.layout import OutputLayout
from loralay_build.run.pipeline import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from loralay_build.state import REJECTED, State
from loralay_build.textfile import read_text


@dataclass(frozen=True)
class Retried:
    """What `retry` did or why it refused: one line (stdout when done, else stderr) and
    the exit code."""

    code: int
    message: str


def parse_reasons(text: str | None) -> list[str] | None:
    """The reasons of `--reason` (None when not given); ValueError names unknown ones."""
    if text is None:
        return None
    wanted = [r.strip() for r in text.split(",") if r.strip()]
    valid = {r.value for r in Reason}
    if not wanted or set(wanted) - valid:
        raise ValueError(f"unknown reason(s) {sorted(set(wanted) - valid)}; valid: "
                         f"{', '.join(sorted(valid))}")
    return wanted


def queue_again(layout: OutputLayout, dataset: str, reasons: list[str] | None,
                ids_file: Path | None) -> Retried:
    """Queue the rejects of `dataset` that have one of `reasons` and are listed in
    `ids_file` (either may be None: no condition)."""
    given = None
    if ids_file is not None:
        try:
            given = read_id_lines(read_text(ids_file))
        except ConfigError as exc:
            return Retried(EXIT_USAGE, f"usage error: --ids: {exc}")
        if not given:
            return Retried(EXIT_USAGE, f"usage error: --ids: no id in {ids_file}")
    state = State(layout.root)
    try:
        source = state.source_of(dataset)
        if source is None:
            return Retried(EXIT_USAGE, f"usage error: --dataset: no dataset {dataset!r} in "
                           f"{layout.root}")
        ids = None
        if given is not None:
            statuses = {}  # of the ids asked about, looked up by key

            def exists(cand_id: str) -> bool:
                row = state.row(dataset, cand_id)
                statuses[cand_id] = row.status if row else None
                return row is not None

            resolved = resolve_ids(given, [source], exists)
            if resolved.ambiguous:
                return Retried(EXIT_USAGE, "usage error: --ids: " + "; ".join(
                    str(exc) for exc in resolved.ambiguous))
            if resolved.unknown:
                return Retried(EXIT_FAILURE, f"{len(resolved.unknown)} id(s) not in {dataset}, "
                               "nothing queued: " + ", ".join(resolved.unknown[:20]))
            ids = [i for i in resolved.ids if statuses[i] == REJECTED]
        count = state.requeue(dataset, reasons, ids)
    finally:
        state.close()
    return Retried(EXIT_OK, f"{dataset}: {count} document(s) queued again; run its build "
                   "command to retry")
