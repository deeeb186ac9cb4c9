"""Explicit forgetting: the only place anything is permanently deleted.

Forgetting a capture removes its bytes and cascades by recorded dependency:
records that rested only on it are removed; records with other sources lose
only the parts that cited it (the link, the quoted span, an annotation);
follow-ups it raised close as `resolved`; receipts lose the snippets of its
words; traces lose the ids and the query text tied to it; derived views are
dropped and rebuilt. Forgetting a record removes every version of it.
A tombstone keeps the ids and hashes (never content) so that restores and
re-imports cannot bring it back, and validation does not report the gap.
Without confirm, nothing is written: the plan lists every affected item.
"""

import json
import os

from . import archive, paths, schema, storage, timeutil
from .archive_index import forget_cached, open_index
from .errors import PuError

REDACTED = "[forgotten]"


def _lines(path):
    """Raw lines of a JSONL file with their parsed objects (None for lines that do not parse)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            obj = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            obj = None
        out.append((line, obj if isinstance(obj, dict) else None))
    return out


def _rewrite(root, path, transform):
    """Rewrite a JSONL file line by line; transform(obj) -> obj, or None to drop. Lines that do not parse are kept."""
    entries = _lines(path)
    out, changed = [], False
    for raw, obj in entries:
        if obj is None:
            out.append(raw)
            continue
        new = transform(obj)
        if new is None:
            changed = True
            continue
        if new != obj:
            changed = True
            out.append(storage.dumps_line(new).encode("utf-8"))
        else:
            out.append(raw)
    if changed:
        storage.atomic_write(root, path, b"".join(line + b"\n" for line in out))
    return changed


def _record_versions(root):
    """{record id: [version objects]} across every records file (a full read: forgetting is rare)."""
    versions = {}
    rdir = paths.records_dir(root)
    for name in sorted(os.listdir(rdir)) if rdir.is_dir() else ():
        if name.endswith(".jsonl"):
            for _raw, obj in _lines(rdir / name):
                if obj and isinstance(obj.get("id"), str):
                    versions.setdefault(obj["id"], []).append(obj)
    return versions


def plan(root, item_id, again=False):
    """What forgetting `item_id` would remove or change. Writes nothing.

    again=True plans for an item a tombstone already names (it came back in a restore).
    """
    paths.check_id(item_id, "id")
    index = open_index(root)
    if index.tombstoned(item_id) and not again:
        raise PuError("FORGET_ALREADY", f"{item_id} was already forgotten", "Nothing to do.")
    cap = index.capture(item_id)
    versions = _record_versions(root)
    is_record = item_id in versions
    if cap is not None and is_record:
        raise PuError("FORGET_AMBIGUOUS", f"{item_id} names both a capture and a record", "Nothing was forgotten; this should not happen: run validate_memory.py.")
    if cap is None and not is_record:
        raise PuError("FORGET_UNKNOWN", f"no capture or record {item_id}", "Check the id (retrieve_v2 shows ids); nothing was forgotten.")
    result = {"id": item_id, "kind": "capture" if cap else "record", "remove_records": [], "edit_records": [],
              "close_followups": [], "reclose_captures": []}
    if cap is not None:
        if cap.get("status") == "forgotten" and not again:
            raise PuError("FORGET_ALREADY", f"{item_id} was already forgotten", "Nothing to do: its words are gone and a tombstone keeps them from coming back.")
        result["capture"] = {"path": cap["path"], "sha256": cap.get("utf8_sha256"), "turn_id": cap.get("turn_id"),
                             "kind": cap.get("kind")}
        for rid, vs in sorted(versions.items()):
            if not any(item_id in schema.cited_captures(v) or (v.get("review") or {}).get("capture_id") == item_id for v in vs):
                continue
            latest = vs[-1]
            if schema.cited_captures(latest) <= {item_id} and schema.needs_capture(latest.get("kind")):
                result["remove_records"].append(rid)
            else:
                result["edit_records"].append(rid)
        for row in index.db.execute("SELECT data FROM followups").fetchall():
            fu = json.loads(row[0])
            if fu.get("capture_id") == item_id and fu.get("status") == "open":
                result["close_followups"].append(fu["id"])
        if cap.get("kind") == "attachment":
            doc_sha = cap.get("utf8_sha256")
            shared = index.count("SELECT COUNT(*) FROM captures WHERE utf8_sha256=? AND capture_id != ? AND status != 'forgotten'",
                                 (doc_sha, item_id))
            result["remove_blob"] = not shared
    else:
        result["remove_records"].append(item_id)
    removed = set(result["remove_records"])
    for cid in sorted({c for rid in removed for v in versions.get(rid, ()) for c in schema.cited_captures(v)} - {item_id}):
        row = index.capture(cid)
        others = set(index.records_citing(cid)) - removed
        if row and row.get("status") == "derived" and not others:
            result["reclose_captures"].append(cid)
    return result


def apply(root, item_plan, moment, tombstones=True):
    """Carry out a plan; the caller holds the lock. tombstones=False when re-applying old ones."""
    item_id = item_plan["id"]
    stamp = timeutil.iso(moment)
    removed = set(item_plan["remove_records"])
    edited = set(item_plan["edit_records"])
    gone = removed | ({item_id} if item_plan["kind"] == "capture" else set())

    def record_transform(obj):
        rid = obj.get("id")
        if rid in removed:
            return None
        if rid in edited:
            obj = dict(obj)
            obj["capture_ids"] = [c for c in obj.get("capture_ids") or () if c != item_id]
            obj["verbatim_refs"] = [r for r in obj.get("verbatim_refs") or () if not (isinstance(r, dict) and r.get("capture_id") == item_id)]
            for key in ("capture_ids", "verbatim_refs"):
                if not obj[key]:
                    del obj[key]
            if obj.get("attachment_capture_id") == item_id:
                del obj["attachment_capture_id"]
            review = obj.get("review")
            if isinstance(review, dict) and review.get("capture_id") == item_id:
                obj["review"] = dict(review, capture_id=None, note=REDACTED)
        return obj

    rdir = paths.records_dir(root)
    for name in sorted(os.listdir(rdir)):
        if name.endswith(".jsonl"):
            _rewrite(root, rdir / name, record_transform)

    def followup_transform(obj):
        res = obj.get("resolution")
        if isinstance(res, dict) and res.get("capture_id") == item_id:
            obj = dict(obj, resolution=dict(res, capture_id=None))
        return obj

    _rewrite(root, paths.followups_path(root), followup_transform)
    index = open_index(root)
    closures = []
    for fid in item_plan["close_followups"]:
        fu = index.followup(fid)
        if fu and fu.get("status") == "open":
            closures.append(dict(fu, version=fu["version"] + 1, status="resolved", updated_at=stamp,
                                 resolution={"channel": "resolved", "note": "its source capture was forgotten on request",
                                             "capture_id": None, "at": stamp}))
    if closures:
        storage.append_jsonl(root, paths.followups_path(root), closures)

    if item_plan["kind"] == "capture":
        turn = item_plan["capture"].get("turn_id")

        def receipt_transform(obj):
            if turn and obj.get("turn_id") == turn:
                obj = dict(obj)
                for key in ("reasons", "reasons_suppressed", "vetoed"):
                    obj[key] = [dict(r, evidence=REDACTED) if isinstance(r, dict) else r for r in obj.get(key) or ()]
            return obj

        _rewrite(root, paths.receipts_path(root), receipt_transform)
    _purge_traces(root, item_id, gone)

    events = []
    if item_plan["kind"] == "capture":
        events.append({"event": "forgotten", "capture_id": item_id, "at": stamp})
    for cid in item_plan["reclose_captures"]:
        events.append({"event": "finalized", "capture_id": cid, "disposition": "no-derivation-needed",
                       "reason": f"its derived record was forgotten on request ({', '.join(sorted(removed))})",
                       "record_ids": [], "at": stamp})
    if events:
        storage.append_jsonl(root, paths.ledger_events_path(root), events)
    stones = []
    if item_plan["kind"] == "capture":
        cap = item_plan["capture"]
        stones.append({"id": item_id, "kind": "capture", "sha256": cap.get("sha256"), "turn_id": cap.get("turn_id"),
                       "forgotten_at": stamp, "removed_records": sorted(removed), "edited_records": sorted(edited),
                       "closed_followups": item_plan["close_followups"]})
    for rid in sorted(removed):
        stones.append({"id": rid, "kind": "record", "forgotten_at": stamp, "because": item_id if rid != item_id else "asked"})
    index = open_index(root)
    stones = [t for t in stones if tombstones or not index.tombstoned(t["id"])]
    if stones:
        storage.append_jsonl(root, paths.forgotten_path(root), stones)
    if item_plan["kind"] == "capture":
        storage.remove_file(root, paths.inside_root(root, item_plan["capture"]["path"]))
        if item_plan.get("remove_blob"):
            storage.remove_file(root, paths.inside_root(root, paths.attachment_relpath(item_plan["capture"]["sha256"])))
    from .views import discard

    discard(root)
    forget_cached(root)


def _purge_traces(root, item_id, gone):
    tdir = paths.traces_dir(root)
    if not tdir.is_dir():
        return

    def clean(value):
        if isinstance(value, list):
            return [clean(v) for v in value if not (isinstance(v, str) and v in gone)
                    and not (isinstance(v, dict) and v.get("id") in gone)]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    def transform(obj):
        obj = clean(obj)
        if obj.get("capture_id") == item_id:
            obj.update(capture_id=None, query=REDACTED, tokens=[], expand=[], forgotten=True)
        return obj

    for name in sorted(os.listdir(tdir)):
        if name.endswith(".jsonl"):
            _rewrite(root, tdir / name, transform)


def forget(root, id, confirm=False, now=None):
    """Forget a capture or a record. A dry run unless confirm."""
    archive.require(root)
    # A dry run only reads: a shared lock, so it also works on a read-only copy.
    with storage.archive_lock(root, "forget") if confirm else storage.snapshot_lock(root):
        item_plan = plan(root, id)
        summary = {"id": id, "kind": item_plan["kind"], "records_removed": item_plan["remove_records"],
                   "records_edited": item_plan["edit_records"], "followups_closed": item_plan["close_followups"],
                   "captures_reclosed": item_plan["reclose_captures"]}
        if item_plan["kind"] == "capture":
            summary["capture_file"] = item_plan["capture"]["path"]
            if item_plan.get("remove_blob"):
                summary["attachment_bytes"] = paths.attachment_relpath(item_plan["capture"]["sha256"])
        if not confirm:
            return dict(summary, dry_run=True, applied=False,
                        next="Nothing was changed. Run again with confirm (--confirm) to forget permanently.")
        apply(root, item_plan, now or timeutil.now())
    return dict(summary, dry_run=False, applied=True,
                note="Forgotten permanently; a tombstone keeps only ids and hashes.")


def reapply_tombstones(root, now=None):
    """After a restore: forget again anything a tombstone names that came back. Caller holds the lock."""
    moment = now or timeutil.now()
    forget_cached(root)
    stones = [json.loads(r[0]) for r in open_index(root).db.execute("SELECT data FROM tombstones ORDER BY line").fetchall()]
    redone = []
    for stone in stones:
        sid = stone.get("id")
        index = open_index(root)
        cap = index.capture(sid)
        back = (cap is not None and cap.get("status") != "forgotten"
                and os.path.exists(os.path.join(root, cap.get("path") or ""))) or index.record(sid) is not None
        if not back:
            continue
        try:
            item_plan = plan(root, sid, again=True)
        except PuError:
            continue
        apply(root, item_plan, moment, tombstones=False)
        redone.append(sid)
    return redone
