"""Hypotheses and intent guesses: the model's ideas, kept apart from facts.

A hypothesis is a record of kind `hypothesis` (or `intent`, which expires),
layer model_hypothesis, status candidate until the user confirms or rejects it.
It needs at least two independent supporting records from different dates;
one event alone is an anecdote, not a pattern.
"""

import datetime as dt

from . import archive, paths, storage, timeutil
from .archive_index import open_index
from .errors import PuError
from .ledger import check_reason
from .records import _result, append_versions, new_version, prepare

INTENT_DAYS = 7


def evidence_date(index, rec):
    """The day a supporting record speaks of: its event date, else the day its words were said."""
    if rec.get("date_start"):
        return rec["date_start"]
    days = []
    for cid in rec.get("capture_ids") or ():
        row = index.capture(cid)
        if row:
            days.append((row.get("occurred_at") or row.get("captured_at") or "")[:10])
    return min(days) if days else (rec.get("created_at") or "")[:10]


def add_hypothesis(root, claim, supports, id=None, title=None, mechanism=None, contradicts=None, alternatives=None,
                   scope=None, confidence=None, kind="hypothesis", expires_at=None, domain=None, entity_refs=None,
                   sensitivity=None, now=None):
    archive.require(root)
    moment = now or timeutil.now()
    fields = {"claim": claim, "supports": supports, "id": id, "title": title, "mechanism": mechanism,
              "contradicts": contradicts, "alternatives": alternatives, "scope": scope, "confidence": confidence,
              "kind": kind, "expires_at": expires_at, "domain": domain, "entity_refs": entity_refs,
              "sensitivity": sensitivity}
    with storage.archive_lock(root, "add_hypothesis") as notice:
        index = open_index(root)
        rec, extra, report = prepare_hypothesis(root, index, fields, moment)
        append_versions(root, [rec] + extra)
        index.refresh()
        out = _result(index, rec, extra, report, notice)
    if not rec.get("contradicts"):
        out["warnings"].append("no counter-evidence listed: look for what would contradict it before relying on it")
    return out


def prepare_hypothesis(root, index, fields, moment, pending=None):
    """Validate and build a hypothesis record. `pending`: records about to be written with it. Writes nothing."""
    pending = pending or {}
    claim = fields.get("claim")
    supports = fields.get("supports")
    kind = fields.get("kind") or "hypothesis"
    expires_at = fields.get("expires_at")
    if kind not in ("hypothesis", "intent"):
        raise PuError("BAD_ARGUMENT", "kind must be hypothesis or intent", "hypothesis: a lasting guess; intent: a short-lived guess about what the user wants now.")
    if not isinstance(claim, str) or not claim.strip():
        raise PuError("BAD_ARGUMENT", "a hypothesis needs a claim", "State the guess in {arg:claim}, worded as a guess.")
    if supports is not None and not (isinstance(supports, list) and all(isinstance(s, str) for s in supports)):
        raise PuError("BAD_ARGUMENT", "supports must be a list of record ids", "Pass {arg:supports} as the ids of two or more records.")
    if kind == "intent":
        expires_at = timeutil.iso(timeutil.parse_instant(expires_at, "expires_at")) if expires_at else \
            timeutil.iso(moment + dt.timedelta(days=INTENT_DAYS))
    elif expires_at is not None:
        raise PuError("BAD_ARGUMENT", "expires_at belongs to intent guesses", "Leave out {arg:expires_at}, or pass {arg:kind=intent} for a short-lived guess.")

    def lookup(rid):
        return pending.get(rid) or index.record(rid)
    missing = [s for s in supports or () if lookup(s) is None]
    if missing:
        raise PuError("HYPOTHESIS_SUPPORT_UNKNOWN", f"supporting record(s) {', '.join(missing)} do not exist",
                      "Cite ids of existing records ({cmd:retrieve_v2} shows them); nothing was written.")
    dated = {evidence_date(index, lookup(s)) for s in dict.fromkeys(supports or ())}
    if len(set(supports or ())) < 2 or len(dated) < 2:
        raise PuError(
            "HYPOTHESIS_NEEDS_SUPPORT",
            "a hypothesis needs at least two independent supporting records from different dates",
            "One event alone is not a pattern: keep it as an event, and propose the hypothesis when it recurs.",
            {"supports": list(supports or ()), "dates": sorted(dated)},
        )
    record = {"kind": kind, "id": fields.get("id"), "title": fields.get("title") or claim.strip()[:80],
              "summary": claim.strip(), "claim": claim.strip(), "mechanism": fields.get("mechanism"),
              "supports": list(dict.fromkeys(supports)), "contradicts": fields.get("contradicts"),
              "alternatives": fields.get("alternatives"), "scope": fields.get("scope"),
              "confidence": fields.get("confidence"), "expires_at": expires_at, "domain": fields.get("domain"),
              "entity_refs": fields.get("entity_refs"), "sensitivity": fields.get("sensitivity"),
              "layer": "model_hypothesis", "status": "candidate"}
    return prepare(root, index, record, moment, allow_duplicate=False, pending=pending)


def review_hypothesis(root, id, status, note, capture_id=None, now=None):
    archive.require(root)
    paths.check_id(id, "hypothesis id")
    if status not in ("confirmed", "rejected"):
        raise PuError("BAD_ARGUMENT", "status must be confirmed or rejected", "confirmed needs the capture of the user saying so; rejected needs a note.")
    note = check_reason(note)
    stamp = timeutil.iso(now or timeutil.now())
    with storage.archive_lock(root, "review_hypothesis"):
        index = open_index(root)
        rec = index.record(id)
        if rec is None or rec.get("kind") not in ("hypothesis", "intent"):
            raise PuError("HYPOTHESIS_NOT_FOUND", f"{id} is not a hypothesis", "Pass the id of a hypothesis or intent record ({cmd:review_v2} lists the candidates).")
        if rec["status"] != "candidate":
            raise PuError("HYPOTHESIS_REVIEWED", f"{id} is already {rec['status']}", "A reviewed hypothesis keeps its verdict; add a new one if the picture changed.")
        if status == "confirmed":
            if not capture_id:
                raise PuError("HYPOTHESIS_NEEDS_CONFIRMATION", "confirming needs the capture of the user's explicit confirmation",
                              "Ask the user; capture their answer; pass its capture_id.")
            row = index.capture(capture_id)
            if row is None or row["status"] == "forgotten":
                raise PuError("RECORD_CAPTURE_UNKNOWN", f"capture {capture_id} is not in the archive", "Pass the capture of the user's confirmation, as returned by {cmd:capture_user_update}.")
        extra = {"capture_ids": sorted(set(rec.get("capture_ids") or ()) | {capture_id})} if capture_id else {}
        version = new_version(rec, stamp, status=status,
                              review={"status": status, "note": note, "capture_id": capture_id, "at": stamp}, **extra)
        append_versions(root, [version])
    return {"id": id, "status": status, "review": version["review"]}
