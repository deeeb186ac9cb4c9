"""Retrieval traces: one JSON line per read in memory/v2/traces/YYYY-MM-DD.jsonl.

A trace says what was asked, how the query was read (tokens with weights,
time ranges), what each channel offered, what was selected, what was held back
and why, and which association paths were followed. It is the only thing a
read writes.
"""

from .. import paths, storage, timeutil
from ..archive_index import open_index
from ..errors import PuError


def check_read_gate(root, capture_id, maintenance):
    """Interactive reads cite the current turn's capture; other reads say they are maintenance."""
    if capture_id:
        paths.check_id(capture_id, "capture id")
        if open_index(root).capture(capture_id) is None:
            raise PuError("READ_GATE", f"capture {capture_id} is not in the archive",
                          "Pass the capture_id returned by capture_user_update for this turn.")
        return "turn"
    if maintenance:
        return "maintenance"
    raise PuError("READ_GATE", "a read needs the current turn's capture_id, or maintenance=true",
                  "Capture the user's message first and pass its capture_id; for audits and tools pass --maintenance.")


def write(root, entry, now=None):
    """Append one trace line; returns its id, or None when the archive cannot be written.

    A read on a read-only copy or a full disk still answers: it only leaves no trace.
    """
    moment = now or timeutil.now()
    trace_id = paths.new_id("tr", moment)
    line = {"trace_id": trace_id, "at": timeutil.iso(moment)}
    line.update(entry)
    try:
        with storage.archive_lock(root, "trace"):
            storage.append_jsonl(root, paths.trace_path(root, moment.strftime("%Y-%m-%d")), line, sync=False)
    except PuError as exc:
        if exc.code not in ("WRITE_DENIED", "DISK_FULL"):
            raise
        return None
    return trace_id
