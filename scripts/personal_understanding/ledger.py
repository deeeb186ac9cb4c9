"""The derivation ledger: every capture is pending until it is derived or closed.

Truth: ledger events in memory/v2/ledger.jsonl (captured, finalized, reopened,
forgotten) plus the capture links inside records. The file
memory/derivation-ledger.json is a projection written by `--repair` and by
rebuild_views; nothing reads it to make decisions.
"""

import os
import re

from . import archive, paths, storage, timeutil
from .archive_index import CAPTURE_PATH, open_index
from .errors import PuError

DISPOSITIONS = ("derived", "no-derivation-needed")
_EMPTY_REASONS = {
    "", "n/a", "na", "none", "no", "nothing", "skip", "skipped", "ok", "done", "-", "...", "no reason",
    "not needed", "no need", "无", "没有", "不需要", "略", "跳过",
}


def check_reason(reason):
    text = (reason or "").strip()
    if text.lower().strip(".!。 ") in _EMPTY_REASONS or len(re.sub(r"\s", "", text)) < 6:
        raise PuError(
            "LEDGER_REASON_REQUIRED",
            "no-derivation-needed needs a specific reason",
            "Say why nothing is derived, e.g. 'greeting only', 'already covered by rec-...', 'technical question, no personal content'.",
        )
    return text


def finalize(root, capture_id, disposition, reason=None, now=None):
    """Close a capture: `derived` (records cite it) or `no-derivation-needed` (with a reason)."""
    archive.require(root)
    paths.check_id(capture_id, "capture id")
    if disposition not in DISPOSITIONS:
        raise PuError("BAD_ARGUMENT", f"disposition must be one of {', '.join(DISPOSITIONS)}", "derived: records cite it; no-derivation-needed: nothing to keep, with a specific {arg:reason}.")
    if disposition == "no-derivation-needed":
        reason = check_reason(reason)
    moment = now or timeutil.now()
    with storage.archive_lock(root, "finalize_capture") as lock_notice:
        index = open_index(root)
        row = index.capture(capture_id)
        if row is None:
            raise PuError("CAPTURE_NOT_FOUND", f"no capture {capture_id} in the ledger", "Check the id returned by {cmd:capture_user_update}.")
        if row["status"] == "forgotten":
            raise PuError("CAPTURE_FORGOTTEN", f"capture {capture_id} was forgotten", "A forgotten capture needs no closing; nothing was changed.")
        record_ids = index.records_citing(capture_id)
        if disposition == "derived" and not record_ids:
            raise PuError(
                "LEDGER_NO_RECORDS",
                f"capture {capture_id} has no record citing it, so it cannot be `derived`",
                "Add at least one record citing it ({arg:capture_ids}) first, or close it as no-derivation-needed with a {arg:reason}.",
            )
        if row["status"] == "derived" and disposition == "no-derivation-needed":
            raise PuError("LEDGER_ALREADY_DERIVED", f"capture {capture_id} is already derived into {', '.join(record_ids)}", "Nothing to do.")
        unchanged = row["status"] == disposition and (disposition == "derived" or row.get("reason") == reason)
        event = {
            "event": "finalized",
            "capture_id": capture_id,
            "disposition": disposition,
            "reason": reason if disposition == "no-derivation-needed" else (reason or None),
            "record_ids": record_ids,
            "at": timeutil.iso(moment),
        }
        if not unchanged:
            storage.append_jsonl(root, paths.ledger_events_path(root), event)
    out = {
        "capture_id": capture_id,
        "status": disposition,
        "reason": event["reason"],
        "record_ids": record_ids,
        "changed": not unchanged,
        "turn_id": row.get("turn_id"),
        "next": f"Run {{cmd:session_check}} for turn {row.get('turn_id')} before telling the user it is saved." if row.get("turn_id") else "",
    }
    if lock_notice:
        out["warnings"] = [lock_notice]
    return out


# --- audit and repair -------------------------------------------------------

def _disk_captures(root):
    """{capture_id: relpath} of capture files on disk (a full walk: audit only)."""
    found = {}
    base = paths.conversation_dir(root)
    for dirpath, _dirs, files in os.walk(base):
        for name in files:
            if name.endswith(".json") and not name.startswith("."):
                found[name[:-5]] = paths.rel(root, os.path.join(dirpath, name))
    return found


def _state(index):
    rows = index.db.execute(f"SELECT capture_id, {CAPTURE_PATH}, status, reason, turn_id, source FROM captures").fetchall()
    links = {}
    for capture_id, record_id in index.db.execute("SELECT target, record_id FROM record_refs WHERE rel='capture'"):
        links.setdefault(capture_id, []).append(record_id)
    return rows, links


def audit(root):
    """Compare the ledger with the captures on disk and the records' links."""
    archive.require(root)
    index = open_index(root)
    rows, links = _state(index)
    disk = _disk_captures(root)
    tombstoned = {r[0] for r in index.db.execute("SELECT id FROM tombstones")}
    registered = {r[0] for r in rows}
    findings = []
    for cid, relpath in sorted(disk.items()):
        if cid not in registered:
            findings.append({"code": "CAPTURE_UNREGISTERED", "capture_id": cid, "path": relpath,
                             "repair": "register as pending"})
    for cid, relpath, status, reason, _turn, source in rows:
        if status == "forgotten" or cid in tombstoned:
            continue
        if status == "pending" and str(source or "").startswith("import:"):
            findings.append({"code": "IMPORT_NOT_CLOSED", "capture_id": cid, "source": source,
                             "repair": "close it as the import does (kept verbatim, derived on demand)"})
        if cid not in disk and not os.path.exists(os.path.join(root, relpath or "")):
            findings.append({"code": "CAPTURE_MISSING", "capture_id": cid, "path": relpath,
                             "repair": "none: restore the file from a backup"})
        if status == "derived" and not links.get(cid):
            findings.append({"code": "DERIVED_WITHOUT_RECORD", "capture_id": cid,
                             "repair": "reopen as pending"})
        if status == "no-derivation-needed" and not (reason or "").strip():
            findings.append({"code": "NO_DERIVATION_WITHOUT_REASON", "capture_id": cid,
                             "repair": "reopen as pending"})
    for cid in sorted(links):
        if cid not in registered and cid not in tombstoned:
            findings.append({"code": "RECORD_CITES_UNKNOWN_CAPTURE", "capture_id": cid, "record_ids": sorted(links[cid]),
                             "repair": "none: the records keep the reference; validate reports it"})
    counts = {}
    for row in rows:
        counts[row[2]] = counts.get(row[2], 0) + 1
    return {"captures": len(rows), "by_status": counts, "findings": findings, "consistent": not findings}


def repair(root, now=None):
    """Finish interrupted work, set torn tails aside, append the events that make the ledger agree
    with captures and records, and write the projection."""
    archive.require(root)
    moment = timeutil.iso(now or timeutil.now())
    from .recovery import REPAIR, finish

    with storage.archive_lock(root, REPAIR):
        finished = finish(root)
        torn = _set_aside_torn_tails(root)
        report = audit(root)
        events = []
        for finding in report["findings"]:
            cid = finding["capture_id"]
            if finding["code"] == "CAPTURE_UNREGISTERED":
                from .capture import captured_event, read_capture

                try:
                    doc = read_capture(root, finding["path"])
                except PuError:
                    continue
                events.append(dict(captured_event(dict(doc, capture_id=cid), finding["path"], at=moment), repaired=True))
                if str(doc.get("source") or "").startswith("import:"):
                    # An import killed between its files and its ledger lines: close them as the import would have.
                    from .history import closed_event

                    events.append(dict(closed_event(cid, doc["source"][len("import:"):], moment), repaired=True))
            elif finding["code"] == "IMPORT_NOT_CLOSED":
                from .history import closed_event

                events.append(dict(closed_event(cid, finding["source"][len("import:"):], moment), repaired=True))
            elif finding["code"] in ("DERIVED_WITHOUT_RECORD", "NO_DERIVATION_WITHOUT_REASON"):
                events.append({"event": "reopened", "capture_id": cid, "reason": finding["code"], "at": moment})
        if events:
            storage.append_jsonl(root, paths.ledger_events_path(root), events)
        stray = _remove_stray_temp_files(root)
        projection = write_projection(root, moment)
    after = audit(root)
    out = {"repaired": len(events), "events": [e["event"] + " " + e["capture_id"] for e in events],
           "stray_temp_files_removed": stray, "finished": finished,
           "remaining_findings": after["findings"], "by_status": after["by_status"],
           "projection": paths.rel(root, paths.ledger_projection_path(root)), "captures": projection}
    if torn:
        out["warnings"] = torn
    return out


def _jsonl_logs(root):
    """Every append-only log of the archive (records and traces included)."""
    v2 = paths.v2_dir(root)
    logs = [v2 / name for name in paths.LOG_FILES + ("quarantine.jsonl",)]
    for folder in (paths.records_dir(root), paths.traces_dir(root)):
        logs += [folder / n for n in sorted(os.listdir(folder)) if n.endswith(".jsonl")] if folder.is_dir() else []
    return logs


def _set_aside_torn_tails(root):
    """A last line cut short by a crash blocks every gate; move it to <log>.torn for a person to look at."""
    out = []
    for log in _jsonl_logs(root):
        size = storage.set_aside_tail(root, log)
        if size:
            rel = paths.rel(root, log)
            out.append({"code": "TORN_TAIL_SET_ASIDE", "message": f"{size} bytes of an unfinished last line of {rel} "
                        f"were moved to {rel}.torn", "hint": "It was never a whole line, so nothing acknowledged is "
                        "lost; look at it and delete the .torn file."})
    return out


def _remove_stray_temp_files(root):
    """Temp files left by killed writers. Under the lock no writer is mid-write, so every one is stray."""
    removed = 0
    for top in (paths.memory_dir(root), paths.sources_dir(root)):
        for dirpath, _dirs, files in os.walk(top):
            for name in files:
                if name.startswith(".") and name.endswith(".tmp"):
                    storage.remove_file(root, os.path.join(dirpath, name))
                    removed += 1
    return removed


def write_projection(root, moment=None):
    """memory/derivation-ledger.json: capture -> status, reason, records (both ways)."""
    index = open_index(root)
    rows, links = _state(index)
    captures = {}
    for cid, relpath, status, reason, turn, _source in sorted(rows):
        captures[cid] = {"status": status, "reason": reason, "turn_id": turn, "path": relpath,
                         "record_ids": sorted(links.get(cid, []))}
    records = {}
    for cid, rids in links.items():
        for rid in rids:
            records.setdefault(rid, []).append(cid)
    doc = {
        "generated_at": moment or timeutil.now_iso(),
        "note": "Projection of memory/v2/ledger.jsonl and record links; rebuild with derivation_ledger.py --repair.",
        "captures": captures,
        "records": {rid: sorted(cids) for rid, cids in sorted(records.items())},
    }
    storage.atomic_write_json(root, paths.ledger_projection_path(root), doc)
    return len(captures)


def derivation_ledger(root, repair_ledger=False):
    return repair(root) if repair_ledger else audit(root)
