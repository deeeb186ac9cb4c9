"""Whole-archive validation: clean, warnings or failed, every problem with its place.

Validators are plain functions `check(snapshot) -> iterable of Problem`; this
module runs them all over one snapshot read straight from the sources of truth
(never from the derived index) and reports every problem at once. The run holds
the archive lock shared, so a write in progress is seen whole or not at all.
"""

import os
import stat

from . import archive, paths, schema, storage
from .errors import Problem
from .textinput import sha256_hex


class Snapshot:
    """Everything validators look at, read once."""

    def __init__(self, root):
        self.root = root
        self.problems = []  # read problems (torn or invalid lines)
        self.logs = {}
        for name in ("receipts.jsonl", "ledger.jsonl", "followups.jsonl", "feedback.jsonl", "forgotten.jsonl", "quarantine.jsonl"):
            self.logs[name] = self._read(paths.v2_dir(root) / name, f"memory/v2/{name}")
        self.record_lines = []  # (display, line, obj) in file order
        rdir = paths.records_dir(root)
        for fname in sorted(os.listdir(rdir)) if rdir.is_dir() else ():
            if fname.endswith(".jsonl"):
                display = f"memory/v2/records/{fname}"
                for line, _off, obj in self._read(rdir / fname, display):
                    self.record_lines.append((display, line, obj))
        self.tombstones = {e[2].get("id") for e in self.logs["forgotten.jsonl"]}
        self.tree = _tree(root)
        self._fold_ledger()
        self._fold_records()

    def _read(self, path, display):
        entries, problems, _end, _next = storage.read_jsonl(path, display=display)
        self.problems.extend(problems)
        return entries

    def _fold_ledger(self):
        self.captures = {}  # id -> (line, event)
        self.capture_status = {}
        self.ledger_problems = []
        for line, _off, event in self.logs["ledger.jsonl"]:
            cid = event.get("capture_id")
            kind = event.get("event")
            if kind == "captured":
                if cid in self.captures:
                    self.ledger_problems.append(Problem("error", "DUPLICATE_ID", "memory/v2/ledger.jsonl", line,
                                                        f"capture {cid} is registered twice (first at line {self.captures[cid][0]})"))
                    continue
                self.captures[cid] = (line, event)
                self.capture_status[cid] = ("pending", None, line)
            elif kind in ("finalized", "reopened", "forgotten"):
                if cid not in self.captures:
                    self.ledger_problems.append(Problem("error", "LEDGER_UNKNOWN_CAPTURE", "memory/v2/ledger.jsonl", line,
                                                        f"{kind} event for capture {cid}, which was never registered"))
                    continue
                status = {"finalized": event.get("disposition"), "reopened": "pending", "forgotten": "forgotten"}[kind]
                self.capture_status[cid] = (status, event.get("reason"), line)
            else:
                self.ledger_problems.append(Problem("error", "LEDGER_INVALID", "memory/v2/ledger.jsonl", line,
                                                    f"unknown ledger event {kind!r}"))
        for cid in self.tombstones & set(self.capture_status):  # the tombstone is the intent: it counts from then on
            self.capture_status[cid] = ("forgotten", None, self.capture_status[cid][2])

    def _fold_records(self):
        self.records = {}  # id -> (display, line, latest obj)
        for display, line, obj in self.record_lines:
            rid = obj.get("id")
            if isinstance(rid, str):
                self.records[rid] = (display, line, obj)
        self.capture_links = {}
        for rid, (_d, _l, obj) in self.records.items():
            if obj.get("status") == "forgotten":
                continue
            for cid in schema.cited_captures(obj):
                self.capture_links.setdefault(cid, set()).add(rid)



def _tree(root):
    """(relative path, lstat) of everything under memory/, sources/ and backups/, links not followed."""
    out = []
    for top in ("memory", "sources", "backups"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            for name in sorted(dirnames + filenames):
                full = os.path.join(dirpath, name)
                try:
                    out.append((os.path.relpath(full, root).replace(os.sep, "/"), os.lstat(full)))
                except FileNotFoundError:
                    continue
    return out


# --- validators ------------------------------------------------------------

def check_read_problems(snap):
    return snap.problems + snap.ledger_problems


def check_capture_files(snap):
    out = []
    for cid, (line, event) in sorted(snap.captures.items()):
        status = snap.capture_status[cid][0]
        if status == "forgotten" or cid in snap.tombstones:
            continue
        relpath = event.get("path") or ""
        where = relpath or "memory/v2/ledger.jsonl"
        try:
            target = paths.inside_root(snap.root, relpath)
        except Exception:
            out.append(Problem("error", "CAPTURE_PATH_INVALID", "memory/v2/ledger.jsonl", line, f"capture {cid} has path {relpath!r}"))
            continue
        if not target.is_file():
            out.append(Problem("error", "LEDGER_CAPTURE_MISSING", "memory/v2/ledger.jsonl", line,
                               f"capture {cid} is in the ledger but its file {relpath} is missing"))
            continue
        try:
            doc = storage.read_json(target)
        except (ValueError, UnicodeDecodeError):
            out.append(Problem("error", "CAPTURE_UNREADABLE", where, None, f"capture {cid} is not valid JSON"))
            continue
        expected = event.get("utf8_sha256")
        if doc.get("kind") == "attachment":
            blob = os.path.join(snap.root, doc.get("blob") or "")
            actual = sha256_hex(open(blob, "rb").read()) if os.path.isfile(blob) else None
            if actual is None:
                out.append(Problem("error", "ATTACHMENT_MISSING", doc.get("blob") or where, None, f"bytes of attachment {cid} are missing"))
            elif actual != expected or doc.get("sha256") != expected:
                out.append(Problem("error", "CAPTURE_HASH_MISMATCH", doc.get("blob"), None,
                                   f"attachment {cid} hashes to {actual[:12]}…, registered {str(expected)[:12]}…"))
            continue
        text = doc.get("text")
        actual = sha256_hex(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) else None
        if actual != expected or doc.get("utf8_sha256") != expected or doc.get("capture_id") != cid:
            out.append(Problem("error", "CAPTURE_HASH_MISMATCH", relpath, None,
                               f"capture {cid} no longer matches its SHA-256 {str(expected)[:12]}… (the file was changed after it was saved)"))
    return out


def check_sources_tree(snap):
    """Unregistered captures, leftover temp files and links inside sources/."""
    out = []
    registered = {event.get("path") for _line, event in snap.captures.values()}
    for rel, st in snap.tree:
        if not rel.startswith("sources/"):
            continue
        name = rel.rsplit("/", 1)[-1]
        if stat.S_ISLNK(st.st_mode):
            out.append(Problem("error", "SOURCES_SYMLINK", rel, None, "a symbolic link inside sources/ (stored material must be real files)"))
        elif stat.S_ISREG(st.st_mode):
            if name.endswith(".tmp") and name.startswith("."):
                out.append(Problem("warning", "STRAY_TEMP_FILE", rel, None, "temporary file left by an interrupted write ({cmd:derivation_ledger} with {arg:repair_ledger=true} removes it)"))
            elif rel.startswith("sources/conversation/") and name.endswith(".json") and rel not in registered:
                out.append(Problem("warning", "CAPTURE_UNREGISTERED", rel, None, "capture file not in the ledger; repair it with {cmd:derivation_ledger} {arg:repair_ledger=true}"))
    return out


def check_private(snap):
    """Links anywhere in memory/ and backups/ (sources/ has its own code), and what others may read."""
    out = []
    for rel, st in snap.tree:
        if stat.S_ISLNK(st.st_mode):
            if not rel.startswith("sources/"):
                out.append(Problem("error", "ARCHIVE_SYMLINK", rel, None,
                                   "a symbolic link inside the archive: writes and deletes through it are refused; "
                                   "put the real folder or file in its place"))
        elif os.name != "nt" and stat.S_IMODE(st.st_mode) & 0o077:
            out.append(Problem("warning", "ARCHIVE_NOT_PRIVATE", rel, None,
                               f"mode {stat.S_IMODE(st.st_mode):o}: other users may read it; chmod go-rwx it (the archive creates 0600 files, 0700 folders)"))
    return out


def check_ids(snap):
    """Ids already on disk that no command would accept (a trailing newline makes a look-alike file name)."""
    out = []

    def bad(value, what, where, line):
        if value is not None and not paths.is_id(value):
            out.append(Problem("error", "MALFORMED_ID", where, line, f"{what} {value!r} is not a valid id"))

    for line, _off, event in snap.logs["ledger.jsonl"]:
        bad(event.get("capture_id"), "capture id", "memory/v2/ledger.jsonl", line)
    for line, _off, obj in snap.logs["receipts.jsonl"]:
        bad(obj.get("turn_id"), "turn id", "memory/v2/receipts.jsonl", line)
    for line, _off, obj in snap.logs["followups.jsonl"]:
        bad(obj.get("id"), "follow-up id", "memory/v2/followups.jsonl", line)
    for line, _off, obj in snap.logs["forgotten.jsonl"]:
        bad(obj.get("id"), "forgotten id", "memory/v2/forgotten.jsonl", line)
    return out


def check_ledger_closure(snap):
    out = []
    for cid, (status, reason, line) in sorted(snap.capture_status.items()):
        if status == "derived" and not snap.capture_links.get(cid):
            out.append(Problem("error", "DERIVED_WITHOUT_RECORD", "memory/v2/ledger.jsonl", line,
                               f"capture {cid} is marked derived but no record cites it"))
        if status == "no-derivation-needed" and not (reason or "").strip():
            out.append(Problem("error", "NO_DERIVATION_WITHOUT_REASON", "memory/v2/ledger.jsonl", line,
                               f"capture {cid} was closed without a reason"))
        if status == "pending" and snap.require_closed:
            out.append(Problem("error", "CAPTURE_PENDING", "memory/v2/ledger.jsonl", line,
                               f"capture {cid} is still pending (neither derived nor closed)"))
    return out


def check_receipts(snap):
    out = []
    by_turn = {}
    for line, _off, obj in snap.logs["receipts.jsonl"]:
        if obj.get("type") != "receipt" or not obj.get("turn_id"):
            out.append(Problem("error", "RECEIPT_INVALID", "memory/v2/receipts.jsonl", line, "not a turn receipt"))
            continue
        by_turn[obj["turn_id"]] = (line, obj)
    turn_caps = {}
    for cid, (_line, event) in snap.captures.items():
        if event.get("turn_id"):
            turn_caps.setdefault(event["turn_id"], []).append(cid)
    for turn, (line, receipt) in sorted(by_turn.items()):
        caps = turn_caps.get(turn, [])
        missing = [c for c in caps if snap.capture_status[c][0] != "forgotten" and c not in snap.tombstones
                   and not os.path.isfile(os.path.join(snap.root, snap.captures[c][1].get("path") or ""))]
        if missing:
            out.append(Problem("error", "RECEIPT_CAPTURE_MISSING", "memory/v2/receipts.jsonl", line,
                               f"turn {turn}'s capture {', '.join(missing)} is missing from sources/"))
        if receipt.get("requires_personal_understanding") and not caps:
            out.append(Problem("warning", "TURN_NOT_CAPTURED", "memory/v2/receipts.jsonl", line,
                               f"turn {turn} required a capture and has none"))
    for cid, (line, event) in sorted(snap.captures.items()):
        turn = event.get("turn_id")
        if turn and not event.get("source", "").startswith("import") and turn not in by_turn:
            out.append(Problem("error", "CAPTURE_WITHOUT_RECEIPT", "memory/v2/ledger.jsonl", line,
                               f"capture {cid} names turn {turn}, which has no receipt"))
    return out


def check_quarantine(snap):
    return [Problem("warning", "INTERRUPTED_WRITE_RECOVERED", "memory/v2/quarantine.jsonl", line,
                    f"{obj.get('bytes')} unfinished bytes were moved out of {obj.get('file')} at {obj.get('moved_at')}")
            for line, _off, obj in snap.logs["quarantine.jsonl"]]


def check_torn(snap):
    """Unfinished lines that derivation_ledger --repair set aside (<log>.torn): kept for a person to look at."""
    out = []
    for dirpath, dirnames, filenames in os.walk(paths.v2_dir(snap.root)):
        dirnames[:] = [d for d in dirnames if d != "views"]
        for name in sorted(filenames):
            if name.endswith(".torn"):
                full = os.path.join(dirpath, name)
                out.append(Problem("warning", "TORN_TAIL_SET_ASIDE", paths.rel(snap.root, full), None,
                                   f"{os.path.getsize(full)} bytes of unfinished lines left by interrupted writes; "
                                   "not data: look at them and delete the file"))
    return out


VALIDATORS = [check_read_problems, check_capture_files, check_sources_tree, check_private, check_ids,
              check_ledger_closure, check_receipts, check_quarantine, check_torn]


def _extra_validators():
    from .records_check import RECORD_VALIDATORS  # records arrive with the understanding model

    return RECORD_VALIDATORS


def run(root, require_closed_captures=False):
    with storage.snapshot_lock(root):  # captures are re-hashed under it too: a forget cannot pull one away mid-check
        snap = Snapshot(root)
        snap.require_closed = require_closed_captures
        problems = []
        for check in VALIDATORS + _extra_validators():
            problems.extend(check(snap))
    return snap, problems


def status_of(problems):
    if any(p.severity == "error" for p in problems):
        return "failed"
    return "warnings" if problems else "clean"


def validate(root, strict=False, require_closed_captures=False, json=False):
    """Check the whole archive. `strict` makes warnings fail."""
    archive.require(root)
    snap, problems = run(root, require_closed_captures)
    problems.sort(key=lambda p: (p.severity != "error", p.path or "", p.line or 0))
    status = status_of(problems)
    out = {
        "status": status,
        "ok": status == "clean" or (status == "warnings" and not strict),
        "strict": strict,
        "errors": sum(p.severity == "error" for p in problems),
        "warnings": sum(p.severity == "warning" for p in problems),
        "problems": [str(p) for p in problems],
        "checked": {
            "captures": len(snap.captures),
            "receipts": len(snap.logs["receipts.jsonl"]),
            "records": len(snap.records),
            "pending_captures": sum(1 for s in snap.capture_status.values() if s[0] == "pending"),
        },
    }
    if json:
        out["problem_details"] = [p.to_dict() for p in problems]
    return out
