"""Importing conversation history: every message becomes a verbatim capture.

Each message keeps its speaker, its role (the archive owner's side or the other
party's), its source reference and its event time (`occurred_at`) apart from
the time it was saved (`captured_at`). Re-importing the same file adds nothing.
Imported captures enter the ledger as pending and are closed at once as
no-derivation-needed: history is kept verbatim for recall and derived on demand.
"""

import os

from . import archive, config, importers, paths, storage, timeutil
from .archive_index import open_index
from .capture import capture_payload, captured_event
from .tiers import check_capacity
from .textinput import sha256_hex

REASON = "imported history ({fmt}); kept verbatim for recall, derived on demand"
BATCH = 500


def _source_ref(fmt, path, ref):
    # Text transcripts number their lines; other formats carry ids that are unique on their own.
    return f"{os.path.basename(path)}:{ref}" if fmt == "text" else ref


def import_history(root, format, file, user_speaker=None, sample_ids=None, now=None):
    archive.require(root)
    settings = config.load(root)
    messages = importers.parse(format, file, user_speaker=user_speaker, sample_ids=sample_ids,
                               max_bytes=settings["max_import_bytes"])
    limit = settings["max_message_bytes"]
    moment = now or timeutil.now()
    stamp = timeutil.iso(moment)
    source = f"import:{format}"
    mapping, skipped = {}, []
    imported = present = 0
    with storage.archive_lock(root, "import_history"):
        index = open_index(root)
        planned = []
        for msg in messages:
            ref = _source_ref(format, file, msg.ref)
            existing = index.capture_by_source_ref(source, ref)
            if existing and (index.capture(existing) or {}).get("status") == "forgotten":
                skipped.append({"ref": msg.ref, "why": "forgotten on request; a tombstone keeps it from coming back"})
                continue
            if existing:
                mapping[msg.ref] = existing
                present += 1
                continue
            data = msg.text.encode("utf-8")
            capture_id = "imp-" + sha256_hex((source + "\n" + ref).encode("utf-8"))[:20]  # same message, same id
            if index.tombstoned(capture_id):
                skipped.append({"ref": msg.ref, "why": "forgotten on request"})
                continue
            if not msg.text.strip():
                skipped.append({"ref": msg.ref, "why": "empty text"})
                continue
            if limit and len(data) > limit:
                skipped.append({"ref": msg.ref, "why": f"over max_message_bytes ({len(data)} > {limit})"})
                continue
            doc = {"format": 1, "capture_id": capture_id, "kind": "text", "speaker": msg.speaker, "role": msg.role,
                   "text": msg.text, "utf8_sha256": sha256_hex(data), "bytes": len(data), "chars": len(msg.text),
                   "captured_at": stamp, "occurred_at": msg.occurred_at, "session_id": msg.session_id,
                   "turn_id": None, "source": source, "source_ref": ref, "meta": msg.meta or {}}
            planned.append((msg.ref, doc, paths.capture_relpath(capture_id, stamp), capture_payload(doc)))
        check_capacity(root, sum(len(p[3]) for p in planned))  # the whole import fits, or nothing is written
        events = []
        try:
            for ref, doc, relpath, payload in planned:
                storage.write_once(root, paths.inside_root(root, relpath), payload)
                events.append(captured_event(doc, relpath))
                events.append({"event": "finalized", "capture_id": doc["capture_id"], "disposition": "no-derivation-needed",
                               "reason": REASON.format(fmt=format), "record_ids": [], "at": stamp})
                mapping[ref] = doc["capture_id"]
                imported += 1
                if len(events) >= 2 * BATCH:
                    storage.append_jsonl(root, paths.ledger_events_path(root), events)
                    events = []
        finally:
            # Register what was written even when a later write fails: no capture file is left unregistered.
            if events:
                storage.append_jsonl(root, paths.ledger_events_path(root), events)
    return {"format": format, "file": str(file), "messages": len(messages), "imported": imported,
            "already_present": present, "skipped": skipped, "mapping": mapping}
