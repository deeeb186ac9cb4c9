"""Review loops: feedback on recalled memories, salience demotion, a semantic review package.

Nothing here rewrites a record in place: feedback is appended, demotion appends
new versions (and only with apply), and the review package only lists what an
agent should re-check against the user's words.
"""

import datetime as dt
import re

from . import archive, paths, schema, storage, timeutil
from .archive_index import RECORD_CREATED, open_index
from .capture import checked_text
from .errors import PuError
from .followups import brief, due_followups
from .records import append_versions, new_version

VERDICTS = ("helpful", "missed", "corrected", "unclear")
HEDGES = re.compile(r"可能|也许|大概|好像|似乎|估计|应该是|\bmaybe\b|\bprobably\b|\bperhaps\b|\bi guess\b|\bmight\b|\bseems?\b", re.I)


def record_feedback(root, capture_id, verdict, record_ids=None, trace_id=None, note=None, now=None):
    """Store the user's verdict on the memories an answer used. Silence is not feedback: a capture is required."""
    archive.require(root)
    if verdict not in VERDICTS:
        raise PuError("BAD_ARGUMENT", f"verdict must be one of {', '.join(VERDICTS)}", "helpful, missed, corrected or unclear: what the user said about the answer.")
    paths.check_id(capture_id, "capture id")
    with storage.archive_lock(root, "record_feedback"):
        index = open_index(root)
        row = index.capture(capture_id)
        if row is None or row.get("status") == "forgotten":
            raise PuError("FEEDBACK_NEEDS_WORDS", f"capture {capture_id} is not in the archive",
                          "Feedback must cite the capture of what the user said about the answer; silence is not feedback.")
        missing = [r for r in record_ids or () if index.record(r) is None]
        if missing:
            raise PuError("FEEDBACK_UNKNOWN_RECORD", f"unknown record(s) {', '.join(missing)}", "Pass the ids the answer used.")
        if verdict in ("missed", "corrected") and not record_ids and not note:
            raise PuError("BAD_ARGUMENT", f"'{verdict}' needs the records involved or a note saying what was missed", "Pass {arg:record_ids} or a {arg:note} in the user's terms.")
        item = {"at": timeutil.iso(now or timeutil.now()), "capture_id": capture_id, "verdict": verdict,
                "record_ids": list(record_ids or ()), "trace_id": trace_id, "note": note}
        storage.append_jsonl(root, paths.feedback_path(root), item)
    return {"saved": True, "feedback": item}


def _feedback(root):
    entries, _problems, _end, _next = storage.read_jsonl(paths.feedback_path(root))
    return [obj for _line, _off, obj in entries]


def salience_review(root, min_age_days=180, apply=False, now=None):
    """Demote imported-heuristic weights nobody confirmed within min_age_days to 0 (still reachable)."""
    archive.require(root)
    if min_age_days < 0:
        raise PuError("BAD_ARGUMENT", "min_age_days must be zero or more", "Leave {arg:min_age_days} out for 180 days.")
    moment = now or timeutil.now()
    cutoff = timeutil.iso(moment - dt.timedelta(days=min_age_days))
    helpful = {rid for f in _feedback(root) if f.get("verdict") == "helpful" for rid in f.get("record_ids") or ()}
    index = open_index(root)
    candidates = [r for r in index.records_where(
        "json_extract(data,'$.salience_basis')='imported-heuristic' AND json_extract(data,'$.salience') > 0 "
        "AND status NOT IN ('redirected','forgotten') AND " + RECORD_CREATED + " <= ?", (cutoff,))
        if r["id"] not in helpful]
    listed = [{"id": r["id"], "title": r.get("title"), "salience": r.get("salience"), "created_at": r.get("created_at")}
              for r in candidates]
    if not apply:
        return {"dry_run": True, "would_demote": listed, "kept_by_feedback": sorted(helpful),
                "next": "Nothing was changed. Run again with {arg:apply=true} to demote them to salience 0 (still found by keyword, entity and window)."}
    stamp = timeutil.iso(moment)
    with storage.archive_lock(root, "salience_review"):
        index = open_index(root)
        fresh = [index.record(r["id"]) for r in candidates]
        versions = [new_version(r, stamp, salience=0, demoted_at=stamp) for r in fresh
                    if r and r.get("salience_basis") == "imported-heuristic" and (r.get("salience") or 0) > 0]
        if versions:
            append_versions(root, versions)
    return {"dry_run": False, "demoted": [v["id"] for v in versions]}


def _quote(root, index, rec, limit=160):
    for ref in rec.get("verbatim_refs") or ():
        if ref.get("quote"):
            return {"capture_id": ref["capture_id"], "quote": ref["quote"][:limit]}
    for cid in rec.get("capture_ids") or ():
        row = index.capture(cid)
        if row and row.get("status") != "forgotten":
            try:
                text = checked_text(root, row["path"], row.get("utf8_sha256"))
            except PuError:
                continue
            return {"capture_id": cid, "quote": text[:limit], "excerpt": len(text) > limit}
    return None


def review_v2(root, deep=False, json=True, limit=50, offset=0, now=None):  # noqa: A002  (mirrors the CLI flag)
    """A review package: risky items to re-check against the user's words, with ids and quotes. Writes nothing."""
    archive.require(root)
    index = open_index(root)
    live = index.records_where("status NOT IN ('redirected','forgotten','rejected')")
    items = []

    def add(kind, rec, why):
        entry = {"check": kind, "id": rec["id"], "kind": rec.get("kind"), "title": rec.get("title"), "why": why}
        if deep:
            entry["words"] = _quote(root, index, rec)
        items.append(entry)

    for rec in live:
        if rec.get("unresolved_referents"):
            add("attribution", rec, f"unresolved referents {rec['unresolved_referents']}: who is meant?")
        for cid in rec.get("capture_ids") or ():
            row = index.capture(cid) or {}
            imported = (row.get("source") or "").startswith("import")
            if not imported and row.get("speaker") not in (None, "user"):
                add("attribution", rec, f"cites {cid}, spoken by {row.get('speaker')}, not the user")
        if rec.get("layer") == "user_fact" and HEDGES.search(f"{rec.get('title') or ''} {rec.get('summary') or ''}"):
            add("layer_mixing", rec, "stated as a fact but worded as a guess")
        if rec.get("fidelity") == "summary_only":
            add("summary_debt", rec, "rests on a summary, not the user's words")
        if rec.get("kind") in ("hypothesis", "intent") and rec.get("status") == "candidate" and not rec.get("contradicts"):
            add("hypothesis_without_counter_evidence", rec, "no contradicting record listed")
        if schema.is_timeline(rec.get("kind")) and rec.get("date_start") and rec.get("date_basis") in (None, "occurred"):
            said = min(((index.capture(c) or {}).get("occurred_at") or (index.capture(c) or {}).get("captured_at") or "9999")[:10]
                       for c in rec.get("capture_ids") or ["-"])
            if rec["kind"] == "event" and said != "9999" and rec["date_start"][:len(said)] > said[:len(rec["date_start"])] \
                    and rec.get("date_precision") not in ("relative", "approximate"):
                add("time_order", rec, f"dated {rec['date_start']}, after the words were said ({said}): a plan, or a wrong date?")
    streaks = {}
    for f in _feedback(root):
        for rid in f.get("record_ids") or ():
            streaks.setdefault(rid, []).append(f.get("verdict"))
    for rid, verdicts in sorted(streaks.items()):
        tail = 0
        for v in reversed(verdicts):
            if v not in ("missed", "corrected"):
                break
            tail += 1
        rec = index.record(rid)
        if tail >= 2 and rec:
            add("feedback_miss_streak", rec, f"{tail} misses or corrections in a row")
    due, _up, _und = due_followups(root, (now and timeutil.iso(now)) or None)
    if limit < 1 or offset < 0:
        raise PuError("BAD_ARGUMENT", "limit must be >= 1 and offset >= 0",
                      "Pass {arg:limit} of 1 or more and {arg:offset} of 0 or more (next_offset pages on).")
    shown = items[offset:offset + limit]
    more = offset + len(shown) < len(items)
    out = {"generated_at": timeutil.iso(now or timeutil.now()), "total": len(items), "shown": len(shown), "items": shown,
           "truncated": more, "next_offset": offset + len(shown) if more else None,
           "due_followups": [brief(root, f, with_prompt=True) for f in due], "counts": {},
           "note": "Nothing was changed. Re-check each item against its words; correct with {cmd:update_state} or {cmd:add_record}."}
    for item in items:
        out["counts"][item["check"]] = out["counts"].get(item["check"], 0) + 1
    return out

