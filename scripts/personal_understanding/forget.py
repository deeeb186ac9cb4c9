"""Explicit forgetting: the only place anything is permanently deleted.

Forgetting is journalled. Its first write is the tombstone (memory/v2/forgotten.jsonl,
`state: intent`, ids and hashes only): from that moment the index hides what it
names, so no reader serves the words. Then, in order: derived views are dropped;
records resting only on the capture are removed and records with other sources
lose the links, spans and quoted runs of its words (redact.py); follow-ups it
raised lose their words and close as `resolved`; its turn's receipt loses the
snippets of its message; traces tied to it, or of reads that served it, lose their
query (and those reads' receipts their snippets); feedback, set-aside
fragments and the snapshots under backups/ are cleaned the same way; the ledger
records it; the capture's bytes go last; then a completion line. A crash anywhere
leaves the intent on disk, and the next command that takes the archive lock (or
`derivation_ledger --repair`) completes the rest: every step is idempotent.

Forgetting a record removes every version of it; organizing cards (entities,
context cards) that only forgotten records pointed at go with it. A dry run
(no confirm) writes nothing and lists every file that would change.
"""

import base64
import json
import os
from pathlib import Path

from . import archive, backup, paths, redact, schema, storage, timeutil
from .archive_index import forget_cached, open_index, record_refs, stored_sha
from .errors import PuError
from .views import discard

REDACTED = redact.REDACTED


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


def _logs(directory):
    """The .jsonl files of a folder, in name order (none when it is missing)."""
    return [directory / n for n in sorted(os.listdir(directory)) if n.endswith(".jsonl")] if directory.is_dir() else []


def _rewritten(path, transform):
    """New bytes of a JSONL file after transform(obj) -> obj or None (drop); None when nothing changes.

    Lines that do not parse are kept as they are.
    """
    out, changed = [], False
    for raw, obj in _lines(path):
        if obj is None:
            out.append(raw)
            continue
        new = transform(obj)
        if new is None:
            changed = True
        elif new != obj:
            changed = True
            out.append(storage.dumps_line(new).encode("utf-8"))
        else:
            out.append(raw)
    return b"".join(line + b"\n" for line in out) if changed else None


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


def _capture_text(root, relpath):
    try:
        with open(paths.inside_root(root, relpath), "rb") as handle:
            doc = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, PuError):
        return None
    return doc.get("text") if isinstance(doc.get("text"), str) else None


# --- the plan ----------------------------------------------------------------

def plan(root, item_id, again=False):
    """What forgetting `item_id` removes or changes, as a tombstone-to-be. Writes nothing.

    again=True plans for an item a tombstone already names (finishing it, or it came back in a restore).
    """
    paths.check_id(item_id, "id")
    index = open_index(root)
    if index.tombstoned(item_id) and not again:
        raise PuError("FORGET_ALREADY", f"{item_id} was already forgotten",
                      "Nothing to do: its words are gone and a tombstone keeps them from coming back.")
    cap = index.capture(item_id)
    versions = _record_versions(root)
    is_record = item_id in versions
    if cap is not None and is_record:
        raise PuError("FORGET_AMBIGUOUS", f"{item_id} names both a capture and a record",
                      "Nothing was forgotten; this should not happen: run {cmd:validate_memory}.")
    if cap is None and not is_record:
        raise PuError("FORGET_UNKNOWN", f"no capture or record {item_id}",
                      "Check the id ({cmd:retrieve_v2} shows ids); nothing was forgotten.")
    stone = {"id": item_id, "kind": "capture" if cap else "record", "removed_records": [], "edited_records": [],
             "closed_followups": [], "reclosed_captures": []}
    if cap is not None:
        if cap.get("status") == "forgotten" and not again:
            raise PuError("FORGET_ALREADY", f"{item_id} was already forgotten",
                          "Nothing to do: its words are gone and a tombstone keeps them from coming back.")
        stone.update(path=cap["path"], sha256=cap.get("utf8_sha256"), turn_id=cap.get("turn_id"),
                     capture_kind=cap.get("kind"), source=cap.get("source"))
        for rid, vs in sorted(versions.items()):
            if not any(item_id in schema.cited_captures(v) or (v.get("review") or {}).get("capture_id") == item_id for v in vs):
                continue
            latest = vs[-1]
            if schema.cited_captures(latest) <= {item_id} and schema.needs_capture(latest.get("kind")):
                stone["removed_records"].append(rid)
            else:
                stone["edited_records"].append(rid)
        for row in index.db.execute("SELECT data FROM followups").fetchall():
            fu = json.loads(row[0])
            if fu.get("capture_id") == item_id and fu.get("status") == "open":
                stone["closed_followups"].append(fu["id"])
        if cap.get("kind") == "attachment":
            shared = index.count("SELECT COUNT(*) FROM captures WHERE sha256=? AND capture_id != ? AND status != 'forgotten'",
                                 (stored_sha(cap.get("utf8_sha256")), item_id))
            if not shared:
                stone["blob"] = paths.attachment_relpath(cap.get("utf8_sha256"))
    else:
        stone["removed_records"].append(item_id)
    stone["removed_records"] += _orphans(index, versions, set(stone["removed_records"]))
    removed = set(stone["removed_records"])
    for cid in sorted({c for rid in removed for v in versions.get(rid, ()) for c in schema.cited_captures(v)} - {item_id}):
        row = index.capture(cid)
        if row and row.get("status") == "derived" and not set(index.records_citing(cid)) - removed:
            stone["reclosed_captures"].append(cid)
    return stone


def _orphans(index, versions, removed):
    """Organizing cards only the removed records pointed at (an entity named only in forgotten words)."""
    out = []
    targets = {t for rid in removed for v in versions.get(rid, ()) for _rel, t in record_refs(v)}
    for target in sorted(targets - removed):
        vs = versions.get(target)
        if not vs or schema.cited_captures(vs[-1]) or schema.needs_capture(vs[-1].get("kind")):
            continue
        if set(index.referrers(target)) <= removed:
            out.append(target)
    return out


# --- the work, shared by the dry run and the real thing ------------------------------

class _Work:
    """The rewrites one tombstone asks for, computed from what is on disk now."""

    def __init__(self, root, stone):
        self.root = root
        self.stone = stone
        self.id = stone["id"]
        self.is_capture = stone.get("kind") == "capture"
        self.removed = set(stone.get("removed_records") or ())
        self.gone = self.removed | ({self.id} if self.is_capture else set())
        index = open_index(root)
        self.turn = stone.get("turn_id")
        self.turn_captures = set(index.turn_capture_ids(self.turn)) | {self.id} if self.turn else {self.id}
        text = _capture_text(root, stone["path"]) if self.is_capture and stone.get("path") else None
        self.source = redact.Source(text) if text else None
        self._texts = {}
        self._served = None

    def _text_of(self, cid):
        if cid not in self._texts:
            row = open_index(self.root).capture(cid)
            self._texts[cid] = _capture_text(self.root, row["path"]) if row and row.get("path") else None
        return self._texts[cid]

    def record(self, obj):
        rid = obj.get("id")
        if rid in self.removed:
            return None
        review = obj.get("review") if isinstance(obj.get("review"), dict) else {}
        if not self.is_capture or (self.id not in schema.cited_captures(obj) and review.get("capture_id") != self.id):
            return obj
        obj = dict(obj)
        obj["capture_ids"] = [c for c in obj.get("capture_ids") or () if c != self.id]
        obj["verbatim_refs"] = [r for r in obj.get("verbatim_refs") or ()
                                if not (isinstance(r, dict) and r.get("capture_id") == self.id)]
        for key in ("capture_ids", "verbatim_refs"):
            if not obj[key]:
                del obj[key]
        if obj.get("attachment_capture_id") == self.id:
            del obj["attachment_capture_id"]
        if review.get("capture_id") == self.id:
            obj["review"] = dict(review, capture_id=None, note=REDACTED)
        if self.source:
            keep = [self._text_of(c) for c in schema.cited_captures(obj)]
            obj = redact.scrub(obj, self.source.with_keep([k for k in keep if k]))
        return obj

    def followup(self, obj):
        res = obj.get("resolution") if isinstance(obj.get("resolution"), dict) else {}
        raised, answered = obj.get("capture_id") == self.id, res.get("capture_id") == self.id
        return redact.followup(obj, raised, answered) if self.is_capture and (raised or answered) else obj

    def receipt(self, obj):
        message = self.is_capture and self.stone.get("capture_kind") != "attachment"  # the receipt quotes the message only
        own = message and self.turn and obj.get("turn_id") == self.turn
        return redact.receipt(obj) if own or obj.get("turn_id") in self._reads_served()[0] else obj

    def _reads_served(self):
        """(turn ids, trace ids) of the reads that served what is forgotten: their questions name it ("who is
        Quimby?", "forget what I said about Quimby") and go with it. The traces are read once, before any is
        rewritten (receipts come first; the first trace asks otherwise)."""
        if self._served is None:
            turns, traces = set(), set()
            for path in _logs(paths.traces_dir(self.root)):
                for _raw, obj in _lines(path):
                    if obj and any(i in json.dumps(obj, ensure_ascii=False) for i in self.gone):
                        traces.add(obj.get("trace_id"))
                        if obj.get("turn_id"):
                            turns.add(obj["turn_id"])
            self._served = (turns, traces)
        return self._served

    def _clean_ids(self, value):
        if isinstance(value, list):
            return [self._clean_ids(v) for v in value if not (isinstance(v, str) and v in self.gone)
                    and not (isinstance(v, dict) and v.get("id") in self.gone)]
        if isinstance(value, dict):
            return {k: self._clean_ids(v) for k, v in value.items()}
        return value

    def trace(self, obj):
        served = obj.get("trace_id") in self._reads_served()[1]
        obj = self._clean_ids(obj)
        quoted = self.source is not None and bool(self.source.runs(obj.get("query"), redact.QUERY_RUN_WEIGHT))
        if served or self.is_capture and (obj.get("capture_id") in self.turn_captures or quoted):
            obj.update(query=REDACTED, tokens=[], expand=[], forgotten=True)
            if obj.get("capture_id") == self.id:
                obj["capture_id"] = None
        return redact.scrub(obj, self.source) if self.source else obj

    def feedback(self, obj):
        obj = self._clean_ids(obj)
        if self.is_capture and obj.get("capture_id") == self.id:
            obj.update(capture_id=None, note=REDACTED if isinstance(obj.get("note"), str) else obj.get("note"))
        return redact.scrub(obj, self.source) if self.source else obj

    def fragment(self, data):
        """Does a set-aside fragment of an interrupted write hold any of it?"""
        text = data.decode("utf-8", "replace")
        if any(i in text for i in self.gone) or (self.turn and self.turn in text):
            return True
        return self.source is not None and bool(self.source.runs(text))

    def quarantine(self, obj):
        try:
            data = base64.b64decode(obj.get("base64") or "")
        except ValueError:
            return obj
        return None if self.fragment(data) else obj

    def rewrites(self):
        """(path, new bytes) for every log this tombstone changes, computed one file at a time."""
        root = self.root
        for path in _logs(paths.records_dir(root)):
            yield path, _rewritten(path, self.record)
        yield paths.followups_path(root), _rewritten(paths.followups_path(root), self.followup)
        yield paths.receipts_path(root), _rewritten(paths.receipts_path(root), self.receipt)
        for path in _logs(paths.traces_dir(root)):
            yield path, _rewritten(path, self.trace)
        yield paths.feedback_path(root), _rewritten(paths.feedback_path(root), self.feedback)
        quarantine = paths.v2_dir(root) / "quarantine.jsonl"
        yield quarantine, _rewritten(quarantine, self.quarantine)
        for torn in _torn_files(root):
            pieces = [p for p in torn.read_bytes().split(b"\n") if p]
            kept = [p for p in pieces if not self.fragment(p)]
            yield torn, (b"".join(p + b"\n" for p in kept) if len(kept) != len(pieces) else None)


def _torn_files(root):
    """Unfinished lines set aside by repair (<log>.torn), outside the derived views."""
    views = os.path.abspath(paths.views_dir(root))
    out = []
    for dirpath, dirnames, filenames in os.walk(paths.v2_dir(root)):
        dirnames[:] = [d for d in dirnames if os.path.abspath(os.path.join(dirpath, d)) != views]
        out.extend(Path(dirpath) / n for n in sorted(filenames) if n.endswith(".torn"))
    return out


def places(root, stone):
    """Every place forgetting `stone` would change, relative to the root (the dry run's list)."""
    work = _Work(root, stone)
    out = [paths.rel(root, path) for path, data in work.rewrites() if data is not None]
    out += ["memory/v2/forgotten.jsonl (tombstone)", "memory/v2/ledger.jsonl (forgotten event)"]
    if stone.get("closed_followups"):
        out.append("memory/v2/followups.jsonl (closing versions)")
    if stone.get("path"):
        out.append(stone["path"] + " (deleted)")
    if stone.get("blob"):
        out.append(stone["blob"] + " (deleted)")
    out += [paths.rel(root, s) + (" (fails verification: cannot be rewritten)" if backup.verify_snapshot(s)[1]
                                  else " (rewritten without it, new manifest)")
            for s in backup.snapshots_holding(root, [stone["id"]])]
    out.append("memory/v2/views/ (derived: dropped and rebuilt)")
    return sorted(dict.fromkeys(out))


# --- carrying it out ---------------------------------------------------------------

def _stones_for(stone, stamp):
    """The intent lines: the item's own (with the plan) and one per record it removes."""
    lines = [dict(stone, state="intent", forgotten_at=stamp)]
    for rid in stone["removed_records"]:
        if rid != stone["id"]:
            lines.append({"id": rid, "kind": "record", "forgotten_at": stamp, "because": stone["id"]})
    return lines


def complete(root, stone, moment):
    """Finish a tombstone's work; the caller holds the lock. Safe to repeat after any crash."""
    stamp = timeutil.iso(moment)
    discard(root)  # pages and indexes built before the tombstone hold the words
    work = _Work(root, stone)
    for path, data in work.rewrites():
        if data is not None:
            storage.atomic_write(root, path, data)
    index = open_index(root)
    closures = []
    for fid in stone.get("closed_followups") or ():
        fu = index.followup(fid)
        if fu and fu.get("status") == "open":
            closures.append(dict(fu, version=fu["version"] + 1, status="resolved", updated_at=stamp,
                                 resolution={"channel": "resolved", "note": "its source capture was forgotten on request",
                                             "capture_id": None, "at": stamp}))
    if closures:
        storage.append_jsonl(root, paths.followups_path(root), closures)
    _rewritten, unverified = backup.rewrite_snapshots(root, [stone["id"]], moment)
    index = open_index(root)
    events = []
    if work.is_capture:
        events.append({"event": "forgotten", "capture_id": stone["id"], "at": stamp})
    removed = work.removed
    for cid in stone.get("reclosed_captures") or ():
        row = index.capture(cid)
        if row and row.get("status") == "derived" and not set(index.records_citing(cid)) - removed:
            events.append({"event": "finalized", "capture_id": cid, "disposition": "no-derivation-needed",
                           "reason": f"its derived record was forgotten on request ({', '.join(sorted(removed))})",
                           "record_ids": [], "at": stamp})
    if events:
        storage.append_jsonl(root, paths.ledger_events_path(root), events)
    if work.is_capture and stone.get("path"):
        storage.remove_file(root, paths.inside_root(root, stone["path"]))
    if stone.get("blob"):
        storage.remove_file(root, paths.inside_root(root, stone["blob"]))
    discard(root)
    storage.append_jsonl(root, paths.forgotten_path(root), {"id": stone["id"], "kind": stone.get("kind"),
                                                            "state": "done", "completed_at": stamp})
    forget_cached(root)
    return {"snapshots_not_verified": unverified}


def _tombstones(root):
    return [json.loads(r[0]) for r in open_index(root).db.execute("SELECT data FROM tombstones ORDER BY line")]


def _replanned(root, stone):
    """The tombstone's own plan, widened by what the archive holds now (a restore may have brought more back)."""
    try:
        fresh = plan(root, stone["id"], again=True)
    except PuError:
        return stone
    merged = dict(fresh, **{k: v for k, v in stone.items() if k not in fresh or v})
    for key in ("removed_records", "edited_records", "closed_followups", "reclosed_captures"):
        merged[key] = sorted(set(stone.get(key) or ()) | set(fresh.get(key) or ()))
    return merged


def finish_pending(root, now=None):
    """Complete every forget whose intent is on disk but not its completion. Caller holds the lock."""
    done = []
    for stone in _tombstones(root):
        if stone.get("state") == "intent":
            complete(root, _replanned(root, stone), now or timeutil.now())
            done.append(stone["id"])
    return done


def reapply(root, now=None):
    """After files came back (a restore, a snapshot being cleaned): forget again whatever a tombstone names."""
    redone = []
    for stone in _tombstones(root):
        sid = stone["id"]
        index = open_index(root)
        cap = index.capture(sid)
        back = ((cap is not None and os.path.exists(os.path.join(root, cap.get("path") or "")))
                or stone.get("state") == "intent"
                or index.count("SELECT COUNT(*) FROM records WHERE id=?", (sid,))
                or index.count("SELECT COUNT(*) FROM record_refs WHERE target=? AND rel='capture'", (sid,)))
        if back and not stone.get("because"):
            complete(root, _replanned(root, stone), now or timeutil.now())
            redone.append(sid)
    return redone


def forget(root, id, confirm=False, now=None):
    """Forget a capture or a record. A dry run unless confirm."""
    archive.require(root)
    paths.check_id(id, "id")
    # A dry run only reads: a shared lock, so it also works on a read-only copy.
    with storage.archive_lock(root, "forget") if confirm else storage.snapshot_lock(root):
        # Normally the lock has already finished an interrupted forget of this id; if that failed, finish it here.
        stone = next((s for s in _tombstones(root) if s["id"] == id and s.get("state") == "intent"), None)
        pending = stone is not None
        stone = _replanned(root, stone) if pending else plan(root, id)
        summary = {"id": id, "kind": stone["kind"], "records_removed": stone["removed_records"],
                   "records_edited": stone["edited_records"], "followups_closed": stone["closed_followups"],
                   "captures_reclosed": stone["reclosed_captures"], "places": places(root, stone)}
        if stone.get("path"):
            summary["capture_file"] = stone["path"]
        if stone.get("blob"):
            summary["attachment_bytes"] = stone["blob"]
        mirror = _mirror(root)
        if mirror:
            summary["not_reached"] = [f"{mirror} (a backup copy outside the archive: delete or re-make it yourself)"]
        if not confirm:
            return dict(summary, dry_run=True, applied=False,
                        next="Nothing was changed. Run again with {arg:confirm=true} to forget permanently.")
        moment = now or timeutil.now()
        if not pending:
            storage.append_jsonl(root, paths.forgotten_path(root), _stones_for(stone, timeutil.iso(moment)))
        done = complete(root, stone, moment)
    out = dict(summary, dry_run=False, applied=True, resumed=pending,
               note="Forgotten permanently; a tombstone keeps only ids and hashes.")
    if done["snapshots_not_verified"]:
        out.setdefault("not_reached", []).extend(
            f"{s} (fails verification, so it was not rewritten: check it with {{cmd:backup_archive}}, or delete it)"
            for s in done["snapshots_not_verified"])
    return out


def _mirror(root):
    try:
        return storage.read_json(paths.backup_state_path(root)).get("mirror")
    except (OSError, ValueError, AttributeError):
        return None
