"""Whole-archive validation: clean, warnings or failed, every problem with its place.

Validators are plain functions `check(snap) -> iterable of Problem`; this module runs
them all over one snapshot of the sources of truth (never the derived index) and reports
every problem at once. The run holds the archive lock shared, so a write in progress is
seen whole or not at all.

What earlier runs read and hashed is kept as a verified watermark (verified.py): a run
reads only what the logs gained since, and hashes only capture files that changed. The
result is the one a full read gives; `from_scratch` reads and hashes everything again.
"""

import os
import stat

from . import archive, paths, storage, verified
from .errors import Problem, PuError
from .archive_index import rows_in
from .capture import attachment_bytes
from .verified import LIVE
from .textinput import sha256_hex


class Snapshot:
    """What validators look at: the logs folded up to now, and the files as one walk saw them.

    `tree` holds the entries of the folders that changed since the last run; checks of
    the tree keep what they found there (`state.keep`) and add what was found before in
    the others (`state.kept`).
    """

    def __init__(self, root, state):
        self.root = root
        self.state = state
        self.tree = state.walked()
        self.tombstones = {obj.get("id") for _l, _o, obj in state.whole["forgotten.jsonl"]}

    def logs(self, name):
        """Entries of a small log, read whole for this run."""
        return self.state.whole[name]

    def captures(self):
        return self.state.captures()


# --- validators ------------------------------------------------------------

def check_read_problems(snap):
    return snap.state.stored("read") + snap.state.fresh_problems + snap.state.stored("ledger")


def check_capture(root, cid, line, relpath, expected, walked=False):
    """(problem or None, attachment blob path or None) for one registered capture's file.

    walked: the walk found it a regular file below real folders, so it is inside the archive as named.
    """
    relpath = relpath or ""
    where = relpath or "memory/v2/ledger.jsonl"
    try:
        target = os.path.join(root, relpath) if walked else paths.inside_root(root, relpath)
    except Exception:
        return Problem("error", "CAPTURE_PATH_INVALID", "memory/v2/ledger.jsonl", line, f"capture {cid} has path {relpath!r}"), None
    if not walked and not target.is_file():
        return Problem("error", "LEDGER_CAPTURE_MISSING", "memory/v2/ledger.jsonl", line,
                       f"capture {cid} is in the ledger but its file {relpath} is missing"), None
    try:
        doc = storage.read_json(target)
    except (ValueError, UnicodeDecodeError):
        return Problem("error", "CAPTURE_UNREADABLE", where, None, f"capture {cid} is not valid JSON"), None
    if doc.get("kind") == "attachment":
        try:
            blob = attachment_bytes(root, doc, expected)
        except PuError:  # its path goes through a link (reported on its own by the link check)
            blob = None
        if blob is None:
            return Problem("error", "CAPTURE_HASH_MISMATCH", relpath, None,
                           f"attachment {cid} names bytes at {doc.get('blob')!r}, not where its SHA-256 keeps them"), None
        actual = sha256_hex(blob.read_bytes()) if blob.is_file() else None
        if actual is None:
            return Problem("error", "ATTACHMENT_MISSING", doc.get("blob") or where, None, f"bytes of attachment {cid} are missing"), None
        if actual != expected or doc.get("sha256") != expected:
            return Problem("error", "CAPTURE_HASH_MISMATCH", doc.get("blob"), None,
                           f"attachment {cid} hashes to {actual[:12]}…, registered {str(expected)[:12]}…"), doc.get("blob")
        return None, doc.get("blob")
    text = doc.get("text")
    actual = sha256_hex(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) else None
    if actual != expected or doc.get("utf8_sha256") != expected or doc.get("capture_id") != cid:
        return Problem("error", "CAPTURE_HASH_MISMATCH", relpath, None,
                       f"capture {cid} no longer matches its SHA-256 {str(expected)[:12]}… (the file was changed after it was saved)"), None
    return None, None


def check_capture_files(snap):
    return snap.captures()[0]


def check_sources_tree(snap):
    """Unregistered captures, leftover temp files and links inside sources/."""
    out, candidates = [], []
    for rel, st in snap.tree:
        if not rel.startswith("sources/"):
            continue
        name = rel.rsplit("/", 1)[-1]
        if stat.S_ISLNK(st.st_mode):
            out.append(Problem("error", "SOURCES_SYMLINK", rel, None, "a symbolic link inside sources/ (stored material must be real files)"))
        elif stat.S_ISREG(st.st_mode):
            if name.endswith(".tmp") and name.startswith("."):
                out.append(Problem("warning", "STRAY_TEMP_FILE", rel, None, "temporary file left by an interrupted write ({cmd:derivation_ledger} with {arg:repair_ledger=true} removes it)"))
            elif rel.startswith("sources/conversation/") and name.endswith(".json"):
                candidates.append(rel)
    registered = snap.state.registered(candidates)
    out += [Problem("warning", "CAPTURE_UNREGISTERED", rel, None, "capture file not in the ledger; repair it with "
                    "{cmd:derivation_ledger} {arg:repair_ledger=true}") for rel in candidates if rel not in registered]
    kept = snap.state.kept("sources")
    registered = snap.state.registered(p.path for p in kept if p.code == "CAPTURE_UNREGISTERED")  # registered since
    snap.state.keep("sources", out)
    return out + [p for p in kept if p.code != "CAPTURE_UNREGISTERED" or p.path not in registered]


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
    kept = snap.state.kept("private")
    snap.state.keep("private", out)
    return out + kept


def check_ids(snap):
    """Ids already on disk that no command would accept (a trailing newline makes a look-alike file name)."""
    out = snap.state.stored("ids")

    def bad(value, what, where, line):
        if value is not None and not paths.is_id(value):
            out.append(Problem("error", "MALFORMED_ID", where, line, f"{what} {value!r} is not a valid id"))

    for line, _off, obj in snap.logs("followups.jsonl"):
        bad(obj.get("id"), "follow-up id", "memory/v2/followups.jsonl", line)
    for line, _off, obj in snap.logs("forgotten.jsonl"):
        bad(obj.get("id"), "forgotten id", "memory/v2/forgotten.jsonl", line)
    return out


def check_ledger_closure(snap):
    found = snap.state.rows(f"SELECT cid, status_line, 0 FROM v_captures WHERE status = 'derived' AND cited = 0 AND {LIVE}")
    found += snap.state.rows(f"SELECT cid, status_line, 1 FROM v_captures WHERE status = 'no-derivation-needed' "
                             f"AND blank_reason = 1 AND {LIVE}")
    if snap.require_closed:
        found += snap.state.rows(f"SELECT cid, status_line, 2 FROM v_captures WHERE status = 'pending' AND {LIVE}")
    out = []
    for cid, line, which in sorted(found):
        cid = verified.label(cid)
        if which == 0:
            out.append(Problem("error", "DERIVED_WITHOUT_RECORD", "memory/v2/ledger.jsonl", line,
                               f"capture {cid} is marked derived but no record cites it"))
        elif which == 1:
            out.append(Problem("error", "NO_DERIVATION_WITHOUT_REASON", "memory/v2/ledger.jsonl", line,
                               f"capture {cid} was closed without a reason"))
        else:
            out.append(Problem("error", "CAPTURE_PENDING", "memory/v2/ledger.jsonl", line,
                               f"capture {cid} is still pending (neither derived nor closed)"))
    return out


def check_receipts(snap):
    out = snap.state.stored("receipts")
    state = snap.state
    found = rows_in(state.db, "SELECT line, turn, cid FROM v_captures WHERE turn IS NOT NULL AND cid IN ({marks})",
                    sorted(snap.captures()[1]))
    missing = {}
    for _line, turn, cid in sorted(found):
        missing.setdefault(turn, []).append(verified.label(cid))
    for turn, line in rows_in(state.db, "SELECT turn, line FROM v_receipts WHERE turn IN ({marks}) ORDER BY turn",
                              sorted(missing)):
        out.append(Problem("error", "RECEIPT_CAPTURE_MISSING", "memory/v2/receipts.jsonl", line,
                           f"turn {verified.label(turn)}'s capture {', '.join(missing[turn])} is missing from sources/"))
    for turn, line in state.rows("SELECT turn, line FROM v_receipts WHERE uncaptured = 1 ORDER BY turn"):
        out.append(Problem("warning", "TURN_NOT_CAPTURED", "memory/v2/receipts.jsonl", line,
                           f"turn {verified.label(turn)} required a capture and has none"))
    for cid, line, turn in state.rows("SELECT cid, line, turn FROM v_captures WHERE unreceipted = 1 ORDER BY cid"):
        out.append(Problem("error", "CAPTURE_WITHOUT_RECEIPT", "memory/v2/ledger.jsonl", line,
                           f"capture {verified.label(cid)} names turn {verified.label(turn)}, which has no receipt"))
    return out


def check_quarantine(snap):
    return [Problem("warning", "INTERRUPTED_WRITE_RECOVERED", "memory/v2/quarantine.jsonl", line,
                    f"{obj.get('bytes')} unfinished bytes were moved out of {obj.get('file')} at {obj.get('moved_at')}")
            for line, _off, obj in snap.logs("quarantine.jsonl")]


def check_torn(snap):
    """Unfinished lines that derivation_ledger --repair set aside (<log>.torn): kept for a person to look at."""
    out = []
    for folder, entries in sorted(snap.state.dirs.items()):
        if not folder.startswith("memory/v2/") or folder.startswith("memory/v2/views/"):
            continue
        for name, st in entries:
            full = os.path.join(snap.root, folder + name)
            if name.endswith(".torn") and not stat.S_ISDIR(st.st_mode) and not (stat.S_ISLNK(st.st_mode) and os.path.isdir(full)):
                size = os.path.getsize(full) if os.path.isfile(full) else st.st_size
                out.append(Problem("warning", "TORN_TAIL_SET_ASIDE", folder + name, None,
                                   f"{size} bytes of unfinished lines left by interrupted writes; "
                                   "not data: look at them and delete the file"))
    return out


VALIDATORS = [check_read_problems, check_capture_files, check_sources_tree, check_private, check_ids,
              check_ledger_closure, check_receipts, check_quarantine, check_torn]


def _extra_validators():
    from .records_check import RECORD_VALIDATORS  # records arrive with the understanding model

    return RECORD_VALIDATORS


def run(root, require_closed_captures=False, from_scratch=False):
    with storage.snapshot_lock(root):  # captures are hashed under it too: a forget cannot pull one away mid-check
        state = verified.caught_up(root, from_scratch)
        kept = False
        try:
            snap = Snapshot(root, state)
            snap.require_closed = require_closed_captures
            problems = []
            for check in VALIDATORS + _extra_validators():
                problems.extend(check(snap))
            snap.checked = {
                "captures": state.rows("SELECT COUNT(*) FROM v_captures")[0][0],
                "receipts": (state.rows("SELECT entries FROM v_logs WHERE name='receipts.jsonl'") or [(0,)])[0][0],
                "records": state.rows("SELECT COUNT(*) FROM v_records")[0][0],
                "pending_captures": state.rows(f"SELECT COUNT(*) FROM v_captures WHERE status = 'pending' AND {LIVE}")[0][0],
                "rehashed": state.rehashed,
                "from_scratch": state.from_scratch,
            }
            kept = True
        finally:
            verified.done(state, keep=kept)
    return snap, problems


def status_of(problems):
    if any(p.severity == "error" for p in problems):
        return "failed"
    return "warnings" if problems else "clean"


def validate(root, strict=False, require_closed_captures=False, json=False, from_scratch=False):
    """Check the whole archive. `strict` makes warnings fail; `from_scratch` re-reads and re-hashes everything."""
    archive.require(root)
    snap, problems = run(root, require_closed_captures, from_scratch)
    problems.sort(key=lambda p: (p.severity != "error", p.path or "", p.line or 0))
    status = status_of(problems)
    out = {
        "status": status,
        "ok": status == "clean" or (status == "warnings" and not strict),
        "strict": strict,
        "errors": sum(p.severity == "error" for p in problems),
        "warnings": sum(p.severity == "warning" for p in problems),
        "problems": [str(p) for p in problems],
        "checked": snap.checked,
    }
    if json:
        out["problem_details"] = [p.to_dict() for p in problems]
    return out
