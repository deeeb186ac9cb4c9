"""Importing conversation history: every message becomes a verbatim capture.

Each message keeps its speaker, its role (the archive owner's side or the other
party's), its source reference and its event time (`occurred_at`) apart from
the time it was saved (`captured_at`). A message's capture id comes from what
it is, never from the file's name: the format's own message id where it has one,
and for plain transcripts the speaker, date and words (with a count for repeats).
So re-importing the same file, a renamed copy or a longer later export adds only
what is new, and never brings back a message that was forgotten (its id is
tombstoned, and a tombstone's hash of the words is checked too).

A message that gives a password, PIN or key (credentials.py) is left out and listed
under `skipped`: credentials are never saved.

Imported captures enter the ledger as pending and are closed at once as
no-derivation-needed: history is kept verbatim for recall and derived on demand.
An import killed part-way (or stopped by a full disk) is completed by running
the same import again: files it wrote but did not register are taken up.

A large import uses both of a laptop's cores: a helper process reads each next
batch's words and times while this one indexes the batch before (retrieval/ahead.py),
and where making a file is slow a thread makes the capture files ahead (_Writes).
Neither changes what is stored or indexed.
"""

import collections
import os
import queue
import threading
import time
from pathlib import Path

from . import archive, config, credentials, importers, paths, storage, timeutil
from .archive_index import CAPTURE_SHA, open_index, rows_in
from .capture import capture_payload, captured_event
from .errors import PuError
from .retrieval import ahead
from .tiers import check_capacity
from .textinput import sha256_hex

REASON = "imported history ({fmt}); kept verbatim for recall, derived on demand"
BATCH = 500
CREDENTIAL_SKIPPED = "gives a password, PIN or key (credentials are never saved)"


def closed_event(capture_id, fmt, stamp):
    """The ledger line that closes an imported capture."""
    return {"event": "finalized", "capture_id": capture_id, "disposition": "no-derivation-needed",
            "reason": REASON.format(fmt=fmt), "record_ids": [], "at": stamp}


def _identities(fmt, file, messages):
    """(message, identity, source_ref) per message. Identity decides the capture id; source_ref points into the file."""
    out, seen = [], {}
    for msg in messages:
        if fmt not in ("text", "whatsapp"):  # no message ids: a line is known by who said what, when
            out.append((msg, msg.ref, msg.ref))
            continue
        digest = sha256_hex("\x00".join((msg.speaker, _instant(msg.occurred_at), msg.text)).encode("utf-8"))[:24]
        seen[digest] = seen.get(digest, 0) + 1
        out.append((msg, f"text:{digest}:{seen[digest]}", f"{os.path.basename(file)}:{msg.ref}"))
    return out


def _instant(occurred_at):
    """The moment in UTC: a line keeps its identity whichever offset spells its time."""
    if not occurred_at or "T" not in occurred_at:
        return occurred_at or ""
    return timeutil.iso(timeutil.parse_instant(occurred_at))


def _known(index, sql, keys, args=()):
    """Rows of `sql` (ending in `IN`) over `keys`, in the order the captures were registered (per chunk)."""
    return rows_in(index.db, sql + " ({marks}) ORDER BY rowid", sorted(set(keys)), args)


def _leftovers(root, wanted):
    """{capture_id: relpath} of the `wanted` captures whose file is on disk: a killed run wrote them unregistered.

    Only names are listed (no file is opened or stat'ed): cheap at any archive size.
    """
    out = {}
    if not wanted:
        return out
    files = {cid + ".json": cid for cid in wanted}
    base = paths.conversation_dir(root)
    for year in sorted(os.listdir(base)) if base.is_dir() else ():
        for month in sorted(os.listdir(base / year)) if (base / year).is_dir() else ():
            names = os.listdir(base / year / month) if (base / year / month).is_dir() else ()
            for name in files.keys() & names:  # (a set operation: 100 000 names in a few ms)
                out[files[name]] = f"sources/conversation/{year}/{month}/{name}"
    return out


def import_history(root, format, file, user_speaker=None, sample_ids=None, skip_invalid=False, date_order=None,
                   now=None):
    archive.require(root)
    settings = config.load(root)
    messages, invalid = importers.parse_report(format, file, user_speaker=user_speaker, sample_ids=sample_ids,
                                               skip_invalid=skip_invalid, max_bytes=settings["max_import_bytes"],
                                               date_order=date_order)
    notices = [m for m in messages if m.meta.get(importers.NOTICE)]
    messages = [m for m in messages if not m.meta.get(importers.NOTICE)]
    limit = settings["max_message_bytes"]
    moment = now or timeutil.now()
    stamp = timeutil.iso(moment)
    source = f"import:{format}"
    mapping, skipped = {}, []
    imported = present = resumed = 0
    with storage.archive_lock(root, "import_history"):
        index = open_index(root)
        forgotten_words = {r[0] for r in index.db.execute(
            "SELECT json_extract(data, '$.sha256') FROM tombstones WHERE json_extract(data, '$.source') LIKE 'import:%'")}
        items = []
        for msg, identity, ref in _identities(format, file, messages):
            data = msg.text.encode("utf-8")
            capture_id = "imp-" + sha256_hex((source + "\n" + identity).encode("utf-8"))[:20]  # same message, same id
            items.append((msg, ref, capture_id, data, sha256_hex(data)))
        # What the archive already holds of these messages, asked in bulk.
        stones = {r[0] for r in index.db.execute("SELECT id FROM tombstones")}
        known = dict(_known(index, f"SELECT capture_id, {CAPTURE_SHA} FROM captures WHERE capture_id IN", [i[2] for i in items]))
        by_ref = {}
        for ref, cid, sha in _known(index, f"SELECT source_ref, capture_id, {CAPTURE_SHA} FROM captures WHERE source=? AND "
                                           "source_ref IN", [i[1] for i in items], (source,)):
            by_ref.setdefault(ref, (cid, sha))
        fresh = []
        for msg, ref, capture_id, data, digest in items:
            existing = capture_id if capture_id in known else (by_ref.get(ref) or (None,))[0]
            if existing and existing != capture_id and by_ref[ref][1] != digest:
                existing = None  # an older import of another file by the same name: different words
            if capture_id in stones or (existing and existing in stones) or digest in forgotten_words:
                skipped.append({"ref": msg.ref, "why": "forgotten on request; a tombstone keeps it from coming back"})
                continue
            if existing:
                mapping[msg.ref] = existing
                present += 1
                continue
            if not msg.text.strip():
                skipped.append({"ref": msg.ref, "why": "empty text"})
                continue
            if limit and len(data) > limit:
                skipped.append({"ref": msg.ref, "why": f"over max_message_bytes ({len(data)} > {limit})"})
                continue
            if credentials.find(msg.text):
                skipped.append({"ref": msg.ref, "why": CREDENTIAL_SKIPPED})
                continue
            fresh.append((msg, ref, capture_id, data, digest))
        leftovers = _leftovers(root, {f[2] for f in fresh})
        planned, taken_up = [], []
        for msg, ref, capture_id, data, digest in fresh:
            if capture_id in leftovers:
                taken_up.append((msg.ref, capture_id, leftovers[capture_id]))
                continue
            doc = {"format": 1, "capture_id": capture_id, "kind": "text", "speaker": msg.speaker, "role": msg.role,
                   "text": msg.text, "utf8_sha256": digest, "bytes": len(data), "chars": len(msg.text),
                   "captured_at": stamp, "occurred_at": msg.occurred_at, "session_id": msg.session_id,
                   "turn_id": None, "source": source, "source_ref": ref, "meta": msg.meta or {}}
            planned.append((msg.ref, doc, paths.capture_relpath(capture_id, stamp), capture_payload(doc)))
        check_capacity(root, sum(len(p[3]) for p in planned))  # the whole import fits, or nothing is written
        events = []
        for ref, capture_id, relpath in taken_up:
            from .capture import read_capture

            doc = read_capture(root, relpath)
            if doc.get("capture_id") != capture_id or sha256_hex(str(doc.get("text")).encode("utf-8")) != doc.get("utf8_sha256"):
                skipped.append({"ref": ref, "why": f"{relpath} is on disk but does not match its id; "
                                                   "run {cmd:validate_memory}"})
                continue
            events += [captured_event(doc, relpath, at=stamp), closed_event(capture_id, format, stamp)]
            mapping[ref] = capture_id
            resumed += 1
        written, docs = [], {}

        def made(ref, doc, relpath, target):
            written.append(target)
            docs[doc["capture_id"]] = doc
            events.extend((captured_event(doc, relpath), closed_event(doc["capture_id"], format, stamp)))
            mapping[ref] = doc["capture_id"]

        writes = _Writes(root, planned)
        from .retrieval.index import capture_day

        readings = ahead.Readings([(doc["capture_id"], doc["text"], capture_day(doc)) for _ref, doc, _rel, _data in planned])
        try:
            for item in writes:
                made(*item)
                imported += 1
                if len(events) >= 2 * BATCH:
                    _register(root, written, events, docs, readings)
                    written, events, docs = [], [], {}
        finally:
            # Register what was written even when a later write fails: no capture file is left unregistered.
            try:
                for item in writes.close():
                    made(*item)
                    imported += 1
                if events:
                    _register(root, written, events, docs, readings)
            finally:
                readings.close()
    for m in notices:  # the app's own lines (whatsapp, telegram): said to be left out, never captured
        skipped.append({"ref": m.ref, "why": f"a line the app wrote ({m.text.replace(chr(0x200e), '')[:40]}), "
                                             "not anyone's message"})
    out = {"format": format, "file": str(file), "messages": len(messages), "imported": imported + resumed,
           "already_present": present, "skipped": skipped, "mapping": mapping}
    if resumed:
        out["resumed"] = resumed  # files an interrupted run of this import had written
    if skip_invalid:
        out["invalid"] = invalid
        if invalid:
            out["note"] = (f"{len(invalid)} invalid line(s) were left out and are listed under invalid; "
                           "everything else was imported.")
    return out


class _Writes:
    """Makes an import's capture files in order; iterating gives (ref, doc, relpath, path) of each one made.

    Files are made here and timed, PROBE at a time. Once making one takes SLOW_FILE or more (a
    busy or synced disk, a virus scanner looking at every new file), the rest are made by a thread
    of their own, up to 2 * BATCH files ahead: the kernel's part of making them goes on beside the
    indexing of the batch before. (Where files are quick to make, that thread would cost more than
    it saves: it contends for the interpreter with the indexing.) A write error is raised after
    every file made before it was given. close() stops the thread and returns the files it made
    that were not given yet: they are registered all the same.
    """

    PROBE = 64
    SLOW_FILE = 100e-6  # seconds (the median of PROBE files)
    HANDED = 25  # files handed over at a time: each hand-over costs both threads a lock
    threaded = None  # True or False decides instead of the timing (tests)

    def __init__(self, root, planned):
        self._root, self._planned = root, planned
        self._run = self._files()
        self._given = collections.deque()  # made by the thread, not given yet
        self._made = queue.Queue(maxsize=2 * BATCH // self.HANDED)
        self._stop = threading.Event()
        self._thread = None

    def _make(self, item, folders):
        ref, doc, relpath, payload = item
        target = Path(self._root, relpath)  # a path this import built; write_once refuses any link on the way
        # made durable (storage.flush) before the ledger names it
        storage.write_once(self._root, target, payload, sync=False, folders=folders)
        return ref, doc, relpath, target

    def __iter__(self):
        return self._run

    def _files(self):
        took, rest = [], []
        with storage.Folders() as folders:
            for n, item in enumerate(self._planned):
                if n and n % self.PROBE == 0 and (self.threaded if self.threaded is not None else
                                                  sorted(took)[len(took) // 2] >= self.SLOW_FILE):
                    rest = self._planned[n:]
                    break
                if n % self.PROBE == 0:
                    took = []
                started = time.perf_counter()
                made = self._make(item, folders)
                took.append(time.perf_counter() - started)
                yield made
        if not rest:
            return
        self._thread = threading.Thread(target=self._write, args=(rest,), name="import-writer", daemon=True)
        self._thread.start()
        while True:
            while self._given:
                yield self._given.popleft()
            handed = self._made.get()
            if isinstance(handed, _Ended):
                self._made.put(handed)  # close() finds it too
                if handed.error is not None:
                    raise handed.error
                return
            self._given.extend(handed)

    def _write(self, planned):
        end, made = None, []
        try:
            with storage.Folders() as folders:
                for item in planned:
                    if self._stop.is_set():
                        break
                    made.append(self._make(item, folders))
                    if len(made) >= self.HANDED:
                        self._made.put(made)
                        made = []
        except BaseException as exc:  # noqa: BLE001  (raised in the caller's thread)
            end = exc
        if made:
            self._made.put(made)
        self._made.put(_Ended(end))

    def close(self):
        self._run.close()  # (made here: its folders are closed)
        if self._thread is None:
            return []
        self._stop.set()
        left = list(self._given)
        while True:
            handed = self._made.get()  # the thread ends after at most one more file
            if isinstance(handed, _Ended):
                break
            left += handed
        self._thread.join()
        return left


class _Ended:
    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def _register(root, written, events, docs=None, readings=None):
    """Flush a batch of capture files, append their ledger lines (the commit point), then bring the
    indexes up to them: the first read after an import finds it indexed, not one it must build.

    `docs` are the documents just written (the recall index then need not read them back), and
    `readings` (an ahead.Readings) has what indexing them reads from their texts worked out ahead.
    """
    storage.flush(written)
    storage.append_jsonl(root, paths.ledger_events_path(root), events)
    from .retrieval.index import open_recall

    try:
        recall = open_recall(root, docs, readings.take(docs) if readings is not None and docs else None)
        if readings is not None:
            readings.learned(recall.lexicon().extra)  # the next chunk is read with the words learned meanwhile
    except PuError as exc:
        if exc.code not in ("WRITE_DENIED", "DISK_FULL", "INDEX_BUSY", "INDEX_BUILDING"):
            raise  # (a full or read-only disk, or another process building: the next read builds what is missing)
