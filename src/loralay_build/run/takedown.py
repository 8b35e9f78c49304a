"""Takedowns: unpublish documents for good (a copyright or privacy request).

Why: a document dropped from a crawl result or a manifest comes back when the source lists it
again; a takedown must not. The ids are marked `removed` in the state (with the date and the
reason), which no discovery, retry or licence change undoes, and the dataset is published
again from the state with the settings its last build recorded. Marking comes first, so a run
killed before the publish is finished by running the same command again.
The outcome comes back as a `Takedown` (its line for the user and exit code): nothing here
prints.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from loralay_build.errors import ConfigError, LockHeld
from loralay_build.ids import read_id_lines, resolve_ids
from loralay_build.layout import OutputLayout
from loralay_build.run.context import BuildRequest
from loralay_build.run.pipeline import (
    EXIT_FAILURE,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_USAGE,
    Pipeline,
)
from loralay_build.sources import settings_from_raw
from loralay_build.state import REMOVED, SETTINGS_MARK, State
from loralay_build.textfile import read_text


@dataclass(frozen=True)
class Takedown:
    """What a takedown did or why it refused, in one line for stderr, and its exit code."""

    code: int
    message: str


def remove(layout: OutputLayout, dataset: str, ids_file: Path, reason: str) -> Takedown:
    """Mark the ids removed and publish the dataset without them."""
    try:
        listed = read_text(ids_file)  # refused before the state is opened when not text
    except ConfigError as exc:
        return Takedown(EXIT_USAGE, f"usage error: --ids: {exc}")
    state = State(layout.root)
    try:
        source = state.source_of(dataset)
        recorded = state.get_mark(dataset, SETTINGS_MARK)
        if source is None or recorded is None:
            return Takedown(EXIT_USAGE,
                            f"usage error: no built dataset {dataset!r} in {layout.root}")
        given = read_id_lines(listed)
        if not given:
            return Takedown(EXIT_USAGE, f"usage error: no id in {ids_file}")
        with state.lock(dataset):
            known = {row.candidate.id: row.status for row in state.rows(dataset)}
            resolved = resolve_ids(given, [source], known.__contains__)
            if resolved.ambiguous:
                return Takedown(EXIT_USAGE, "usage error: --ids: " + "; ".join(
                    str(exc) for exc in resolved.ambiguous) + "; nothing removed")
            wanted, unknown = resolved.ids, resolved.unknown
            if unknown:
                return Takedown(EXIT_FAILURE, f"{len(unknown)} id(s) not in {dataset}, nothing "
                                "removed: " + ", ".join(unknown[:20])
                                + (" …" if len(unknown) > 20 else ""))
            today = dt.datetime.now(dt.UTC).date().isoformat()
            fresh = [i for i in wanted if known[i] != REMOVED]
            state.remove(dataset, fresh, f"{today}: {reason}" if reason else today)
            settings = settings_from_raw(source, json.loads(recorded))
            pipeline = Pipeline(BuildRequest(source, dataset, settings,
                                             command="remove", allow_empty=True), state)
            pipeline.publish()
            pipeline.after_publish()
    except LockHeld as exc:
        return Takedown(EXIT_LOCKED, f"{exc}: exiting")
    finally:
        state.close()
    already = len(wanted) - len(fresh)
    return Takedown(EXIT_OK, f"{dataset}: {len(fresh)} document(s) removed and unpublished"
                    + (f", {already} already removed" if already else ""))
