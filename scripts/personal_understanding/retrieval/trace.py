"""Retrieval traces: one JSON line per read in memory/v2/traces/YYYY-MM-DD.jsonl.

A trace says what was asked, how the query was read (tokens with weights,
time ranges), what each channel offered, what was selected, what was held back
and why, and which association paths were followed. It is the only thing a
read writes.
"""

from .. import paths, storage, timeutil
from ..archive_index import open_index
from ..capture import text_capture_of_turn
from ..errors import PuError


def check_read_gate(root, capture_id, maintenance, turn_id=None):
    """Interactive reads cite the current turn (its turn_id or its capture); other reads say they are maintenance."""
    if turn_id:
        paths.check_id(turn_id, "turn id")
        index = open_index(root)
        receipt = index.receipt(turn_id)
        if receipt is None:
            raise PuError("READ_GATE", f"turn {turn_id} has no receipt",
                          "Start the turn with {cmd:preflight_context} (the user's message), then read citing its {arg:turn_id}.")
        if receipt["requires_personal_understanding"] and text_capture_of_turn(index, turn_id) is None:
            raise PuError("READ_GATE", f"turn {turn_id} is personal and its message is not saved yet",
                          "Save the message first ({cmd:capture_user_update}), then read.")
        return "turn"
    if capture_id:
        paths.check_id(capture_id, "capture id")
        if open_index(root).capture(capture_id) is None:
            raise PuError("READ_GATE", f"capture {capture_id} is not in the archive",
                          "Pass the {arg:capture_id} returned by {cmd:capture_user_update} for this turn.")
        return "turn"
    if maintenance:
        return "maintenance"
    raise PuError("READ_GATE", "a read needs the current turn ({arg:turn_id} or {arg:capture_id}), or {arg:maintenance=true}",
                  "Cite the turn with {arg:turn_id}; for audits and tools pass {arg:maintenance=true}.")


def turn_capture(root, turn_id):
    """The saved message of a turn, if any: reads leave the turn's own words out of what they find."""
    return text_capture_of_turn(open_index(root), turn_id)


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
