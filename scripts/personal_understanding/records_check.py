"""Validators for derived records and follow-ups (see validate.py for the runner).

They ask the verified state (verified.py): the latest version of each record, its links
and the problems its line had when it was read.
"""

from . import timeutil
from .archive_index import rows_in
from .errors import Problem
from .verified import key


def check_versions(snap):
    """Every id's versions run 1, 2, 3... in file order; a repeat is a duplicate id."""
    return snap.state.stored("versions")


def check_fields(snap):
    state = snap.state
    out = [Problem("error", code, path, line, message) for code, message, path, line in state.rows(
        "SELECT p.code, p.message, r.path, r.line FROM v_record_problems p JOIN v_records r ON r.rid = p.rid "
        "ORDER BY p.rid, p.pos")]
    for rid, cid, path, line in state.rows(
            "SELECT c.rid, c.cid, r.path, r.line FROM v_cites c INDEXED BY v_cites_missing JOIN v_records r ON r.rid = c.rid "
            "WHERE c.missing = 1 "
            "AND r.forgotten = 0 AND c.cid NOT IN (SELECT id FROM temp.v_tombs) ORDER BY c.rid, c.cid"):
        out.append(Problem("error", "RECORD_CITES_MISSING_CAPTURE", path, line, f"{rid} cites capture {cid}, which does not exist"))
    return out


def check_references(snap):
    return [Problem("warning", "DANGLING_REFERENCE", path, line, f"{rid}.{field} points at {ref}, which does not exist")
            for rid, field, ref, path, line in snap.state.rows(
                "SELECT f.rid, f.field, f.ref, r.path, r.line FROM v_refs f INDEXED BY v_refs_dangling JOIN v_records r ON r.rid = f.rid "
                "WHERE f.dangling = 1 AND f.ref NOT IN (SELECT id FROM temp.v_tombs) ORDER BY f.rid, f.pos")]


def _cycles(records, edges, code, label):
    """Depth-first over `edges` ({id: [next ids]}); only ids with edges can be on a cycle."""
    out, done = [], set()
    for start in sorted(edges):
        path, on_path, stack = [], set(), [(start, iter(edges.get(start, ())))]
        if start in done:
            continue
        path.append(start)
        on_path.add(start)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                on_path.discard(node)
                done.add(node)
                path.pop()
                continue
            if child in on_path:
                cycle = path[path.index(child):] + [child]
                display, line = records[child]
                out.append(Problem("error", code, display, line, f"{label} cycle: {' -> '.join(cycle)}"))
                continue
            if child in done or child not in records:
                continue
            path.append(child)
            on_path.add(child)
            stack.append((child, iter(edges.get(child, ()))))
    return out


def check_cycles(snap):
    out = []
    for rel, code, label in (("supersedes", "SUPERSEDE_CYCLE", "supersedes"), ("redirect", "REDIRECT_CYCLE", "redirect")):
        edges, records = {}, {}
        for rid, target, path, line, tpath, tline in snap.state.rows(
                "SELECT e.rid, e.target, r.path, r.line, t.path, t.line FROM v_edges e JOIN v_records r ON r.rid = e.rid "
                "LEFT JOIN v_records t ON t.rid = e.target WHERE e.rel = ? ORDER BY e.rid, e.pos", (rel,)):
            edges.setdefault(rid, []).append(target)
            records[rid] = (path, line)
            if tpath is not None:
                records[target] = (tpath, tline)
        out += _cycles(records, edges, code, label)
    return out


def check_summary_debt(snap):
    rows = snap.state.rows("SELECT path, line, (SELECT COUNT(*) FROM v_records WHERE summary_debt = 1) FROM v_records "
                           "WHERE summary_debt = 1 ORDER BY path, line LIMIT 1")
    if not rows:
        return []
    display, line, count = rows[0]
    return [Problem("warning", "SUMMARY_DEBT", display, line,
                    f"{count} record(s) rest on summaries without the user's words (fidelity summary_only)")]


def check_hypotheses(snap):
    return [Problem("warning", "HYPOTHESIS_WEAK_SUPPORT", path, line, f"{rid} has fewer than two supporting records")
            for rid, path, line in snap.state.rows("SELECT rid, path, line FROM v_records WHERE weak = 1 ORDER BY rid")]


def check_followups(snap):
    out, latest = [], {}
    for line, _off, item in snap.logs("followups.jsonl"):
        if isinstance(item.get("id"), str):
            latest[item["id"]] = (line, item)
    cited = sorted({key(item.get("capture_id")) for _l, item in latest.values() if item.get("capture_id")})
    known = {row[0] for row in rows_in(snap.state.db, "SELECT cid FROM v_captures WHERE cid IN ({marks})", cited)}
    now = timeutil.now()
    for fid, (line, item) in sorted(latest.items()):
        where = "memory/v2/followups.jsonl"
        if not item.get("capture_id"):
            out.append(Problem("warning", "FOLLOWUP_NO_SOURCE", where, line, f"{fid} cites no capture"))
        elif key(item["capture_id"]) not in known and item["capture_id"] not in snap.tombstones:
            out.append(Problem("warning", "FOLLOWUP_NO_SOURCE", where, line, f"{fid} cites capture {item['capture_id']}, which does not exist"))
        if item.get("status") == "open":
            if not item.get("due_at") and not item.get("due_rule"):
                out.append(Problem("warning", "FOLLOWUP_NO_DUE", where, line, f"{fid} has no due date or rule"))
            elif item.get("due_at") and timeutil.parse_instant(item["due_at"]) < now:
                out.append(Problem("warning", "FOLLOWUP_PAST_DUE", where, line, f"{fid} was due {item['due_at']} and is still open"))
        if item.get("status") not in ("open", "answered", "declined", "resolved"):
            out.append(Problem("error", "FOLLOWUP_INVALID", where, line, f"{fid} has status {item.get('status')!r}"))
    return out


RECORD_VALIDATORS = [check_versions, check_fields, check_references, check_cycles, check_summary_debt, check_hypotheses,
                     check_followups]
