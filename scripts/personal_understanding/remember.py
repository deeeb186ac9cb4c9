"""remember: everything a turn's message adds, in one call, all or nothing; then the ledger and the gate.

The batch holds new records (entities and cards among them), state changes,
hypotheses, follow-ups and follow-up resolutions. Every item is checked
against the archive and against the rest of the batch before anything is
written: one refused item refuses the whole batch and leaves the archive as it
was, with every problem listed at once. Items may point at each other by the
ids they give (a record citing an entity created in the same batch). Records
that need words cite the turn's message unless they say otherwise.

Then the turn's capture is closed (derived when a record cites it, else
no-derivation-needed with the given reason) and session_check says whether the
agent may tell the user it is saved.
"""

from . import archive, commands, ledger, paths, schema, storage, timeutil
from . import records as record_ops
from .archive_index import open_index
from .capture import text_capture_of_turn
from .errors import PuError
from .followups import prepare_followup, prepare_resolution
from .gate import session_check
from .hypotheses import prepare_hypothesis

SECTIONS = ("records", "updates", "hypotheses", "followups", "resolve_followups")


class _Batch:
    """Validated items, waiting to be written; problems found on the way."""

    def __init__(self, root, index, capture_id, moment):
        self.root, self.index, self.capture_id, self.moment = root, index, capture_id, moment
        self.stamp = timeutil.iso(moment)
        self.problems = []
        self.records = {}  # id -> new record (records and hypotheses)
        self.versions = []  # every record version to append
        self.rows = []  # follow-up rows to append
        self.reports = []
        self.written = {name: [] for name in SECTIONS}

    def attempt(self, label, fn):
        try:
            return fn()
        except PuError as exc:
            problem = {"item": label, "code": exc.code, "message": exc.message, "hint": exc.hint}
            if exc.details:
                problem["details"] = exc.details
            self.problems.append(problem)
            return None

    def arguments(self, label, operation, item, defaults):
        if not isinstance(item, dict):
            raise PuError("BAD_ARGUMENT", f"{label} must be an object", "Each item is an object of named fields.")
        return commands.check_arguments(commands.get(operation), dict(defaults, **item))

    def keep(self, section, label, rec, extra, report):
        self.records[rec["id"]] = rec
        self.versions += [rec] + extra
        self.written[section].append(rec["id"])
        said = {k: report[k] for k in ("possible_duplicates", "warnings", "conflict") if report.get(k)}
        if said:
            self.reports.append(dict(said, item=label, id=rec["id"]))


def _needs_words(fields):
    return (schema.needs_capture(fields.get("kind")) and not schema.has_source(fields)
            and fields.get("fidelity") != "summary_only")


def _check_records(batch, items):
    planned = {}
    for n, item in enumerate(items):  # ids first, so items may point at records that come later in the batch
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            if item["id"] in planned:
                batch.problems.append({"item": f"records[{n}]", "code": "RECORD_ID_EXISTS",
                                       "message": f"id {item['id']} is given twice in this batch",
                                       "hint": "Give each new record its own id."})
            planned[item["id"]] = n
    pending = set(planned)
    seen = {}
    for n, item in enumerate(items):
        label = f"records[{n}]"

        def one(item=item, label=label):
            fields = batch.arguments(label, "add_record", item, {})
            allow_duplicate = fields.pop("allow_duplicate", False)
            if schema.rules()["kinds"].get(fields.get("kind"), {}).get("model_only"):
                raise PuError("RECORD_USE_ADD_HYPOTHESIS", f"{fields['kind']} records are model guesses",
                              "Put them under {arg:hypotheses}: they need supporting records, never a capture alone.")
            if _needs_words(fields):
                fields["capture_ids"] = [batch.capture_id]
            if not fields.get("id"):
                fields["id"] = paths.fresh_id(
                    lambda: schema.new_record_id(fields["kind"], batch.moment),
                    lambda rid: batch.index.record(rid) is not None or batch.index.tombstoned(rid) or rid in pending)
                pending.add(fields["id"])
            key = (fields["kind"], schema.normalized(fields.get("title")), schema.normalized(fields.get("summary")))
            if key in seen and not allow_duplicate:
                raise PuError("RECORD_DUPLICATE", f"{label} repeats {seen[key]}", "Keep one of them.")
            seen[key] = label
            rec, extra, report = record_ops.prepare(batch.root, batch.index, fields, batch.moment, allow_duplicate, pending)
            batch.keep("records", label, rec, extra, report)
        batch.attempt(label, one)
    return pending


def _check_updates(batch, items, pending):
    targets = set()
    for n, item in enumerate(items):
        label = f"updates[{n}]"

        def one(item=item, label=label):
            fields = batch.arguments(label, "update_state", item, {"capture_ids": [batch.capture_id]})
            target = fields.pop("id")
            if target in targets:
                raise PuError("STATE_NOT_CURRENT", f"{target} is changed twice in this batch", "Change it once.")
            targets.add(target)
            capture_ids = fields.pop("capture_ids")
            rec, extra, report = record_ops.prepare_update(batch.root, batch.index, target, capture_ids, batch.moment,
                                                        fields, pending)
            batch.keep("updates", label, rec, extra, report)
        batch.attempt(label, one)


def _check_hypotheses(batch, items, pending):
    for n, item in enumerate(items):
        label = f"hypotheses[{n}]"

        def one(item=item, label=label):
            fields = batch.arguments(label, "add_hypothesis", item, {})
            rec, extra, report = prepare_hypothesis(batch.root, batch.index, fields, batch.moment, batch.records)
            if rec["id"] in pending:
                raise PuError("RECORD_ID_EXISTS", f"id {rec['id']} is given twice in this batch", "Give each new record its own id.")
            pending.add(rec["id"])
            if not rec.get("contradicts"):
                report["warnings"] = report["warnings"] + ["no counter-evidence listed: look for what would contradict it"]
            batch.keep("hypotheses", label, rec, extra, report)
        batch.attempt(label, one)


def _check_followups(batch, new, resolutions):
    taken = set()
    for n, item in enumerate(new):
        label = f"followups[{n}]"

        def one(item=item, label=label):
            fields = batch.arguments(label, "add_followup", item, {"capture_id": batch.capture_id})
            row = prepare_followup(batch.index, batch.moment, taken=taken, **fields)
            taken.add(row["id"])
            batch.rows.append(row)
            batch.written["followups"].append(row["id"])
        batch.attempt(label, one)
    closing = set()
    for n, item in enumerate(resolutions):
        label = f"resolve_followups[{n}]"

        def one(item=item, label=label):
            fields = batch.arguments(label, "resolve_followup", item, {"capture_id": batch.capture_id})
            if fields["id"] in closing:
                raise PuError("FOLLOWUP_CLOSED", f"follow-up {fields['id']} is closed twice in this batch", "Close it once.")
            closing.add(fields["id"])
            row = prepare_resolution(batch.index, batch.stamp, **fields)
            batch.rows.append(row)
            batch.written["resolve_followups"].append(row["id"])
        batch.attempt(label, one)


def _disposition(batch, reason):
    """How the capture closes: (disposition or None to leave it, reason)."""
    cid = batch.capture_id
    cited = any(cid in (rec.get("capture_ids") or ()) or any(r.get("capture_id") == cid for r in rec.get("verbatim_refs") or ())
                for rec in batch.records.values())
    if cited or batch.index.records_citing(cid):
        return "derived", reason
    status = (batch.index.capture(cid) or {}).get("status")
    if batch.problems or (status == "no-derivation-needed" and reason is None):
        return None, None  # refused anyway (items that would cite it may be among the refused), or already closed
    try:
        return "no-derivation-needed", ledger.check_reason(reason)
    except PuError:
        guessed = ("A hypothesis never cites the message (it rests on records): add a record of what the user said, "
                   "such as a fact, to cite it. ") if batch.written["hypotheses"] else ""
        batch.problems.append({
            "item": "reason", "code": "LEDGER_REASON_REQUIRED",
            "message": "nothing in the batch cites the message, so closing it needs a specific reason",
            "hint": guessed + "Add the {arg:records} this message supports, or pass a {arg:reason} such as 'greeting "
                    "only' or 'already covered by event-...'."})
        return None, None


def _order(problem):
    section, _, rest = problem["item"].partition("[")
    rank = SECTIONS.index(section) if section in SECTIONS else len(SECTIONS)
    return rank, int(rest.rstrip("]") or 0)


def _refuse(problems):
    problems = sorted(problems, key=_order)
    first = problems[0]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    raise PuError(first["code"], f"{first['item']}: {first['message']}{more}; nothing was written",
                  (first["hint"] + " " if first["hint"] else "") + "Fix the items listed under details and send the whole batch again.",
                  {"problems": problems})


def _capture_of(index, turn_id, receipt, capture_id):
    if capture_id is not None:
        paths.check_id(capture_id, "capture id")
        row = index.capture(capture_id)
        if row is None or row.get("status") == "forgotten" or row.get("turn_id") != turn_id:
            raise PuError("REMEMBER_CAPTURE_UNKNOWN", f"capture {capture_id} is not a saved capture of turn {turn_id}",
                          "Leave {arg:capture_id} out: the batch then cites the turn's own message.")
        return capture_id
    found = text_capture_of_turn(index, turn_id)
    if found is None and receipt["requires_personal_understanding"]:
        raise PuError("REMEMBER_NOT_CAPTURED", f"the message of turn {turn_id} is not saved",
                      "Call {cmd:turn} with the user's message first: it saves it.")
    return found


def remember(root, turn_id, records=None, updates=None, hypotheses=None, followups=None, resolve_followups=None,
             reason=None, capture_id=None, allow_warnings=False, now=None):
    archive.require(root)
    paths.check_id(turn_id, "turn id")
    moment = now or timeutil.now()
    sections = {"records": records or [], "updates": updates or [], "hypotheses": hypotheses or [],
                "followups": followups or [], "resolve_followups": resolve_followups or []}
    with storage.archive_lock(root, "remember") as notice:
        index = open_index(root)
        receipt = index.receipt(turn_id)
        if receipt is None:
            raise PuError("TURN_NO_RECEIPT", f"turn {turn_id} has no receipt",
                          "Call {cmd:turn} with the user's message first; pass the turn_id it returns.")
        cid = _capture_of(index, turn_id, receipt, capture_id)
        if cid is None:
            if any(sections.values()):
                raise PuError("REMEMBER_NOT_PERSONAL", f"turn {turn_id} was preflighted as {receipt['tier']}: its message "
                              "is not saved, so nothing can cite it",
                              "If the message is personal after all, call {cmd:turn} again with the same {arg:turn_id} "
                              "and {arg:tier=full}, then remember.")
            disposition = None
            batch = _Batch(root, index, None, moment)
        else:
            batch = _Batch(root, index, cid, moment)
            pending = _check_records(batch, sections["records"])
            _check_updates(batch, sections["updates"], pending)
            _check_hypotheses(batch, sections["hypotheses"], pending)
            _check_followups(batch, sections["followups"], sections["resolve_followups"])
            disposition, reason = _disposition(batch, reason)
        if batch.problems:
            _refuse(batch.problems)
        if batch.versions:
            record_ops.append_versions(root, batch.versions)
        if batch.rows:
            storage.append_jsonl(root, paths.followups_path(root), batch.rows)
        index.refresh()
        closed = ledger.finalize(root, cid, disposition, reason, now=moment) if disposition else None
    gate = session_check(root, turn_id, allow_warnings=allow_warnings)
    out = {"turn_id": turn_id, "capture_id": cid, "written": batch.written, "items": batch.reports,
           "ledger": ({"status": closed["status"], "record_ids": closed["record_ids"], "changed": closed["changed"]}
                      if closed else {"status": (index.capture(cid) or {}).get("status") if cid else None, "changed": False}),
           "may_claim_saved": gate["may_claim_saved"],
           "gate": {"obligations_met": gate["obligations_met"], "gates": {k: v["ok"] for k, v in gate["gates"].items()},
                    "pending_capture_ids": gate["pending_capture_ids"]},
           "next": gate["next"]}
    if notice:
        out["warnings"] = [notice]
    return out
