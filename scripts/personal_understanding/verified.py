"""What validation has already read: a watermark per log, and what the logs said up to it.

validate reads each large log (receipts, ledger, records) on from its watermark: the byte
offset it had consumed, the file's identity, and the SHA-256 of every byte before the offset,
which is re-computed and compared on every run. A log that was replaced, shortened or changed
anywhere before its watermark makes the run start again from nothing. What the consumed lines
said is kept in memory/v2/views/verified.sqlite: each capture with its ledger status, the
latest receipt of each turn, the latest version of each record with its links, and the
problems each line had.

Files are walked (every entry's lstat) on every run. A folder whose entries all kept their
name, inode and change time is unchanged: what it was found to hold is reused. A capture
file is hashed again when its folder changed and its own signature (inode, size,
modification and change time) differs from the one it was hashed at, or when it never was.
Anything changed within RACY_SECONDS of a run is looked at again by the next one: a
file's times tick too coarsely to prove it did not change twice within one tick.

Derived like every view: deleting the file (forget and restore do) only makes the next run
read and hash everything, as `from_scratch` does. The small logs (follow-ups, feedback,
tombstones, quarantine) are read whole on every run.
"""

import hashlib
import json
import os
import posixpath
import sqlite3
import stat
import time

from . import paths, schema, storage
from .archive_index import connect, disk_refusal, rows_in
from .errors import Problem, PuError

VERSION = "1"  # of the tables below: another value starts them over
RACY_SECONDS = 2.0
CHUNK = 1 << 20
TOPS = ("memory", "sources", "backups")
WHOLE_LOGS = ("followups.jsonl", "feedback.jsonl", "forgotten.jsonl", "quarantine.jsonl")
REF_FIELDS = ("entity_refs", "related_ids", "supports", "contradicts", "supersedes", "before_ids", "after_ids")
STATUS_OF = {"reopened": "pending", "forgotten": "forgotten"}

# Flags kept on rows (cited, unreceipted, uncaptured, missing, dangling) and partial indexes over
# them let each check read only the rows with something to report, whatever the archive's size.
_DDL = """
CREATE TABLE IF NOT EXISTS v_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS v_logs (name TEXT PRIMARY KEY, ino INTEGER, consumed INTEGER, next_line INTEGER,
    sha256 TEXT, entries INTEGER);
CREATE TABLE IF NOT EXISTS v_problems (seq INTEGER PRIMARY KEY AUTOINCREMENT, stage TEXT, severity TEXT, code TEXT,
    path TEXT, line INTEGER, message TEXT);
CREATE INDEX IF NOT EXISTS v_problems_stage ON v_problems(stage);
CREATE TABLE IF NOT EXISTS v_captures (cid TEXT PRIMARY KEY, line INTEGER, path TEXT, sha TEXT, raw TEXT, dir TEXT,
    turn TEXT, source TEXT, status TEXT, blank_reason INTEGER, status_line INTEGER,
    sig TEXT, problem TEXT, gone INTEGER, blob_dir TEXT, cited INTEGER, unreceipted INTEGER);
CREATE INDEX IF NOT EXISTS v_captures_turn ON v_captures(turn, line);
CREATE INDEX IF NOT EXISTS v_captures_path ON v_captures(path);
CREATE INDEX IF NOT EXISTS v_captures_dir ON v_captures(dir);
CREATE INDEX IF NOT EXISTS v_captures_blob ON v_captures(blob_dir) WHERE blob_dir IS NOT NULL;
CREATE INDEX IF NOT EXISTS v_captures_unsigned ON v_captures(cid) WHERE sig IS NULL;
CREATE INDEX IF NOT EXISTS v_captures_odd ON v_captures(cid) WHERE dir IS NULL;
CREATE INDEX IF NOT EXISTS v_captures_problem ON v_captures(cid) WHERE problem IS NOT NULL;
CREATE INDEX IF NOT EXISTS v_captures_gone ON v_captures(cid) WHERE gone = 1;
CREATE INDEX IF NOT EXISTS v_captures_pending ON v_captures(cid) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS v_captures_uncited ON v_captures(cid) WHERE status = 'derived' AND cited = 0;
CREATE INDEX IF NOT EXISTS v_captures_unreasoned ON v_captures(cid) WHERE status = 'no-derivation-needed' AND blank_reason = 1;
CREATE INDEX IF NOT EXISTS v_captures_unreceipted ON v_captures(cid) WHERE unreceipted = 1;
CREATE TABLE IF NOT EXISTS v_receipts (turn TEXT PRIMARY KEY, line INTEGER, requires INTEGER, uncaptured INTEGER);
CREATE INDEX IF NOT EXISTS v_receipts_uncaptured ON v_receipts(turn) WHERE uncaptured = 1;
CREATE TABLE IF NOT EXISTS v_versions (rid TEXT PRIMARY KEY, version INTEGER, line INTEGER, path TEXT);
CREATE TABLE IF NOT EXISTS v_records (rid TEXT PRIMARY KEY, path TEXT, line INTEGER, forgotten INTEGER,
    summary_debt INTEGER, weak INTEGER);
CREATE INDEX IF NOT EXISTS v_records_debt ON v_records(path, line) WHERE summary_debt = 1;
CREATE INDEX IF NOT EXISTS v_records_weak ON v_records(rid) WHERE weak = 1;
CREATE TABLE IF NOT EXISTS v_record_problems (rid TEXT, pos INTEGER, code TEXT, message TEXT);
CREATE INDEX IF NOT EXISTS v_record_problems_rid ON v_record_problems(rid);
CREATE TABLE IF NOT EXISTS v_cites (rid TEXT, cid TEXT, missing INTEGER, PRIMARY KEY (rid, cid)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS v_cites_cid ON v_cites(cid);
CREATE INDEX IF NOT EXISTS v_cites_missing ON v_cites(rid, cid) WHERE missing = 1;
CREATE TABLE IF NOT EXISTS v_refs (rid TEXT, pos INTEGER, field TEXT, ref TEXT, dangling INTEGER);
CREATE INDEX IF NOT EXISTS v_refs_rid ON v_refs(rid);
CREATE INDEX IF NOT EXISTS v_refs_dangling ON v_refs(ref) WHERE dangling = 1;
CREATE TABLE IF NOT EXISTS v_edges (rid TEXT, rel TEXT, pos INTEGER, target TEXT);
CREATE INDEX IF NOT EXISTS v_edges_rel ON v_edges(rel, rid);
CREATE TABLE IF NOT EXISTS v_dirs (dir TEXT PRIMARY KEY, fingerprint TEXT);
CREATE TABLE IF NOT EXISTS v_dir_problems (seq INTEGER PRIMARY KEY AUTOINCREMENT, dir TEXT, stage TEXT, severity TEXT,
    code TEXT, path TEXT, line INTEGER, message TEXT);
CREATE INDEX IF NOT EXISTS v_dir_problems_dir ON v_dir_problems(dir);
"""
_TABLES = ("v_logs", "v_problems", "v_captures", "v_receipts", "v_versions", "v_records", "v_record_problems",
           "v_cites", "v_refs", "v_edges", "v_dirs", "v_dir_problems")
LIVE = "status != 'forgotten' AND cid NOT IN (SELECT id FROM temp.v_tombs)"


class _Restart(Exception):
    """What the logs hold now cannot be folded onto what was read before: read everything again."""


def key(value):
    """A table key for an id as the line has it (a line may hold any JSON value where an id belongs)."""
    return value if isinstance(value, str) else "\x00" + str(value)


def label(stored):
    """The id as messages print it."""
    return stored[1:] if stored.startswith("\x00") else stored


def _text(value):
    return value if isinstance(value, str) else "\x00" + json.dumps(value)


def folder_of(rel):
    """The walked folder ("sources/conversation/2026/01/") a stored path names, or None when it is not plain."""
    if not isinstance(rel, str) or not rel or rel[0] in "/." or "\\" in rel:
        return None
    if ("//" in rel or "/." in rel or rel.endswith("/")) and posixpath.normpath(rel) != rel:
        return None
    cut = rel.rfind("/")
    return rel[:cut + 1] if cut > 0 else None


def _problem_row(p):
    return (p.severity, p.code, p.path, p.line, p.message)


class State:
    """The verified state of one archive for one run (hold storage.snapshot_lock around it)."""

    def __init__(self, root, db, from_scratch):
        self.root = os.fspath(root)
        self.db = db
        self.from_scratch = from_scratch
        self.racy_ns = time.time_ns() - int(RACY_SECONDS * 1e9)
        self.rehashed = 0
        self.fresh_problems = []  # problems of this run's reading that are not kept (unfinished tails)
        self.whole = {}
        self.folded = set()
        self._captures = None

    # --- the logs --------------------------------------------------------------
    def _logs(self):
        """(name, path, display) of the logs read from a watermark, in the order validation reads them."""
        v2 = paths.v2_dir(self.root)
        out = [(n, v2 / n, f"memory/v2/{n}") for n in ("receipts.jsonl", "ledger.jsonl")]
        rdir = paths.records_dir(self.root)
        names = sorted(n for n in os.listdir(rdir) if n.endswith(".jsonl")) if rdir.is_dir() else []
        return out + [(f"records/{n}", rdir / n, f"memory/v2/records/{n}") for n in names]

    def catch_up(self):
        db = self.db
        row = db.execute("SELECT value FROM v_meta WHERE key='version'").fetchone()
        if self.from_scratch or row is None or row[0] != VERSION:
            self._reset()
        try:
            self._consume_all()
        except _Restart:
            self._reset()
            self._consume_all()
        for name in WHOLE_LOGS:
            entries, problems, _end, _next = storage.read_jsonl(paths.v2_dir(self.root) / name, display=f"memory/v2/{name}")
            self.whole[name] = entries
            self.fresh_problems += problems
        db.execute("DROP TABLE IF EXISTS temp.v_tombs")
        db.execute("CREATE TEMP TABLE v_tombs (id TEXT PRIMARY KEY)")
        db.executemany("INSERT OR IGNORE INTO temp.v_tombs VALUES (?)",
                       [(key(obj.get("id")),) for _l, _o, obj in self.whole["forgotten.jsonl"]])
        self._walk()

    def _reset(self):
        for table in _TABLES:
            self.db.execute(f"DELETE FROM {table}")
        self.db.execute("INSERT OR REPLACE INTO v_meta VALUES ('version', ?)", (VERSION,))
        self.from_scratch = True
        self.fresh_problems = []
        self.folded = set()

    def _consume_all(self):
        logs = self._logs()
        known = {r[0]: r for r in self.db.execute("SELECT name, ino, consumed, next_line, sha256, entries FROM v_logs")}
        names = {name for name, _p, _d in logs}
        if any(row[2] for name, row in known.items() if name not in names):
            raise _Restart()
        for name, path, display in logs:
            self._consume(name, path, display, known.get(name))

    def _consume(self, name, path, display, row):
        start, first_line, entries_before = (row[2], row[3], row[5]) if row else (0, 1, 0)
        digest = hashlib.sha256()
        try:
            handle = open(path, "rb")
        except FileNotFoundError:
            if start:
                raise _Restart() from None
            return
        with handle:
            st = os.fstat(handle.fileno())
            if row and (st.st_ino != row[1] or st.st_size < start):
                raise _Restart()
            left = start
            while left:
                chunk = handle.read(min(CHUNK, left))
                if not chunk:
                    raise _Restart()
                digest.update(chunk)
                left -= len(chunk)
            if row and digest.hexdigest() != row[4]:
                raise _Restart()  # changed before its watermark: nothing read from it before can be trusted
            data = handle.read()
        entries, problems, end, next_line = storage.parse_jsonl(data, start, first_line, display)
        digest.update(data[:end - start])
        self.problems = []
        for problem in problems:
            if problem.code == "JSONL_INCOMPLETE_TAIL":
                self.fresh_problems.append(problem)
            else:
                self.problems.append(("read", problem))
        fold = _Receipts if name == "receipts.jsonl" else _Ledger if name == "ledger.jsonl" else _Records
        fold(self, display).run(entries)
        self.db.executemany("INSERT INTO v_problems (stage, severity, code, path, line, message) VALUES (?,?,?,?,?,?)",
                            [(stage,) + _problem_row(p) for stage, p in self.problems])
        self.db.execute("INSERT OR REPLACE INTO v_logs VALUES (?,?,?,?,?,?)",
                        (name, st.st_ino, end, next_line, digest.hexdigest(), entries_before + len(entries)))

    def problem(self, stage, severity, code, path, line, message):
        self.problems.append((stage, Problem(severity, code, path, line, message)))

    def bad_id(self, value, what, where, line):
        if value is not None and not paths.is_id(value):
            self.problem("ids", "error", "MALFORMED_ID", where, line, f"{what} {value!r} is not a valid id")

    # --- the files ---------------------------------------------------------------
    def _walk(self):
        """Every entry under memory/, sources/ and backups/ with its lstat; folders that changed since the last run."""
        self.dirs = {}
        fingerprints = {}
        for top in TOPS:
            self._walk_dir(os.path.join(self.root, top), top + "/", fingerprints)
        known = dict(self.db.execute("SELECT dir, fingerprint FROM v_dirs"))
        self.changed = {d for d, fp in fingerprints.items() if self.from_scratch or fp is None or known.get(d) != fp}
        gone = set(known) - set(fingerprints)
        stale = sorted(self.changed | gone)
        self.db.executemany("DELETE FROM v_dir_problems WHERE dir=?", [(d,) for d in stale])
        self.db.executemany("DELETE FROM v_dirs WHERE dir=?", [(d,) for d in gone])
        self.db.executemany("INSERT OR REPLACE INTO v_dirs VALUES (?,?)", [(d, fingerprints[d]) for d in sorted(self.changed)])
        self.db.execute("DROP TABLE IF EXISTS temp.v_changed")
        self.db.execute("CREATE TEMP TABLE v_changed (dir TEXT PRIMARY KEY)")
        self.db.executemany("INSERT INTO temp.v_changed VALUES (?)", [(d,) for d in stale])
        self._index = {}

    def _walk_dir(self, folder, rel, fingerprints):
        try:
            found = os.scandir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return
        entries, settled = [], True
        with found:
            for entry in found:
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                entries.append((entry.name, st))
                settled = settled and st.st_ctime_ns < self.racy_ns
        entries.sort(key=lambda e: e[0])
        self.dirs[rel] = entries
        digest = hashlib.sha1(repr([(n, st.st_ino, st.st_ctime_ns) for n, st in entries]).encode("utf-8", "surrogatepass"))
        fingerprints[rel] = digest.hexdigest() if settled else None
        for name, st in entries:
            if stat.S_ISDIR(st.st_mode):
                self._walk_dir(os.path.join(folder, name), rel + name + "/", fingerprints)

    def entry(self, rel):
        """The lstat the walk took of `rel`, or None."""
        folder = folder_of(rel)
        if folder is None or folder not in self.dirs:
            return None
        index = self._index.get(folder)
        if index is None:
            index = self._index[folder] = dict(self.dirs[folder])
        return index.get(rel[len(folder):])

    def walked(self):
        """(rel, lstat) of every entry in a folder that changed since the last run."""
        return [(d + name, st) for d in sorted(self.changed) for name, st in self.dirs[d]]

    def keep(self, stage, problems):
        """Remember what a check of changed folders found, per folder."""
        self.db.executemany("INSERT INTO v_dir_problems (dir, stage, severity, code, path, line, message) VALUES (?,?,?,?,?,?,?)",
                            [(p.path[:p.path.rfind("/") + 1], stage) + _problem_row(p) for p in problems])

    def kept(self, stage):
        """What was found before in the folders that did not change (those that did were cleared by the walk)."""
        return [Problem(*row) for row in self.db.execute(
            "SELECT severity, code, path, line, message FROM v_dir_problems WHERE stage=? ORDER BY path, seq", (stage,))]

    # --- what validators ask -------------------------------------------------
    def stored(self, stage):
        return [Problem(*row) for row in self.db.execute(
            "SELECT severity, code, path, line, message FROM v_problems WHERE stage=? ORDER BY path, line, seq", (stage,))]

    def rows(self, sql, args=()):
        return self.db.execute(sql, args).fetchall()

    def registered(self, rels):
        """The ones of these paths that a capture was registered at."""
        return {r[0] for r in rows_in(self.db, "SELECT path FROM v_captures WHERE path IN ({marks})", sorted(rels))}

    def captures(self):
        """(problems of capture files, ids of captures whose file is gone), hashing the files that changed."""
        if self._captures is not None:
            return self._captures
        from .validate import check_capture

        where = "" if self.from_scratch else (
            " AND cid IN (SELECT cid FROM v_captures WHERE sig IS NULL UNION SELECT cid FROM v_captures WHERE dir IS NULL "
            "UNION SELECT cid FROM v_captures WHERE dir IN (SELECT dir FROM temp.v_changed) "
            "UNION SELECT cid FROM v_captures WHERE blob_dir IN (SELECT dir FROM temp.v_changed))")
        updates = []
        for cid, line, path, sha, raw, sig in self.db.execute(
                f"SELECT cid, line, path, sha, raw, sig FROM v_captures WHERE {LIVE}{where}").fetchall():
            if raw is not None:
                path, sha = json.loads(raw)
            blob = sig.split("|")[1] if sig and "|" in sig else None
            now, _settled = self._signature(path, blob)
            if sig is not None and now == sig and not self.from_scratch:
                continue
            st = self.entry(path)
            found, blob = check_capture(self.root, label(cid), line, path, sha, walked=st is not None and stat.S_ISREG(st.st_mode))
            self.rehashed += 1
            now, settled = self._signature(path, blob)
            updates.append((now if settled else None, json.dumps(_problem_row(found)) if found else None,
                            int(not self._is_file(path)), folder_of(blob), cid))
        self.db.executemany("UPDATE v_captures SET sig=?, problem=?, gone=?, blob_dir=? WHERE cid=?", updates)
        problems = [Problem(*json.loads(p)) for (p,) in self.db.execute(
            f"SELECT problem FROM v_captures WHERE problem IS NOT NULL AND {LIVE} ORDER BY cid")]
        gone = {c for (c,) in self.db.execute(f"SELECT cid FROM v_captures WHERE gone = 1 AND {LIVE}")}
        self._captures = problems, gone
        return self._captures

    def _signature(self, path, blob=None):
        """(signature, settled) of a capture's file and its attachment's bytes as the walk saw them.

        None when one is not a regular file there; settled is False when one changed too recently
        for its times to prove it has not changed again since.
        """
        parts, settled = [], True
        for rel in (path,) + ((blob,) if blob else ()):
            st = self.entry(rel)
            if st is None or not stat.S_ISREG(st.st_mode):
                return None, False
            settled = settled and st.st_ctime_ns < self.racy_ns and st.st_mtime_ns < self.racy_ns
            parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
        return parts[0] + (f"|{blob}|{parts[1]}" if blob else ""), settled

    def _is_file(self, path):
        st = self.entry(path)
        if st is not None and stat.S_ISREG(st.st_mode):
            return True
        try:
            return os.path.isfile(os.path.join(self.root, path or ""))
        except TypeError:
            return False


class _Fold:
    """Folds one log's new lines into the state, writing in batches."""

    def __init__(self, state, display):
        self.state, self.db, self.display = state, state.db, display


class _Receipts(_Fold):
    def run(self, entries):
        latest = {}
        for line, _offset, obj in entries:
            turn = obj.get("turn_id")
            self.state.bad_id(turn, "turn id", self.display, line)
            if obj.get("type") != "receipt" or not turn:
                self.state.problem("receipts", "error", "RECEIPT_INVALID", self.display, line, "not a turn receipt")
                continue
            latest[key(turn)] = (line, int(bool(obj.get("requires_personal_understanding"))))
        self.db.executemany("INSERT OR REPLACE INTO v_receipts SELECT ?1, ?2, ?3, ?3 AND NOT EXISTS "
                            "(SELECT 1 FROM v_captures c WHERE c.turn = ?1)", [(t,) + v for t, v in latest.items()])
        if not self.state.from_scratch:  # (a full read meets the ledger after the receipts)
            self.db.executemany("UPDATE v_captures SET unreceipted = 0 WHERE turn = ? AND unreceipted = 1",
                                [(t,) for t in latest])


class _Ledger(_Fold):
    def run(self, entries):
        new, changes = {}, {}  # captures registered in these lines; status changes of earlier ones
        for line, _offset, event in entries:
            cid, kind = event.get("capture_id"), event.get("event")
            self.state.bad_id(cid, "capture id", self.display, line)
            ckey = key(cid)
            if kind == "captured":
                first = new[ckey][1] if ckey in new else self._line_of(ckey)
                if first is not None:
                    self.state.problem("ledger", "error", "DUPLICATE_ID", self.display, line,
                                       f"capture {cid} is registered twice (first at line {first})")
                    continue
                path, sha, source, turn = event.get("path"), event.get("utf8_sha256"), event.get("source", ""), event.get("turn_id")
                simple = (path is None or isinstance(path, str)) and (sha is None or isinstance(sha, str))
                new[ckey] = [ckey, line, path if simple else None, sha if simple else None,
                             None if simple else json.dumps([path, sha]), folder_of(path) if simple else None,
                             key(turn) if turn else None, source if isinstance(source, str) else None, "pending", 0, line]
            elif kind in ("finalized", "reopened", "forgotten"):
                if ckey not in new and self._line_of(ckey) is None:
                    self.state.problem("ledger", "error", "LEDGER_UNKNOWN_CAPTURE", self.display, line,
                                       f"{kind} event for capture {cid}, which was never registered")
                    continue
                reason = event.get("reason")
                blank = not reason.strip() if isinstance(reason, str) else not reason
                status = (_text(event.get("disposition")) if kind == "finalized" else STATUS_OF[kind], int(blank), line)
                if ckey in new:
                    new[ckey][8:11] = status
                else:
                    changes[ckey] = status
            else:
                self.state.problem("ledger", "error", "LEDGER_INVALID", self.display, line, f"unknown ledger event {kind!r}")
        db = self.db
        db.executemany("INSERT INTO v_captures VALUES (?,?,?,?,?,?,?,?,?,?,?,NULL,NULL,0,NULL,0,0)", list(new.values()))
        db.executemany("UPDATE v_captures SET status=?, blank_reason=?, status_line=? WHERE cid=?",
                       [v + (c,) for c, v in changes.items()])
        unreceipted = ("UPDATE v_captures SET unreceipted = 1 WHERE turn IS NOT NULL AND (source IS NULL OR "
                       "substr(source, 1, 6) != 'import') AND NOT EXISTS (SELECT 1 FROM v_receipts r WHERE r.turn = v_captures.turn)")
        if self.state.from_scratch:  # records come after the ledger: nothing cites these yet
            db.execute(unreceipted)
            db.execute("UPDATE v_receipts SET uncaptured = 0 WHERE uncaptured = 1 AND "
                       "EXISTS (SELECT 1 FROM v_captures c WHERE c.turn = v_receipts.turn)")
            return
        ids = [(c,) for c in new]
        db.executemany(unreceipted + " AND cid = ?", ids)
        db.executemany("UPDATE v_receipts SET uncaptured = 0 WHERE turn = ? AND uncaptured = 1",
                       [(row[6],) for row in new.values() if row[6] is not None])
        db.executemany("UPDATE v_cites SET missing = 0 WHERE cid = ? AND missing = 1", ids)
        db.executemany("UPDATE v_captures SET cited = (SELECT COUNT(*) FROM v_cites c JOIN v_records r ON r.rid = c.rid "
                       "WHERE c.cid = v_captures.cid AND r.forgotten = 0) WHERE cid = ?", ids)

    def _line_of(self, ckey):
        if self.state.from_scratch:
            return None  # the ledger is read once per run: a full read finds nothing before these lines
        row = self.db.execute("SELECT line FROM v_captures WHERE cid=?", (ckey,)).fetchone()
        return row[0] if row else None


class _Records(_Fold):
    def run(self, entries):
        versions, latest, fresh = {}, {}, []  # fresh: ids no earlier line held
        for line, _offset, rec in entries:
            rid, version = rec.get("id"), rec.get("version")
            if not isinstance(rid, str) or not isinstance(version, int):
                self.state.problem("versions", "error", "RECORD_INVALID", self.display, line,
                                   "record line needs a string id and an integer version")
            else:
                last = versions[rid] if rid in versions else self._one("SELECT version, line, path FROM v_versions WHERE rid=?", rid)
                if last is not None and version <= last[0]:
                    self.state.problem("versions", "error", "DUPLICATE_ID", self.display, line,
                                       f"{rid} version {version} already exists (line {last[1]} of {last[2]})")
                elif version != (last[0] + 1 if last else 1):
                    self.state.problem("versions", "error", "RECORD_VERSION_GAP", self.display, line,
                                       f"{rid} jumps to version {version}")
                versions[rid] = (max(version, last[0]) if last else version, line, self.display)
            if isinstance(rid, str):
                if rid not in latest:
                    known = rid in self.state.folded or (
                        not self.state.from_scratch and self._one("SELECT path FROM v_records WHERE rid=?", rid))
                    if known and known is not True and known[0] != self.display:
                        raise _Restart()  # one id in two files: only a read in file order folds it as a full read does
                    if not known:
                        fresh.append((rid,))
                latest[rid] = (line, rec)
        db = self.db
        db.executemany("INSERT OR REPLACE INTO v_versions VALUES (?,?,?,?)", [(r,) + v for r, v in versions.items()])
        known = set(latest) - {r for (r,) in fresh}
        stale = [(r,) for r in latest if r in known]
        self.state.folded.update(latest)
        db.executemany("UPDATE v_captures SET cited = cited - 1 WHERE cid IN (SELECT c.cid FROM v_cites c JOIN v_records r "
                       "ON r.rid = c.rid WHERE c.rid = ? AND r.forgotten = 0)", stale)
        for table in ("v_record_problems", "v_cites", "v_refs", "v_edges"):
            db.executemany(f"DELETE FROM {table} WHERE rid=?", stale)
        rows, problems, cites, refs, edges = [], [], [], [], []
        for rid, (line, rec) in latest.items():
            self._fold(rid, line, rec, rows, problems, cites, refs, edges)
        db.executemany("INSERT OR REPLACE INTO v_records VALUES (?,?,?,?,?,?)", rows)
        db.executemany("UPDATE v_refs SET dangling = 0 WHERE ref = ? AND dangling = 1", fresh)
        db.executemany("INSERT INTO v_record_problems VALUES (?,?,?,?)", problems)
        db.executemany("INSERT OR IGNORE INTO v_cites SELECT ?1, ?2, NOT EXISTS (SELECT 1 FROM v_captures WHERE cid = ?2)", cites)
        live = {rid for rid, _p, _l, forgotten, _d, _w in rows if not forgotten}
        db.executemany("UPDATE v_captures SET cited = cited + 1 WHERE cid = ?", [(c,) for rid, c in cites if rid in live])
        db.executemany("INSERT INTO v_refs SELECT ?1, ?2, ?3, ?4, NOT EXISTS (SELECT 1 FROM v_records WHERE rid = ?4)", refs)
        db.executemany("INSERT INTO v_edges VALUES (?,?,?,?)", edges)

    def _one(self, sql, rid):
        return self.db.execute(sql, (rid,)).fetchone()

    def _fold(self, rid, line, rec, rows, problems, cites, refs, edges):
        """What validators need of a record's latest version."""
        status, kind = rec.get("status"), rec.get("kind")
        forgotten = status in ("forgotten",)
        try:
            weak = kind in ("hypothesis", "intent") and len(set(rec.get("supports") or ())) < 2
        except TypeError:
            weak = True
        rows.append((rid, self.display, line, int(forgotten),
                     int(rec.get("fidelity") == "summary_only" and status != "forgotten"), int(weak)))
        found = [("RECORD_INVALID", f"{rid}: {field} {message}") for field, message in schema.check_record(rec)]
        if not forgotten and schema.needs_capture(kind) and not schema.has_source(rec) and rec.get("fidelity") != "summary_only":
            found.append(("RECORD_WITHOUT_CAPTURE", f"{rid} states something but cites no capture (and is not marked summary_only)"))
        problems += [(rid, i, code, message) for i, (code, message) in enumerate(found)]
        cites += [(rid, c) for c in sorted(schema.cited_captures(rec))]
        mine = []
        for field in REF_FIELDS:
            try:
                mine += [(field, r) for r in rec.get(field) or () if isinstance(r, str)]
            except TypeError:
                continue
        refs += [(rid, i, field, r) for i, (field, r) in enumerate(mine)]
        mine = [("supersedes", r) for field, r in mine if field == "supersedes"]
        if isinstance(rec.get("redirect_to"), str):
            mine.append(("redirect", rec["redirect_to"]))
        edges += [(rid, rel, i, target) for i, (rel, target) in enumerate(mine)]


def _begin(root, db, from_scratch):
    state = State(root, db, from_scratch)
    try:
        db.execute("PRAGMA cache_size=-65536")  # a run touches much of the file: keep it in memory (64 MB at most)
        db.execute("PRAGMA temp_store=MEMORY")
        try:
            row = db.execute("SELECT value FROM v_meta WHERE key='version'").fetchone()
        except sqlite3.OperationalError:
            row = None
        if row is None or row[0] != VERSION:  # another layout: derived, so start over
            for table in _TABLES + ("v_meta",):
                db.execute(f"DROP TABLE IF EXISTS {table}")
        db.executescript(_DDL)  # before the transaction: executescript commits what is open
        db.execute("BEGIN IMMEDIATE")
        state.catch_up()
    except BaseException:
        _close(state)
        raise
    return state


def caught_up(root, from_scratch=False):
    """The verified state caught up with the logs, inside a transaction; end it with `done(state)`.

    Kept in views/verified.sqlite; in memory (everything read and hashed) when that file cannot be
    written or is busy with another run; replaced when it is unreadable (it is derived).
    """
    path = paths.verified_db_path(root)
    for attempt in ("file", "fresh file"):
        try:
            return _begin(root, connect(root, path), from_scratch)
        except PuError:
            break
        except sqlite3.OperationalError as exc:
            if disk_refusal(exc, path) is not None or "locked" in str(exc) or "busy" in str(exc):
                break
            if attempt == "file":
                _discard(path)
        except sqlite3.DatabaseError:
            if attempt == "file":
                _discard(path)
    return _begin(root, connect(root, None), True)


def _discard(path):
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass


def done(state, keep=True):
    """Keep what this run read as the next run's watermark (or, keep=False, drop it)."""
    try:
        state.db.execute("COMMIT" if keep else "ROLLBACK")
    except sqlite3.DatabaseError:
        pass  # a watermark that could not be kept only costs the next run a full read
    _close(state)


def _close(state):
    try:
        state.db.close()
    except sqlite3.Error:
        pass
