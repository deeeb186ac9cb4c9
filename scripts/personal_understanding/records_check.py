"""Validators for derived records and follow-ups (see validate.py for the runner)."""

from . import schema, timeutil
from .errors import Problem

REF_FIELDS = ("entity_refs", "related_ids", "supports", "contradicts", "supersedes", "before_ids", "after_ids")


def check_versions(snap):
    """Every id's versions run 1, 2, 3... in file order; a repeat is a duplicate id."""
    out, seen = [], {}
    for display, line, rec in snap.record_lines:
        rid, version = rec.get("id"), rec.get("version")
        if not isinstance(rid, str) or not isinstance(version, int):
            out.append(Problem("error", "RECORD_INVALID", display, line, "record line needs a string id and an integer version"))
            continue
        last = seen.get(rid)
        if last is not None and version <= last[0]:
            out.append(Problem("error", "DUPLICATE_ID", display, line, f"{rid} version {version} already exists (line {last[1]} of {last[2]})"))
        elif version != (last[0] + 1 if last else 1):
            out.append(Problem("error", "RECORD_VERSION_GAP", display, line, f"{rid} jumps to version {version}"))
        seen[rid] = (max(version, last[0]) if last else version, line, display)
    return out


def check_fields(snap):
    out = []
    for rid, (display, line, rec) in sorted(snap.records.items()):
        for field, message in schema.check_record(rec):
            out.append(Problem("error", "RECORD_INVALID", display, line, f"{rid}: {field} {message}"))
        if rec.get("status") in ("forgotten",):
            continue
        if schema.needs_capture(rec.get("kind")) and not schema.has_source(rec) and rec.get("fidelity") != "summary_only":
            out.append(Problem("error", "RECORD_WITHOUT_CAPTURE", display, line,
                               f"{rid} states something but cites no capture (and is not marked summary_only)"))
        for cid in sorted(schema.cited_captures(rec)):
            if cid not in snap.captures and cid not in snap.tombstones:
                out.append(Problem("error", "RECORD_CITES_MISSING_CAPTURE", display, line, f"{rid} cites capture {cid}, which does not exist"))
    return out



def check_references(snap):
    out = []
    for rid, (display, line, rec) in sorted(snap.records.items()):
        for field in REF_FIELDS:
            for ref in rec.get(field) or ():
                if isinstance(ref, str) and ref not in snap.records and ref not in snap.tombstones:
                    out.append(Problem("warning", "DANGLING_REFERENCE", display, line, f"{rid}.{field} points at {ref}, which does not exist"))
    return out


def _cycles(snap, next_ids, code, label):
    out, done = [], set()
    for start in sorted(snap.records):
        path, on_path, stack = [], set(), [(start, iter(next_ids(start)))]
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
                display, line, _ = snap.records[child]
                out.append(Problem("error", code, display, line, f"{label} cycle: {' -> '.join(cycle)}"))
                continue
            if child in done or child not in snap.records:
                continue
            path.append(child)
            on_path.add(child)
            stack.append((child, iter(next_ids(child))))
    return out


def check_cycles(snap):
    def supersedes(rid):
        return [r for r in snap.records[rid][2].get("supersedes") or () if isinstance(r, str)]

    def redirects(rid):
        target = snap.records[rid][2].get("redirect_to")
        return [target] if isinstance(target, str) else []

    return _cycles(snap, supersedes, "SUPERSEDE_CYCLE", "supersedes") + _cycles(snap, redirects, "REDIRECT_CYCLE", "redirect")


def check_summary_debt(snap):
    debt = [(d, l, r) for d, l, r in snap.records.values() if r.get("fidelity") == "summary_only" and r.get("status") != "forgotten"]
    if not debt:
        return []
    display, line, _ = min(debt, key=lambda x: (x[0], x[1]))
    return [Problem("warning", "SUMMARY_DEBT", display, line,
                    f"{len(debt)} record(s) rest on summaries without the user's words (fidelity summary_only)")]


def check_hypotheses(snap):
    out = []
    for rid, (display, line, rec) in sorted(snap.records.items()):
        if rec.get("kind") in ("hypothesis", "intent") and len(set(rec.get("supports") or ())) < 2:
            out.append(Problem("warning", "HYPOTHESIS_WEAK_SUPPORT", display, line, f"{rid} has fewer than two supporting records"))
    return out


def check_followups(snap):
    out, latest = [], {}
    for line, _off, item in snap.logs["followups.jsonl"]:
        if isinstance(item.get("id"), str):
            latest[item["id"]] = (line, item)
    now = timeutil.now()
    for fid, (line, item) in sorted(latest.items()):
        where = "memory/v2/followups.jsonl"
        if not item.get("capture_id"):
            out.append(Problem("warning", "FOLLOWUP_NO_SOURCE", where, line, f"{fid} cites no capture"))
        elif item["capture_id"] not in snap.captures and item["capture_id"] not in snap.tombstones:
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
