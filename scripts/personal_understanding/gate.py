"""session_check: the hard gate before an agent may tell the user "saved".

Fast by default: it looks at the turn's receipt, the turn's captures (re-hashed),
the pending set, and the problems the index found in what was appended since it
last caught up. `full=True` runs the whole-archive validation instead (from its
verified watermark; `from_scratch=True` reads and hashes everything again).
"""

from . import archive, paths
from .archive_index import open_index
from .capture import verify_capture
from .errors import Problem, PuError
from .validate import status_of, validate


def session_check(root, turn_id, allow_warnings=False, full=False, from_scratch=False):
    archive.require(root)
    paths.check_id(turn_id, "turn id")
    index = open_index(root)
    receipt = index.receipt(turn_id)
    gates = {}
    next_steps = []
    if receipt is None:
        gates["turn_receipt"] = {"ok": False, "detail": f"no receipt for turn {turn_id}"}
        next_steps.append("Start the turn with {cmd:preflight_context} (the user's message) first.")
        required = False
    else:
        required = receipt["requires_personal_understanding"]
        gates["turn_receipt"] = {"ok": True, "tier": receipt["tier"], "signal": receipt["signal"],
                                 "requires_personal_understanding": required}

    capture_ids = index.turn_capture_ids(turn_id)
    captures = [index.capture(cid) for cid in capture_ids]
    problems = []
    for row in captures:
        try:
            intact = verify_capture(root, row["path"], row["utf8_sha256"])
        except PuError as exc:
            problems.append(Problem("error", exc.code, row["path"], None, exc.message))
            continue
        if not intact:
            problems.append(Problem("error", "CAPTURE_HASH_MISMATCH", row["path"], None,
                                    f"capture {row['capture_id']} no longer matches its SHA-256"))
    text_saved = any(r["kind"] == "text" and receipt and r["utf8_sha256"] == receipt["message_sha256"] for r in captures)
    if not required:
        gates["captured"] = {"ok": True, "required": False, "capture_ids": capture_ids}
        gates["closed"] = {"ok": True, "required": False}
    else:
        gates["captured"] = {"ok": text_saved, "required": True, "capture_ids": capture_ids}
        if not text_saved:
            next_steps.append("Save the exact message with {cmd:capture_user_update} for this turn.")
        open_ids = [r["capture_id"] for r in captures if r["status"] not in ("derived", "no-derivation-needed")]
        gates["closed"] = {"ok": text_saved and not open_ids, "required": True, "open_capture_ids": open_ids}
        if open_ids:
            next_steps.append("Close " + ", ".join(open_ids) + " with {cmd:finalize_capture} (derived after adding records, "
                              "or no-derivation-needed with a {arg:reason}).")

    if full or from_scratch:
        report = validate(root, from_scratch=from_scratch)
        structure = report["status"]
        structure_problems = report["problems"]
    else:
        problems.extend(index.problems())
        structure = status_of(problems)
        structure_problems = [str(p) for p in problems]
    structure_ok = structure == "clean" or (structure == "warnings" and allow_warnings)
    gates["structure"] = {"ok": structure_ok, "status": structure, "scope": "full" if full or from_scratch else "changed",
                          "problems": structure_problems}
    if not structure_ok:
        next_steps.append("Run {cmd:validate_memory} and fix the problems listed under gates.structure."
                          if structure == "failed" else "Structure has warnings: review them, or pass {arg:allow_warnings=true}.")

    pending = index.pending_capture_ids()
    if pending:
        turns = index.waiting_turns(turn_id)
        named = f" (turn {', '.join(turns)})" if turns else ""
        next_steps.append(f"{len(pending)} capture(s) in the archive are still pending{named}: close them with "
                          "{cmd:finalize_capture}.")
    met = all(g["ok"] for g in gates.values()) and not pending
    from .backup import reminder

    note = reminder(root)
    result = {
        "turn_id": turn_id,
        "may_claim_saved": met and required and text_saved,
        "obligations_met": met,
        "gates": gates,
        "pending_capture_ids": pending,
        "next": next_steps or (["Done: you may tell the user it is saved."] if required else
                               ["Nothing was required for this turn; do not claim anything was saved."]),
    }
    if note:
        result["backup_reminder"] = note
    return result
