"""Retrieval traces: one JSON line per read in memory/v2/traces/YYYY-MM-DD.jsonl.

A trace says what was asked (the query, its strongest tokens with weights, time
ranges, filters), what was returned and why (each selected id with its channel,
score and which tokens it matched, or its association path), what else each channel
offered, what was held back and why (a count per reason and a few ids), by id.
It is bounded (about 2 KB whatever the archive's size) and is the only thing a
read writes. Day files older than `trace_retention_days` (config.json; 0 keeps
them all) are removed when a new day's file is started.
"""

import datetime as dt
import os

from .. import config, paths, storage, timeutil
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


QUERY_CHARS = 200  # a longer question is kept to its start (its whole text is the turn's capture)
TOKENS = 12  # the strongest query tokens
SHOWN = 3  # per channel: ids it offered besides the ones selected
HELD = 5  # held-back ids listed (one per reason first); every reason is counted
LISTED = 6  # associations, causes, routes
SEEDS = 3


def _short(text, limit):
    return text if not isinstance(text, str) or len(text) <= limit else text[:limit - 1] + "…"


def _why(why, position):
    """A selected item and why it came up: channel, score, which tokens matched, association path or neighbour.

    Matched words are named by their place in the trace's tokens, so the words themselves are
    only in `query` and `tokens` (which forgetting a turn clears).
    """
    out = {k: why[k] for k in ("id", "channel", "score", "spread_score") if k in why}
    matched = [position[t] for t in why.get("matched") or () if t in position]
    if matched:
        out["matched"] = matched
    if why.get("via"):
        out["via"] = why["via"]
    if isinstance(why.get("context"), dict):
        out["context"] = why["context"].get("relation")  # the neighbour it lifts is usually selected too
    if isinstance(why.get("alias_route"), dict):
        out["alias_route"] = why["alias_route"].get("entity")
    if why.get("verbatim_phrase"):
        out["verbatim_phrase"] = True
    if "expand" in why:
        out["expand"] = True  # found through another phrasing (listed under expand)
    return out


def bounded(entry):
    """The trace of a read, bounded: ids and reasons stay; long lists are cut and counted."""
    out = dict(entry)
    out["query"] = _short(entry.get("query"), QUERY_CHARS)
    if isinstance(entry.get("expand"), list):
        out["expand"] = [_short(t, 100) for t in entry["expand"][:LISTED]]
    if isinstance(entry.get("filters"), dict):
        out["filters"] = {k: v for k, v in entry["filters"].items() if v is not None}
    if isinstance(entry.get("tokens"), list):
        tokens = sorted(entry["tokens"], key=lambda t: -(t.get("weight") or 0))[:TOKENS]
        out["tokens"] = [{k: t[k] for k in ("term", "weight", "df", "idf", "common_share", "feedback", "stands_for") if k in t} for t in tokens]
    selected = {s if isinstance(s, str) else s.get("id") for s in entry.get("selected") or ()}
    if isinstance(entry.get("why"), list):  # the selected ids, each with why
        position = {t.get("term"): i for i, t in enumerate(out.get("tokens") or ())}
        out["selected"] = [_why(w, position) for w in out.pop("why")]
    if isinstance(entry.get("channels"), dict):
        out["channels"] = {ch: [i for i in ids if i not in selected][:SHOWN] for ch, ids in entry["channels"].items()}
    if isinstance(entry.get("held_back"), list):
        held, counts, first = entry["held_back"], {}, []
        for item in held:
            counts[item.get("why")] = counts.get(item.get("why"), 0) + 1
            if counts[item.get("why")] == 1:
                first.append(item)
        listed = (first + [h for h in held if h not in first])[:HELD]
        out["held_back"] = [{k: h[k] for k in ("id", "channel", "why") if k in h} for h in listed]
        out["held"] = counts
    if isinstance(entry.get("associations"), list):
        out["associations"] = [{k: a[k] for k in ("id", "via") if k in a} for a in entry["associations"][:LISTED]]
    if isinstance(entry.get("seeds"), list):
        out["seeds"] = entry["seeds"][:SEEDS]
    if isinstance(entry.get("causes"), dict):
        out["causes"] = [{"id": k, "via": v} for k, v in list(entry["causes"].items())[:LISTED]]
    if isinstance(entry.get("routes"), dict):
        out["routes"] = {k: list(v)[:2] for k, v in list(entry["routes"].items())[:LISTED]}
    return out


def write(root, entry, now=None):
    """Append one trace line (bounded); returns its id, or None when the archive cannot be written.

    A read on a read-only copy or a full disk still answers: it only leaves no trace.
    """
    moment = now or timeutil.now()
    trace_id = paths.new_id("tr", moment)
    line = {"trace_id": trace_id, "at": timeutil.iso(moment)}
    line.update(bounded(entry))
    day = paths.trace_path(root, moment.strftime("%Y-%m-%d"))
    try:
        with storage.archive_lock(root, "trace"):
            if not day.exists():
                _retire(root, moment)
            storage.append_jsonl(root, day, line, sync=False)
    except PuError as exc:
        if exc.code not in ("WRITE_DENIED", "DISK_FULL"):
            raise
        return None
    return trace_id


def _retire(root, moment):
    """Remove day files past the retention (caller holds the lock): once a day, when its file is started."""
    days = config.load(root)["trace_retention_days"]
    tdir = paths.traces_dir(root)
    if not days or not tdir.is_dir():
        return
    cutoff = (moment - dt.timedelta(days=days)).strftime("%Y-%m-%d")
    for name in sorted(os.listdir(tdir)):
        if name.endswith(".jsonl") and len(name) == 16 and name[:10] < cutoff:
            storage.remove_file(root, tdir / name)
