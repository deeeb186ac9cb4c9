"""The derived index: a SQLite file under memory/v2/views that follows the logs.

The JSONL logs and capture files are the truth. This index is a projection of
them that answers point questions (a turn's receipt, a capture's ledger state,
the pending set, a record's latest version) without reading the archive.

It is caught up from per-log watermarks: each log's consumed byte offset, file
identity and the CRC-32 of the bytes consumed. A log that grew is read from its
watermark; a log that shrank or was replaced by other bytes (forget, restore)
makes the whole index rebuild from scratch. Another file that begins with the
same bytes (the archive copied to another disk) is read on from the watermark.
Readers and writers both call `refresh()`; nothing else writes the index, so a
crash between a log append and an index update only leaves work for the next
refresh. Deleting the file loses nothing.

Receipts and records are not copied in: a row holds where its line is in its
log (byte offset and size) and the few fields that queries filter on; the line
itself is read from the log when asked for, and checked to be the one indexed.
"""

import binascii
import errno
import json
import os
import sqlite3
import threading
import time
from pathlib import Path

from . import paths, schema, storage
from .errors import Problem, PuError
from .schema import cited_captures, normalized
from .textinput import sha256_digest

SCHEMA_VERSION = 18
WAL_PAGES = 256  # the write-ahead log is checkpointed at this many pages (SQLite's default is 1 000) ...
WAL_LIMIT = WAL_PAGES * 4096  # ... and cut back to this size then: the log left behind stays about 1 MB
READ_ATTEMPTS = 3  # reads of a log replaced under the index (each attempt catches up first)
CACHE_KB = 32 << 10  # SQLite's page cache per connection (its default, 2 MB, thrashes on a large archive)
# A process that answers one read and ends reads most pages once, and every page the cache grows by is
# new memory, a page fault each (2.4 us here): such a process keeps SQLite's default (a CLI read at
# 100 000: 2 800 faults against 6 600, 49 against 55 ms). See one_read_process.
ONE_READ_CACHE_KB = 2000
_cache_kb = CACHE_KB
BUSY_SECONDS = 30  # how long a connection waits for another one's write before it gives up with INDEX_BUSY

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS logs (
    name TEXT PRIMARY KEY, ino INTEGER, consumed INTEGER, lines INTEGER,
    size_seen INTEGER, tail_bytes INTEGER, crc INTEGER);
CREATE TABLE IF NOT EXISTS problems (
    log TEXT, line INTEGER, severity TEXT, code TEXT, message TEXT);
CREATE TABLE IF NOT EXISTS receipts (
    turn_id TEXT PRIMARY KEY, line INTEGER, at INTEGER, size INTEGER, redacted INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turn_captures (
    turn_id TEXT, capture_id TEXT, line INTEGER, PRIMARY KEY (turn_id, capture_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS captures (
    capture_id TEXT PRIMARY KEY, path TEXT, sha256 TEXT, turn_id TEXT, session_id TEXT,
    captured_at TEXT, occurred_at TEXT, chars INTEGER, kind TEXT, speaker TEXT,
    source TEXT, source_ref TEXT, status TEXT, reason TEXT, finalized_at TEXT,
    line INTEGER, extra TEXT);
CREATE INDEX IF NOT EXISTS captures_status ON captures(status);
CREATE INDEX IF NOT EXISTS captures_turn ON captures(turn_id);
CREATE INDEX IF NOT EXISTS captures_ref ON captures(source, source_ref) WHERE source_ref IS NOT NULL;
CREATE INDEX IF NOT EXISTS captures_session ON captures(session_id, line);
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY, kind TEXT, version INTEGER, status TEXT, log TEXT, line INTEGER, at INTEGER, size INTEGER,
    date_start TEXT, title_hash INTEGER, subject_key TEXT, updated_at TEXT, review_capture TEXT, withheld TEXT, data TEXT);
CREATE INDEX IF NOT EXISTS records_kind ON records(kind, status);
CREATE INDEX IF NOT EXISTS records_title ON records(kind, title_hash);
CREATE INDEX IF NOT EXISTS records_subject ON records(kind, subject_key) WHERE subject_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_date ON records(date_start, id);
CREATE INDEX IF NOT EXISTS records_uncertain ON records(status) WHERE status = 'uncertain';
CREATE TABLE IF NOT EXISTS refs (
    record INTEGER, rel TEXT, target TEXT, PRIMARY KEY (record, rel, target)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS refs_target ON refs(target, rel);
CREATE VIEW IF NOT EXISTS record_refs AS
    SELECT r.id AS record_id, f.rel AS rel, f.target AS target FROM refs f JOIN records r ON r.rowid = f.record;
CREATE TABLE IF NOT EXISTS followups (
    id TEXT PRIMARY KEY, version INTEGER, status TEXT, due_at TEXT, line INTEGER, data TEXT);
CREATE TABLE IF NOT EXISTS tombstones (
    id TEXT PRIMARY KEY, kind TEXT, line INTEGER, data TEXT);
CREATE INDEX IF NOT EXISTS tombstones_turn ON tombstones(json_extract(data, '$.turn_id'));
CREATE INDEX IF NOT EXISTS followups_capture ON followups(json_extract(data, '$.capture_id'));
CREATE INDEX IF NOT EXISTS followups_answer ON followups(json_extract(data, '$.resolution.capture_id'));
CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT);
"""

# Tables whose rowids number the recall index's documents, with their id columns.
_NUMBERED = (("captures", "capture_id"), ("records", "id"))
_TABLES = ("problems", "receipts", "turn_captures", "captures", "records", "refs", "followups", "tombstones",
           "changes")

_local = threading.local()


def _log_files(root):
    """Every log the index follows, as (name, path)."""
    v2 = paths.v2_dir(root)
    logs = [(name, v2 / name) for name in ("receipts.jsonl", "ledger.jsonl", "followups.jsonl", "forgotten.jsonl")]
    rdir = paths.records_dir(root)
    try:
        names = sorted(n for n in os.listdir(rdir) if n.endswith(".jsonl"))
    except FileNotFoundError:
        names = []
    logs.extend((f"records/{n}", rdir / n) for n in names)
    return logs


def _begins_as_read(path, row):
    """Does the file at `path` begin with the very bytes the index read from its log (`row`: the log's
    row in `logs`)? Told by their CRC-32, which the index keeps as it reads: a copy of an archive has
    new files, but the same bytes in them. (Read whole, as a rebuild would read it.)"""
    consumed, crc = row[2], row[6]
    try:
        data = storage.read_from(path)
    except OSError:
        return False
    return data is not None and len(data) >= consumed and binascii.crc32(memoryview(data)[:consumed]) == crc


class ArchiveIndex:
    """One connection per root per thread; use `open_index(root)`.

    memory=True keeps the index in memory: the fallback when views/ cannot be
    written (a read-only copy, a full disk), so reads still work.
    """

    def __init__(self, root, memory=False):
        self.root = Path(root)
        self.path = paths.index_db_path(root)
        self.in_memory = memory
        self.db = None
        self._logs = {}  # log name -> (inode the index read, a descriptor open on that file)
        self._connect()

    # --- connection --------------------------------------------------------
    def _open(self):
        db = connect(self.root, None if self.in_memory else self.path)
        db.executescript(_DDL)
        return db

    def _connect(self):
        self.inode = None
        try:
            self.db = self._open()
            row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif row[0] != str(SCHEMA_VERSION):
                raise sqlite3.DatabaseError("schema version changed")
        except sqlite3.DatabaseError as exc:
            refusal = disk_refusal(exc, self.path) or busy_refusal(exc)
            if refusal is not None:
                self.close()
                raise refusal from None
            self._discard()  # unreadable or an older layout: it is derived, start again
            self.db = self._open()
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        if not self.in_memory:
            self.inode = os.stat(self.path).st_ino

    def replaced(self):
        """True when the file on disk is no longer the one this connection has open."""
        if self.in_memory:
            return False
        try:
            return os.stat(self.path).st_ino != self.inode
        except FileNotFoundError:
            return True

    def _discard(self):
        if self.db is not None:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
            self.db = None
        if self.in_memory:
            return
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def close(self):
        self._drop_logs()
        if self.db is not None:
            self.db.close()
            self.db = None

    # --- lines read back from the logs ----------------------------------------
    def _drop_logs(self):
        for _ino, fd in self._logs.values():
            os.close(fd)
        self._logs = {}

    def _follow_logs(self, known):
        """Keep descriptors only on the files the index has read (a log replaced since is opened anew)."""
        for name, (ino, fd) in list(self._logs.items()):
            row = known.get(name)
            if row is None or row[1] != ino:
                os.close(fd)
                del self._logs[name]

    def _line(self, name, at, size):
        """The bytes of the line at `at` in log `name`, from the very file the index read."""
        entry = self._logs.get(name)
        if entry is None:
            row = self.db.execute("SELECT ino FROM logs WHERE name=?", (name,)).fetchone()
            path = paths.v2_dir(self.root) / name
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
            except OSError:
                raise _Moved(name) from None
            if row is None or os.fstat(fd).st_ino != row[0]:
                os.close(fd)
                raise _Moved(name)
            entry = self._logs[name] = (row[0], fd)
        fd = entry[1]
        if hasattr(os, "pread"):
            data = os.pread(fd, size, at)
        else:  # Windows
            os.lseek(fd, at, os.SEEK_SET)
            data = os.read(fd, size)
        end = data.find(b"\n")
        return data[:end] if end >= 0 else data

    def _read(self, name, at, size, check):
        """The JSON object at a place in a log; `check(obj)` says it is the one indexed there.

        None when the log was replaced after the index read it (forget, restore): the index has
        then caught up, and the caller asks it again.
        """
        try:
            obj = json.loads(self._line(name, at, size))
            if isinstance(obj, dict) and check(obj):
                return obj
        except (_Moved, ValueError):
            pass
        self._drop_logs()
        if self.db.in_transaction:
            # Inside a write that reads the index as it was (the recall index catching up): a replaced
            # log rebuilds the index, and everything derived from it, on the next refresh.
            return None
        if self.refresh():
            return None
        raise PuError("INDEX_STALE", f"memory/v2/{name} does not hold the line the index points at",
                      "The derived index is out of step with the logs: run {cmd:rebuild_views}, then retry.")

    # --- catching up -------------------------------------------------------
    def _stale_logs(self, logs):
        known = {row[0]: row for row in self.db.execute(
            "SELECT name, ino, consumed, lines, size_seen, tail_bytes, crc FROM logs")}
        stale = []
        for name, path in logs:
            try:
                st = os.stat(path)
            except FileNotFoundError:
                if name in known and known[name][2]:
                    stale.append((name, path, None))
                continue
            row = known.get(name)
            if row is None or row[1] != st.st_ino or row[4] != st.st_size:
                stale.append((name, path, st))
        return stale, known

    def refresh(self):
        """Bring the index up to date with the logs. Cheap when nothing changed."""
        logs = _log_files(self.root)
        stale, known = self._stale_logs(logs)
        self._follow_logs(known)
        if not stale:
            return False
        self.db.execute("BEGIN IMMEDIATE")
        try:
            stale, known = self._stale_logs(logs)  # another process may have caught up meanwhile
            rebuild = False
            for name, path, st in stale:
                row = known.get(name)
                if row is not None and st is not None and row[1] != st.st_ino and _begins_as_read(path, row):
                    # The same bytes in another file (the archive was copied, or moved to another disk):
                    # the index goes on from where it was rather than rebuilding everything.
                    known[name] = row = (name, st.st_ino) + tuple(row[2:])
                if row is not None and (st is None or row[1] != st.st_ino or st.st_size < row[2]):
                    rebuild = True
                    break
            if rebuild:
                floors = {table: self.db.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {table}").fetchone()[0]
                          for table, _column in _NUMBERED}
                for table in _TABLES + ("logs",):
                    self.db.execute(f"DELETE FROM {table}")
                # Rows come back numbered above the old ones: the recall index numbers its documents by
                # them, and a reader still on the old numbers must find nothing, never another row.
                for table, column in _NUMBERED:
                    self.db.execute(f"INSERT INTO {table} (rowid, {column}) VALUES (?, '')", (floors[table],))
                known = {}
                stale = [(n, p, os.stat(p)) for n, p in logs if p.exists()]
            if not known:
                # Built from nothing: a new generation, which derived indexes rebuild from in full, so the
                # change log would list every line only to be dropped (megabytes of free pages at 100 000).
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (str(self.generation() + 1),))
                self.db.execute("CREATE TEMP TRIGGER IF NOT EXISTS from_nothing BEFORE INSERT ON changes"
                                " BEGIN SELECT RAISE(IGNORE); END")
            # Receipts and the ledger first: records refer to captures.
            for name, path, st in stale:
                row = known.get(name)
                start, first_line, crc = (row[2], row[3] + 1, row[6]) if row else (0, 1, 0)
                self._consume(name, path, st, start, first_line, crc)
            self.db.execute("DROP TRIGGER IF EXISTS temp.from_nothing")
            for table, column in _NUMBERED if rebuild else ():
                self.db.execute(f"DELETE FROM {table} WHERE {column} = ''")  # the placeholders above
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            self.db.execute("DROP TRIGGER IF EXISTS temp.from_nothing")
            raise
        self._follow_logs({r[0]: r for r in self.db.execute("SELECT name, ino FROM logs")})
        return True

    def _consume(self, name, path, st, start, first_line, crc):
        """Index a log's lines from byte `start` on; `crc` is the CRC-32 of the bytes before it."""
        display = f"memory/v2/{name}"
        data = storage.read_from(path, start) or b""
        entries, problems, end, next_line = storage.parse_jsonl(data, start, first_line, display)
        crc = binascii.crc32(memoryview(data)[:end - start], crc)
        apply = _handler_for(name)
        for n, (line_no, offset, obj) in enumerate(entries):
            size = (entries[n + 1][1] if n + 1 < len(entries) else end) - offset
            for problem in apply(self.db, name, line_no, obj, offset, size) or ():
                problems.append(problem)
        tail = 0
        for problem in problems:
            if problem.code == "JSONL_INCOMPLETE_TAIL":
                tail = max(0, st.st_size - end)
                continue
            self.db.execute("INSERT INTO problems VALUES (?,?,?,?,?)",
                            (display, problem.line, problem.severity, problem.code, problem.message))
        self.db.execute(
            "INSERT OR REPLACE INTO logs VALUES (?,?,?,?,?,?,?)",
            (name, st.st_ino, end, next_line - 1, max(st.st_size, end), tail, crc),
        )

    # --- queries -----------------------------------------------------------
    def _gave_up(self, what):
        """A log was replaced under every attempt to read it (a forget or restore running now)."""
        if self.db.in_transaction:
            return  # a write reading the index as it was: the next refresh rebuilds what it derived
        raise PuError("ARCHIVE_BUSY", f"{what} changed on disk {READ_ATTEMPTS} times while being read",
                      "Another process is rewriting the archive (a forget or a restore); retry in a moment. "
                      "Nothing was changed.")

    def receipt(self, turn_id):
        for _attempt in range(READ_ATTEMPTS):
            row = self.db.execute("SELECT at, size, redacted FROM receipts WHERE turn_id=?", (turn_id,)).fetchone()
            if row is None:
                return None
            obj = self._read("receipts.jsonl", row[0], row[1],
                             lambda o: o.get("type") == "receipt" and o.get("turn_id") == turn_id)
            if obj is not None:
                if row[2]:
                    from . import redact

                    obj = redact.receipt(obj)
                return obj
        self._gave_up("the receipts log")
        return None

    def capture(self, capture_id):
        row = self.db.execute(f"SELECT {_CAPTURE_COLUMNS}, extra, status, reason, finalized_at FROM captures "
                              "WHERE capture_id=?", (capture_id,)).fetchone()
        if not row:
            return None
        return captured_row(row)

    def turn_capture_ids(self, turn_id):
        return [r[0] for r in self.db.execute(
            "SELECT capture_id FROM captures WHERE turn_id=? ORDER BY captured_at, capture_id", (turn_id,))]

    def pending_capture_ids(self):
        return [r[0] for r in self.db.execute(
            "SELECT capture_id FROM captures WHERE status='pending' ORDER BY captured_at, capture_id")]

    def waiting_turns(self, turn_id=None, shown=5):
        """The turns, other than this one, whose saved words are still pending (their remember call was left
        out), oldest first: the first `shown` named, then "…" for more."""
        turns = [t for t in dict.fromkeys(r[0] for r in self.db.execute(
            "SELECT turn_id FROM captures WHERE status='pending' AND turn_id IS NOT NULL ORDER BY captured_at, capture_id"))
            if t != turn_id]
        return turns[:shown] + (["…"] if len(turns) > shown else [])

    def neighbours_in_session(self, capture_ids):
        """{capture_id: (the capture said just before it, the one just after)} in its session, either None
        at a session's end; forgotten captures are passed over. Ids without a session are left out."""
        return {row[0]: (row[1], row[2]) for row in rows_in(
            self.db, "SELECT c.capture_id,"
            " (SELECT p.capture_id FROM captures p WHERE p.session_id = c.session_id AND p.line < c.line"
            "  AND p.status != 'forgotten' ORDER BY p.line DESC LIMIT 1),"
            " (SELECT n.capture_id FROM captures n WHERE n.session_id = c.session_id AND n.line > c.line"
            "  AND n.status != 'forgotten' ORDER BY n.line LIMIT 1)"
            " FROM captures c WHERE c.capture_id IN ({marks}) AND c.session_id IS NOT NULL", sorted(capture_ids))}

    def session_mates(self, capture_ids, limit=200):
        """{capture_id: [the other captures of its session, nearest first]}, forgotten ones passed over, at most
        `limit` each. Ids without a session are left out."""
        out = {}
        for cid, session, line in rows_in(self.db, "SELECT capture_id, session_id, line FROM captures"
                                          " WHERE capture_id IN ({marks}) AND session_id IS NOT NULL", sorted(capture_ids)):
            out[cid] = [r[0] for r in self.db.execute(
                "SELECT capture_id FROM captures WHERE session_id=? AND capture_id != ? AND status != 'forgotten'"
                " ORDER BY abs(line - ?), line LIMIT ?", (session, cid, line, limit))]
        return out

    def capture_by_source_ref(self, source, source_ref):
        row = self.db.execute("SELECT capture_id FROM captures WHERE source=? AND source_ref=?", (source, source_ref)).fetchone()
        return row[0] if row else None

    def records_citing(self, capture_id):
        return [r[0] for r in self.db.execute(
            "SELECT record_id FROM record_refs WHERE target=? AND rel='capture' ORDER BY record_id", (capture_id,))]

    def record(self, record_id):
        found = self.records_where("id=?", (record_id,))
        return found[0] if found else None

    def records_where(self, sql, args=()):
        """Latest versions of records matching a WHERE clause over the records table."""
        for _attempt in range(READ_ATTEMPTS):
            out = []
            for row in self.db.execute(f"SELECT {_RECORD_PLACE} FROM records WHERE {sql}", args).fetchall():
                rec = self._record_at(row)
                if rec is None:
                    break  # a log was replaced under the index, which has now caught up: ask again
                out.append(rec)
            else:
                return out
        self._gave_up("the records logs")  # never a partial list: a missing record would read as "not there"
        return out

    def _record_at(self, row):
        rid, version, name, at, size, withheld = row
        rec = self._read(name, at, size, lambda o: o.get("id") == rid and o.get("version") == version)
        if rec is None or not withheld:
            return rec
        if withheld == "forgotten":
            rec["status"] = "forgotten"
        else:  # the review that answered it cites forgotten words
            from .redact import REDACTED

            rec["review"] = dict(rec.get("review") or {}, capture_id=None, note=REDACTED)
        return rec

    def referrers(self, target, rel=None):
        """Ids of records pointing at `target` (optionally through one relation)."""
        if rel is None:
            return [r[0] for r in self.db.execute("SELECT DISTINCT record_id FROM record_refs WHERE target=?", (target,))]
        return [r[0] for r in self.db.execute("SELECT record_id FROM record_refs WHERE target=? AND rel=?", (target, rel))]

    def resolve(self, record_id, limit=20):
        """Follow entity redirects to the canonical id (a merged entity points at its survivor)."""
        seen = [record_id]
        current = record_id
        for _ in range(limit):
            row = self.db.execute("SELECT target FROM record_refs WHERE record_id=? AND rel='redirect'", (current,)).fetchone()
            if not row or row[0] in seen:
                return current
            current = row[0]
            seen.append(current)
        return current

    def tombstoned(self, item_id):
        return bool(self.db.execute("SELECT 1 FROM tombstones WHERE id=?", (item_id,)).fetchone())

    def followup(self, followup_id):
        row = self.db.execute("SELECT data FROM followups WHERE id=?", (followup_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def problems(self):
        out = [Problem(*row[2:3], row[3], row[0], row[1], row[4]) for row in
               self.db.execute("SELECT log, line, severity, code, message FROM problems ORDER BY log, line")]
        for name, tail in self.db.execute("SELECT name, tail_bytes FROM logs WHERE tail_bytes > 0"):
            out.append(Problem("warning", "JSONL_INCOMPLETE_TAIL", f"memory/v2/{name}", None,
                               f"{tail} bytes after the last complete line: a write in progress or interrupted"))
        return out

    def count(self, sql, args=()):
        return self.db.execute(sql, args).fetchone()[0]

    def generation(self):
        """Bumped whenever the index is rebuilt from scratch (derived indexes follow it)."""
        row = self.db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0]) if row else 0

    def changes_since(self, seq):
        """[(seq, key)] of records ('r:<id>'), captures ('c:<id>') and tombstones ('t:<id>') changed after seq."""
        return self.db.execute("SELECT seq, key FROM changes WHERE seq > ? ORDER BY seq", (seq,)).fetchall()


IN_LIMIT = 900  # values per IN list, under SQLite's limit on bound parameters


def rows_in(db, sql, values, before=()):
    """Rows of `sql` over `values`, asked IN_LIMIT at a time: `{marks}` in `sql` stands for their
    placeholders; `before` are parameters that come ahead of them."""
    values, rows = list(values), []
    for i in range(0, len(values), IN_LIMIT):
        chunk = values[i:i + IN_LIMIT]
        rows += db.execute(sql.replace("{marks}", ",".join("?" * len(chunk))), [*before, *chunk]).fetchall()
    return rows


def one_read_process():
    """This process answers one read-only command, then ends: the connections it opens keep a small page cache."""
    global _cache_kb
    _cache_kb = ONE_READ_CACHE_KB


def connect(root, path):
    """A connection to a derived SQLite file under views/ (None: in memory). Autocommit; BEGIN where needed.

    The file holds the words too: owner-only, and never opened through a link.
    """
    if path is None:
        db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    else:
        try:
            views = path.parent
            if os.path.lexists(views) and not views.is_dir() and not views.is_symlink():
                os.unlink(views)  # a plain file where the derived folder belongs: it held nothing of value
            storage.private_file(root, path)
            for suffix in ("-wal", "-shm"):
                if os.path.islink(str(path) + suffix):
                    raise storage.symlink_refused(paths.rel(root, path.parent) + "/" + path.name + suffix)
        except OSError as exc:
            raise storage.io_error(exc, path, "opening the index") from None
        db = sqlite3.connect(str(path), timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        _wal(db)
        db.execute(f"PRAGMA wal_autocheckpoint={WAL_PAGES}")
        db.execute(f"PRAGMA journal_size_limit={WAL_LIMIT}")  # a big catch-up leaves no big write-ahead log behind
    db.execute("PRAGMA synchronous=OFF")  # derived: a lost update is caught up again
    db.execute(f"PRAGMA cache_size=-{_cache_kb}")  # a read touches pages all over the file: keep the hot ones
    return db


# A capture's ledger line is kept as columns (the line's other keys, if any, in `extra`).
_CAPTURE_FIELDS = (("capture_id", "capture_id"), ("path", "path"), ("kind", "kind"), ("utf8_sha256", "sha256"),
                   ("turn_id", "turn_id"), ("session_id", "session_id"), ("captured_at", "captured_at"),
                   ("occurred_at", "occurred_at"), ("chars", "chars"), ("speaker", "speaker"), ("source", "source"),
                   ("source_ref", "source_ref"))
# A capture's file is kept at paths.capture_relpath(capture_id, captured_at); the column holds a
# path only where the ledger names another one (NULL saves 60 bytes a capture). Read it as this.
CAPTURE_PATH = f"COALESCE(path, {paths.CAPTURE_RELPATH_SQL})"
# A capture's SHA-256 is kept as its 32 bytes (64 as hex text): read it as this, find it by stored_sha(hex).
CAPTURE_SHA = "CASE WHEN typeof(sha256) = 'blob' THEN lower(hex(sha256)) ELSE sha256 END"
_READ_AS = {"path": CAPTURE_PATH, "sha256": CAPTURE_SHA}
_CAPTURE_COLUMNS = ", ".join(_READ_AS.get(column, column) for _key, column in _CAPTURE_FIELDS)


def stored_sha(digest):
    """The captures table's form of a SHA-256 given as hex: its bytes (anything else as it was written)."""
    if isinstance(digest, str) and len(digest) == 64:
        try:
            raw = bytes.fromhex(digest)
        except ValueError:
            return digest
        if raw.hex() == digest:  # lower-case hex only: it reads back exactly as written
            return raw
    return digest
_CAPTURE_KEYS = frozenset(key for key, _column in _CAPTURE_FIELDS) | {"event", "at"}


def captured_row(row):
    """The ledger line that registered a capture, with its status, from a row of captures."""
    n = len(_CAPTURE_FIELDS)
    data = {"event": "captured"}
    data.update((key, value) for (key, _column), value in zip(_CAPTURE_FIELDS, row))
    data["at"] = data["captured_at"]
    if row[n]:
        data.update(json.loads(row[n]))
    data.update(status=row[n + 1], reason=row[n + 2], finalized_at=row[n + 3])
    return data


class _Moved(Exception):
    """A log is not the file the index read."""


# A record's log is left NULL when it is the usual one for its kind: read it as this.
RECORD_LOG = "COALESCE(log, 'records/' || kind || '.jsonl')"
_RECORD_PLACE = f"id, version, {RECORD_LOG}, at, size, withheld"
# Fields of a record that queries filter on (json_extract over the records table's data).
QUERY_FIELDS = ("salience", "sensitivity", "domain", "aspect", "fidelity", "created_at", "salience_basis", "contradicts")
# The usual values (add_record's defaults) are left out of `data` (70 bytes a record): no query asks
# for them, so a filter written against these fields reads a missing one as the usual value. So is
# created_at when it equals updated_at (a first version): read it as RECORD_CREATED.
QUERY_USUAL = dict(schema.USUAL, contradicts=[])
RECORD_CREATED = "COALESCE(json_extract(data, '$.created_at'), updated_at)"


def disk_refusal(exc, path):
    """The PuError for an SQLite failure that is the disk's (full, read-only, denied), else None."""
    number = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    text = str(exc).lower()
    if number == 13 or "disk is full" in text:  # SQLITE_FULL
        return storage.io_error(OSError(errno.ENOSPC, "disk full"), path, "updating the index")
    if number in (3, 8, 14) or "readonly" in text or "unable to open" in text:  # PERM, READONLY, CANTOPEN
        return storage.io_error(OSError(errno.EROFS, str(exc)), path, "updating the index")
    return None


def _wal(db):
    """Write-ahead logging. Switching a new file to it is refused at once, not waited for, while another
    connection is creating that file (a server's start-up and its first call): wait for it here."""
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if busy_refusal(exc) is None or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def busy_refusal(exc):
    """The PuError for an SQLite failure that is another connection's long write (busy, locked), else None."""
    number = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    text = str(exc).lower()
    if number in (5, 6) or "database is locked" in text or "database table is locked" in text:  # BUSY, LOCKED
        return PuError("INDEX_BUSY", f"the index is being written by another process for more than {BUSY_SECONDS} s",
                       "Another process (an import, or a rebuild after an update of a large archive) is writing "
                       "the index, which is derived from the archive's files: retry this call in a minute.")
    return None


def _new_index(root):
    try:
        return ArchiveIndex(root)
    except PuError as exc:
        if exc.code not in ("WRITE_DENIED", "DISK_FULL"):
            raise
        return ArchiveIndex(root, memory=True)


def open_index(root):
    """The caught-up index for `root` (cached per thread, refreshed on every call).

    When views/ cannot be written the index is built in memory instead: reads
    keep working on a read-only or full archive, and writes fail at the log
    they append to, with DISK_FULL or WRITE_DENIED.
    """
    cache = getattr(_local, "cache", None)
    if cache is None:
        cache = _local.cache = {}
    key = str(Path(root).resolve())
    index = cache.get(key)
    if index is None or index.replaced():
        if index is not None:
            index.close()
        index = cache[key] = _new_index(root)
    try:
        index.refresh()
    except sqlite3.DatabaseError as exc:
        busy = busy_refusal(exc)
        if busy is not None:  # another process is writing: the file is sound, never start it again under that writer
            raise busy from None
        index = cache[key] = in_memory(root) if disk_refusal(exc, index.path) else _rebuilt(index, root)
        index.refresh()
    return index


def _rebuilt(index, root):
    index._discard()
    return _new_index(root)


def in_memory(root):
    """Switch this thread's index for `root` to memory (the disk refused an index write)."""
    cache = getattr(_local, "cache", None)
    if cache is None:
        cache = _local.cache = {}
    key = str(Path(root).resolve())
    old = cache.pop(key, None)
    if old is not None:
        old.close()
    index = cache[key] = ArchiveIndex(root, memory=True)
    return index


def forget_cached(root=None):
    """Drop cached connections (tests, and after forget/restore rewrite logs)."""
    cache = getattr(_local, "cache", {})
    for key in list(cache):
        if root is None or key == str(Path(root).resolve()):
            cache.pop(key).close()


# --- handlers: one per log -------------------------------------------------

def _receipts_handler(db, name, line, obj, at, size):
    kind = obj.get("type")
    turn_id = obj.get("turn_id")
    display = f"memory/v2/{name}"
    if not isinstance(turn_id, str):
        return [Problem("error", "RECEIPT_INVALID", display, line, "line has no turn_id")]
    if kind == "receipt":
        db.execute("INSERT OR REPLACE INTO receipts VALUES (?,?,?,?,?)",
                   (turn_id, line, at, size, int(_turn_forgotten(db, turn_id))))
    elif kind == "capture":
        db.execute("INSERT OR REPLACE INTO turn_captures VALUES (?,?,?)", (turn_id, obj.get("capture_id"), line))
    else:
        return [Problem("error", "RECEIPT_INVALID", display, line, f"unknown line type {kind!r}")]
    return ()


def _stored_path(cid, obj):
    """The path column of a captured line: NULL where the path is the one CAPTURE_PATH reads back."""
    path, at = obj.get("path"), obj.get("captured_at")
    try:
        if isinstance(at, str) and path == paths.capture_relpath(cid, at):
            return None
    except PuError:  # not an id a capture file is named by: keep the path as written
        pass
    return path


def _ledger_handler(db, name, line, obj, _at, _size):
    event = obj.get("event")
    cid = obj.get("capture_id")
    display = f"memory/v2/{name}"
    if event == "captured":
        status = "forgotten" if _tombstoned(db, cid) else "pending"
        extra = {k: v for k, v in obj.items() if k not in _CAPTURE_KEYS}
        if obj.get("at") != obj.get("captured_at"):
            extra["at"] = obj.get("at")
        try:
            db.execute(
                "INSERT INTO captures VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (cid, _stored_path(cid, obj), stored_sha(obj.get("utf8_sha256")), obj.get("turn_id"), obj.get("session_id"),
                 obj.get("captured_at"), obj.get("occurred_at"), obj.get("chars"), obj.get("kind"), obj.get("speaker"),
                 obj.get("source"), obj.get("source_ref"), status, None, None, line,
                 json.dumps(extra, ensure_ascii=False) if extra else None),
            )
        except sqlite3.IntegrityError:  # the capture id is taken
            first = db.execute("SELECT line FROM captures WHERE capture_id=?", (cid,)).fetchone()
            return [Problem("error", "DUPLICATE_ID", display, line,
                            f"capture {cid} is registered twice (first at line {first[0] if first else '?'})")]
        db.execute("INSERT INTO changes (key) VALUES (?)", ("c:" + cid,))
        return ()
    if event == "finalized":
        done = db.execute("UPDATE captures SET status=?, reason=?, finalized_at=? WHERE capture_id=? AND status != 'forgotten'",
                          (obj.get("disposition"), obj.get("reason"), obj.get("at"), cid)).rowcount
        if not done and not db.execute("SELECT 1 FROM captures WHERE capture_id=?", (cid,)).fetchone():
            return [Problem("error", "LEDGER_UNKNOWN_CAPTURE", display, line, f"finalizes capture {cid}, which is not registered")]
        return ()
    if event == "reopened":
        db.execute("UPDATE captures SET status='pending', reason=?, finalized_at=NULL WHERE capture_id=? AND status != 'forgotten'",
                   (obj.get("reason"), cid))
        return ()
    if event == "forgotten":
        db.execute("UPDATE captures SET status='forgotten' WHERE capture_id=?", (cid,))
        db.execute("INSERT INTO changes (key) VALUES (?)", ("c:" + cid,))
        return ()
    return [Problem("error", "LEDGER_INVALID", display, line, f"unknown ledger event {event!r}")]


REF_FIELDS = ("entity_refs", "related_ids", "supports", "contradicts", "supersedes")
_REL = {"entity_refs": "entity", "related_ids": "related", "supports": "supports",
        "contradicts": "contradicts", "supersedes": "supersedes"}


def record_refs(obj):
    """(rel, target) pairs a record version points at."""
    refs = set()
    for field in REF_FIELDS:
        value = obj.get(field)
        if isinstance(value, str):
            value = [value]
        for target in value or ():
            if isinstance(target, str):
                refs.add((_REL[field], target))
    refs |= {("capture", cid) for cid in cited_captures(obj)}
    if isinstance(obj.get("redirect_to"), str):
        refs.add(("redirect", obj["redirect_to"]))
    return refs


def title_hash(title):
    """A record's normalized title as a number: duplicates are found by it without the index holding the words.
    Four bytes: a title that shares it is only a candidate, compared by its words (records.possible_duplicates)."""
    key = normalized(title if isinstance(title, str) else "")
    return int.from_bytes(sha256_digest(key.encode("utf-8"))[:4], "big", signed=True)


def _version_problem(db, table, display, line, obj):
    rid, version = obj.get("id"), obj.get("version")
    if not isinstance(rid, str) or not isinstance(version, int):
        return Problem("error", "RECORD_INVALID", display, line, "line needs a string id and an integer version")
    row = db.execute(f"SELECT version, line FROM {table} WHERE id=?", (rid,)).fetchone()
    expected = row[0] + 1 if row else 1
    if version != expected:
        if row and version <= row[0]:
            return Problem("error", "DUPLICATE_ID", display, line, f"{rid} version {version} already exists (latest {row[0]}, line {row[1]})")
        return Problem("error", "RECORD_VERSION_GAP", display, line, f"{rid} jumps to version {version}; expected {expected}")
    return None


_RECORD_UPDATE = ", ".join(f"{c} = excluded.{c}" for c in (
    "kind", "version", "status", "log", "line", "at", "size", "date_start", "title_hash", "subject_key", "updated_at",
    "review_capture", "withheld", "data"))


def _records_handler(db, name, line, obj, at, size):
    display = f"memory/v2/{name}"
    problem = _version_problem(db, "records", display, line, obj)
    if problem:
        return [problem]
    rid = obj["id"]
    review = obj.get("review") if isinstance(obj.get("review"), dict) else {}
    queried = {k: obj[k] for k in QUERY_FIELDS if obj.get(k) is not None and obj[k] != QUERY_USUAL.get(k)}
    if "created_at" in queried and queried["created_at"] == obj.get("updated_at"):
        del queried["created_at"]  # read back as updated_at (RECORD_CREATED)
    usual_log = isinstance(obj.get("kind"), str) and name == f"records/{obj['kind']}.jsonl"
    # A new version updates the row in place: the recall index numbers a record's document by its rowid.
    db.execute(f"INSERT INTO records VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET {_RECORD_UPDATE}",
               (rid, obj.get("kind"), obj["version"], obj.get("status"), None if usual_log else name, line, at, size,
                obj.get("date_start") if isinstance(obj.get("date_start"), str) else None,
                title_hash(obj.get("title")),
                obj.get("subject_key") if isinstance(obj.get("subject_key"), str) else None,
                obj.get("updated_at"), review.get("capture_id") if isinstance(review.get("capture_id"), str) else None,
                None, json.dumps(queried, ensure_ascii=False, separators=(",", ":")) if queried else None))
    # Refs name their record by its rowid (kept across versions): 20 bytes less a ref, twice over with its index.
    row = db.execute("SELECT rowid FROM records WHERE id=?", (rid,)).fetchone()[0]
    db.execute("DELETE FROM refs WHERE record=?", (row,))
    db.executemany("INSERT OR IGNORE INTO refs VALUES (?,?,?)", [(row, rel, t) for rel, t in record_refs(obj)])
    db.execute("INSERT INTO changes (key) VALUES (?)", ("r:" + rid,))
    _withhold_record(db, rid)
    return ()


def _followups_handler(db, name, line, obj, _at, _size):
    display = f"memory/v2/{name}"
    problem = _version_problem(db, "followups", display, line, obj)
    if problem:
        return [problem]
    db.execute("INSERT OR REPLACE INTO followups VALUES (?,?,?,?,?,?)",
               (obj["id"], obj["version"], obj.get("status"), obj.get("due_at"), line, json.dumps(obj, ensure_ascii=False)))
    _withhold_followup(db, obj["id"])
    return ()


def _tombstone_handler(db, name, line, obj, _at, _size):
    if not isinstance(obj.get("id"), str):
        return [Problem("error", "TOMBSTONE_INVALID", f"memory/v2/{name}", line, "tombstone without an id")]
    sid = obj["id"]
    row = db.execute("SELECT line, data FROM tombstones WHERE id=?", (sid,)).fetchone()
    data = dict(json.loads(row[1]), **obj) if row else obj  # a later line (the completion) adds to the first
    db.execute("INSERT OR REPLACE INTO tombstones VALUES (?,?,?,?)",
               (sid, data.get("kind"), row[0] if row else line, json.dumps(data, ensure_ascii=False)))
    db.execute("INSERT INTO changes (key) VALUES (?)", ("t:" + sid,))
    _withhold(db, sid, data)
    return ()


# --- withholding: a tombstone is honoured from the moment it is on disk ------------
# Forgetting writes its tombstone first and then rewrites the logs. Until the
# rewrite is done (or after a crash, until a later command finishes it), the index
# itself hides what the tombstone names: the capture reads as forgotten, records
# that cite it read as forgotten, follow-ups it raised and its turn's receipt lose
# their words. Every reader goes through the index, so none serves them.

def _tombstoned(db, item_id):
    return db.execute("SELECT 1 FROM tombstones WHERE id=?", (item_id,)).fetchone() is not None


def _turn_forgotten(db, turn_id):
    """Is the message of this turn forgotten? (An attachment of the turn is not its message.)"""
    return db.execute("SELECT 1 FROM tombstones WHERE json_extract(data, '$.turn_id')=? AND kind='capture' "
                      "AND json_extract(data, '$.capture_kind') IS NOT 'attachment' LIMIT 1", (turn_id,)).fetchone() is not None


def _withhold(db, sid, stone):
    row = db.execute("SELECT session_id, line, status FROM captures WHERE capture_id=?", (sid,)).fetchone()
    if row and row[2] != "forgotten":
        db.execute("UPDATE captures SET status='forgotten' WHERE capture_id=?", (sid,))
        db.execute("INSERT INTO changes (key) VALUES (?)", ("c:" + sid,))
        if row[0]:  # the next turn of the session was indexed with this one's words as context
            after = db.execute("SELECT capture_id FROM captures WHERE session_id=? AND line > ? ORDER BY line LIMIT 1",
                               row[:2]).fetchone()
            if after:
                db.execute("INSERT INTO changes (key) VALUES (?)", ("c:" + after[0],))
    citing = [r[0] for r in db.execute("SELECT record_id FROM record_refs WHERE target=? AND rel='capture'", (sid,))]
    for rid in [sid] + citing:
        _withhold_record(db, rid)
    for (fid,) in db.execute("SELECT id FROM followups WHERE json_extract(data, '$.capture_id')=? "
                             "OR json_extract(data, '$.resolution.capture_id')=?", (sid, sid)).fetchall():
        _withhold_followup(db, fid)
    turn = stone.get("turn_id")
    if isinstance(turn, str) and _turn_forgotten(db, turn):
        db.execute("UPDATE receipts SET redacted=1 WHERE turn_id=?", (turn,))


def _withhold_record(db, rid):
    """Hide a record that is forgotten or cites a forgotten capture (status 'forgotten' in the index only)."""
    row = db.execute("SELECT status, review_capture, withheld FROM records WHERE id=?", (rid,)).fetchone()
    if row is None or row[0] == "forgotten":
        return
    cited = db.execute("SELECT 1 FROM record_refs r JOIN tombstones t ON t.id = r.target "
                       "WHERE r.record_id=? AND r.rel='capture' LIMIT 1", (rid,)).fetchone()
    if cited or _tombstoned(db, rid):
        db.execute("UPDATE records SET status='forgotten', withheld='forgotten' WHERE id=?", (rid,))
    elif row[1] and row[2] is None and _tombstoned(db, row[1]):
        db.execute("UPDATE records SET withheld='review' WHERE id=?", (rid,))
    else:
        return
    db.execute("INSERT INTO changes (key) VALUES (?)", ("r:" + rid,))


def _withhold_followup(db, fid):
    row = db.execute("SELECT data FROM followups WHERE id=?", (fid,)).fetchone()
    item = json.loads(row[0])
    res = item.get("resolution") if isinstance(item.get("resolution"), dict) else {}
    raised = isinstance(item.get("capture_id"), str) and _tombstoned(db, item["capture_id"])
    answered = isinstance(res.get("capture_id"), str) and _tombstoned(db, res["capture_id"])
    if raised or answered:
        from . import redact

        # Raised by forgotten words: never offered as due again (the status column only; the data keeps its own).
        db.execute("UPDATE followups SET data=?, status=? WHERE id=?",
                   (json.dumps(redact.followup(item, raised, answered), ensure_ascii=False),
                    "forgotten" if raised else item.get("status"), fid))


def _handler_for(name):
    if name.startswith("records/"):
        return _records_handler
    return {
        "receipts.jsonl": _receipts_handler,
        "ledger.jsonl": _ledger_handler,
        "followups.jsonl": _followups_handler,
        "forgotten.jsonl": _tombstone_handler,
    }[name]
