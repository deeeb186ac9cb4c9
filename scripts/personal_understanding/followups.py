"""Follow-ups: things to ask about later, each tied to the words that raised it.

memory/v2/followups.jsonl holds versions (id + version); rows are never deleted.
A follow-up closes through one channel: answered, declined or resolved.
"""

import datetime as dt
import json
import re

from . import archive, paths, storage, timeutil
from .archive_index import open_index
from .capture import checked_text
from .errors import PuError
from .ledger import check_reason

CHANNELS = ("answered", "declined", "resolved")
_RULE = re.compile(r"^\+(\d{1,4})([dwm])$")
_CJK = re.compile(r"[\u3400-\u9fff]")


def due_from_rule(rule, created):
    """`+3d`, `+2w`, `+1m` after creation, or a plain date."""
    match = _RULE.match(rule.strip())
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        days = amount * {"d": 1, "w": 7, "m": 30}[unit]
        return timeutil.iso(created + dt.timedelta(days=days))
    if timeutil.is_partial_date(rule) and len(rule) == 10:
        return timeutil.iso(timeutil.parse_instant(rule, "due_rule"))
    raise PuError("BAD_DUE_RULE", f"due_rule {rule!r} is not understood",
                  "Use +Nd, +Nw or +Nm (days, weeks, months after today) or a date YYYY-MM-DD.")


def add_followup(root, question, capture_id, context=None, expectation=None, due_at=None, due_rule=None, id=None,
                 now=None):
    archive.require(root)
    moment = now or timeutil.now()
    with storage.archive_lock(root, "add_followup"):
        index = open_index(root)
        item = prepare_followup(index, moment, question=question, capture_id=capture_id, context=context,
                                expectation=expectation, due_at=due_at, due_rule=due_rule, id=id)
        storage.append_jsonl(root, paths.followups_path(root), item)
    out = {"id": item["id"], "followup": item}
    if item["due_at"] is None:
        out["warnings"] = ["no due_at or due_rule: it will be listed as undated, never as due"]
    return out


def prepare_followup(index, moment, question, capture_id, context=None, expectation=None, due_at=None, due_rule=None,
                     id=None, taken=()):
    """Validate and build a new follow-up row. `taken`: ids about to be written with it. Writes nothing."""
    if not isinstance(question, str) or not question.strip():
        raise PuError("BAD_ARGUMENT", "a follow-up needs a question", "Pass in {arg:question} what to ask when it is due.")
    paths.check_id(capture_id, "capture id")
    if due_at is not None:
        due = timeutil.iso(timeutil.parse_instant(due_at, "due_at"))
    elif due_rule is not None:
        due = due_from_rule(due_rule, moment)
    else:
        due = None
    if id:
        paths.check_id(id, "follow-up id")
    fid = id or paths.fresh_id(lambda: paths.new_id("fu", moment), lambda f: index.followup(f) is not None or f in taken)
    row = index.capture(capture_id)
    if row is None or row["status"] == "forgotten":
        raise PuError("FOLLOWUP_CAPTURE_UNKNOWN", f"capture {capture_id} is not in the archive",
                      "A follow-up cites the capture of the words that raised it.")
    if index.followup(fid) is not None or fid in taken:
        raise PuError("FOLLOWUP_ID_EXISTS", f"follow-up {fid} already exists", "Leave out {arg:id} to get a new one, or resolve the existing one with {cmd:resolve_followup}.")
    stamp = timeutil.iso(moment)
    return {"id": fid, "version": 1, "question": question.strip(), "context": context, "expectation": expectation,
            "due_at": due, "due_rule": due_rule, "capture_id": capture_id, "created_at": stamp,
            "said_at": row.get("occurred_at") or row.get("captured_at"), "status": "open",
            "last_checked_at": None, "resolution": None, "updated_at": stamp}


def prompt_for(root, item):
    """A ready, contextual question in the language the user used."""
    quote = ""
    try:
        row = open_index(root).capture(item["capture_id"])
        if row and row.get("status") != "forgotten":
            quote = checked_text(root, row["path"], row.get("utf8_sha256")).strip()
    except PuError:
        quote = ""
    if len(quote) > 120:
        quote = quote[:119] + "…"
    said = (item.get("said_at") or item["created_at"])[:10]
    expectation = item.get("expectation") or item.get("context") or ""
    if _CJK.search(quote + item["question"]):
        text = f"{said} 你说过：“{quote}”"
        if expectation:
            text += f"；当时的预期是：{expectation}"
        return text + f"。现在到时候了——{item['question']}"
    text = f"On {said} you said: \u201c{quote}\u201d"
    if expectation:
        text += f"; the expectation was: {expectation}"
    return text + f". It is now time to check \u2014 {item['question']}"


def _open_items(index):
    return index.db.execute("SELECT data FROM followups WHERE status='open' ORDER BY due_at, id").fetchall()


def due_followups(root, as_of=None, horizon=3):
    """(due, upcoming, undated) open follow-ups as of a moment. Reads only."""
    moment = timeutil.parse_instant(as_of) if as_of else timeutil.now()
    limit = moment + dt.timedelta(days=horizon)
    due, upcoming, undated = [], [], []
    for (data,) in _open_items(open_index(root)):
        item = json.loads(data)
        if not item.get("due_at"):
            undated.append(item)
            continue
        when = timeutil.parse_instant(item["due_at"])
        if when <= moment:
            due.append(item)
        elif when <= limit:
            upcoming.append(item)
    return due, upcoming, undated


def brief(root, item, with_prompt=False):
    out = {"id": item["id"], "question": item["question"], "due_at": item.get("due_at"),
           "capture_id": item.get("capture_id"), "status": item["status"]}
    if with_prompt:
        out["prompt"] = prompt_for(root, item)
    return out


def followup_check(root, as_of=None, horizon=3, now=None):
    """Due, upcoming and undated follow-ups; marks the due ones as checked."""
    archive.require(root)
    if horizon < 0:
        raise PuError("BAD_ARGUMENT", "horizon must be zero or more days", "{arg:horizon} is how many days ahead count as upcoming; leave it out for 3.")
    due, upcoming, undated = due_followups(root, as_of, horizon)
    stamp = timeutil.iso(now or timeutil.now())
    if due:
        with storage.archive_lock(root, "followup_check"):
            index = open_index(root)
            fresh = [index.followup(item["id"]) for item in due]
            versions = [dict(f, version=f["version"] + 1, last_checked_at=stamp, updated_at=stamp)
                        for f in fresh if f and f["status"] == "open"]
            if versions:
                storage.append_jsonl(root, paths.followups_path(root), versions)
    return {
        "as_of": timeutil.iso(timeutil.parse_instant(as_of)) if as_of else stamp,
        "horizon_days": horizon,
        "due": [brief(root, i, with_prompt=True) for i in due],
        "upcoming": [brief(root, i) for i in upcoming],
        "undated": [brief(root, i) for i in undated],
    }


def resolve_followup(root, id, resolution, note, capture_id=None, now=None):
    archive.require(root)
    stamp = timeutil.iso(now or timeutil.now())
    with storage.archive_lock(root, "resolve_followup"):
        version = prepare_resolution(open_index(root), stamp, id, resolution, note, capture_id)
        storage.append_jsonl(root, paths.followups_path(root), version)
    return {"id": id, "status": resolution, "resolution": version["resolution"]}


def prepare_resolution(index, stamp, id, resolution, note, capture_id=None):
    """Validate and build the closing version of an open follow-up. Writes nothing."""
    paths.check_id(id, "follow-up id")
    if resolution not in CHANNELS:
        raise PuError("BAD_ARGUMENT", f"resolution must be one of {', '.join(CHANNELS)}", "answered: the user answered; declined: they would rather not say; resolved: it no longer applies.")
    try:
        note = check_reason(note)
    except PuError:
        raise PuError("FOLLOWUP_NOTE_REQUIRED", "closing a follow-up needs a specific note",
                      "Say what happened, e.g. 'she got the offer, starts in March' or 'user prefers not to talk about it'.") from None
    item = index.followup(id)
    if item is None:
        raise PuError("FOLLOWUP_NOT_FOUND", f"no follow-up {id}", "List them with {cmd:followup_check}.")
    if item["status"] != "open":
        raise PuError("FOLLOWUP_CLOSED", f"follow-up {id} is already {item['status']}", "Closed rows stay as they are.")
    if capture_id is not None:
        row = index.capture(capture_id)
        if row is None or row["status"] == "forgotten":
            raise PuError("FOLLOWUP_CAPTURE_UNKNOWN", f"capture {capture_id} is not in the archive",
                          "Pass the capture_id of the user's answer as returned by {cmd:capture_user_update}, or leave it out.")
    return dict(item, version=item["version"] + 1, status=resolution, updated_at=stamp,
                resolution={"channel": resolution, "note": note, "capture_id": capture_id, "at": stamp})
