"""The bounded context a turn starts with: what is true now, what is due, what was said lately.

Only short-term material (the last few days, capped by characters) is read.
Everything cut to fit the budget is marked, never silently dropped.
"""

import datetime as dt

from . import config, timeutil
from .archive_index import CAPTURE_PATH, CAPTURE_SHA, open_index
from .capture import checked_text
from .errors import PuError
from .followups import brief, due_followups
from .understanding import current_state

BUDGET_CHARS = 6000
ITEM_CHARS = 600


def turn_context(root, now=None, budget_chars=BUDGET_CHARS):
    settings = config.load(root)
    moment = now or timeutil.now()
    cutoff = timeutil.iso(moment - dt.timedelta(days=settings["short_term_days"]))
    cap = min(budget_chars, settings["short_term_chars"])
    state = current_state(root)
    due, _up, _und = due_followups(root)
    index = open_index(root)
    rows = index.db.execute(
        f"SELECT capture_id, {CAPTURE_PATH}, captured_at, occurred_at, speaker, chars, {CAPTURE_SHA} FROM captures "
        "WHERE kind='text' AND status != 'forgotten' AND captured_at >= ? AND turn_id IS NOT NULL "
        "ORDER BY captured_at DESC, capture_id DESC", (cutoff,)).fetchall()
    recent, used, omitted = [], 0, []
    for capture_id, path, captured_at, occurred_at, speaker, chars, sha in rows:
        room = cap - used
        if room <= 0:
            omitted.append(capture_id)
            continue
        try:
            text = checked_text(root, path, sha)
        except PuError:
            omitted.append(capture_id)
            continue
        item = {"capture_id": capture_id, "captured_at": captured_at, "speaker": speaker}
        limit = min(room, ITEM_CHARS)
        if len(text) > limit:
            item.update(text=text[:limit], partial=True, omitted_chars=len(text) - limit)
        else:
            item["text"] = text
        used += len(item["text"])
        recent.append(item)
    return {
        "budget_chars": cap, "used_chars": used, "short_term_days": settings["short_term_days"],
        "current_state": {k: state[k] for k in ("core", "reality", "load", "tensions", "next")},
        "due_followups": [brief(root, f) for f in due[:5]],
        "recent_captures": recent,
        "omitted": {"recent_captures": len(omitted), "capture_ids": omitted[:20],
                    "due_followups": max(0, len(due) - 5)},
    }
