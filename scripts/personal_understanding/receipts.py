"""Turn preflight: classify the message and append the turn's receipt.

A receipt fixes, before the agent answers, what this turn obliges it to do:
whether the message carries personal material (then it must be captured,
read against memory, derived or closed, and gated) and why, and whether it
asks the memory (`read_turn`: recall is then the turn's own read). Receipts are
append-only; a turn's later receipt (an upgrade to `full`) supersedes the
earlier one by version.
"""

from . import archive, config, credentials, paths, storage, timeutil
from .archive_index import open_index
from .classifier import CLASSIFIER_VERSION, classify
from .errors import PuError
from .followups import brief, due_followups
from .textinput import check_size, require_text, sha256_hex

TIERS = ("auto", "full", "skip")
FULL_ACTIONS = ["capture", "read", "derive_or_close", "session_check"]
LIGHT_ACTIONS = ["capture", "light_read", "derive_or_close", "session_check"]
READ_ACTIONS = ["recall"]  # a question to the memory with nothing new to save


def _decide(found, tier):
    """(requires, reasons, reasons_suppressed) for a classification and a requested tier."""
    reasons = list(found["reasons"])
    if tier == "full":
        if not found["requires_personal_understanding"]:
            reasons.append({"code": "declared-full", "evidence": "the agent declared this turn personal"})
        return True, reasons, []
    if tier == "skip":
        if found["requires_personal_understanding"]:
            return False, [], reasons  # recorded, never dropped silently
        return False, reasons, []
    return found["requires_personal_understanding"], reasons, []


def _actions(requires, low_information, read_turn):
    if not requires:
        return list(READ_ACTIONS) if read_turn else []
    return list(LIGHT_ACTIONS if low_information else FULL_ACTIONS)


def preflight(root, text, turn_id=None, session_id=None, tier="auto", now=None, with_context=True):
    """Write (or return) the receipt for one turn. `with_context=False` leaves out the turn's starting context."""
    archive.require(root)
    if tier not in TIERS:
        raise PuError("BAD_ARGUMENT", f"tier must be one of {', '.join(TIERS)}, not {tier!r}", "auto lets the classifier decide; full treats the turn as personal; skip needs a turn with nothing of the person.")
    text, data = require_text(text)
    check_size(data, config.load(root)["max_message_bytes"])
    if session_id is not None:
        paths.check_id(session_id, "session id")
    moment = now or timeutil.now()
    if turn_id:
        paths.check_id(turn_id, "turn id")
    digest = sha256_hex(data)
    found = classify(text)
    if found["signal"] == "credential" and tier == "full":
        raise credentials.not_saved(f"this message gives the value of a credential ({found['reasons'][0]['evidence']})")
    requires, reasons, suppressed = _decide(found, tier)

    with storage.archive_lock(root, "preflight") as lock_notice:
        index = open_index(root)
        turn_id = turn_id or paths.fresh_id(lambda: paths.new_id("turn", moment), lambda t: index.receipt(t) is not None)
        previous = index.receipt(turn_id)
        if previous is not None:
            if previous["message_sha256"] != digest:
                raise PuError(
                    "TURN_MESSAGE_MISMATCH",
                    f"turn {turn_id} already has a receipt for a different message",
                    "Each message is its own turn: use a new {arg:turn_id}.",
                    {"turn_id": turn_id, "receipt_sha256": previous["message_sha256"], "message_sha256": digest},
                )
            if tier == "skip" and previous["requires_personal_understanding"]:
                raise PuError(
                    "TIER_DOWNGRADE_REFUSED",
                    f"turn {turn_id} already requires personal understanding; it cannot be downgraded to skip",
                    "Finish the turn: capture, read, derive or close, then {cmd:session_check}.",
                )
        from .backup import reminder

        # Past every refusal: a refused call must not use up the day's reminder (it writes its marker).
        note = reminder(root, now=moment, once_a_day=True)
        if previous is not None:
            upgrade = tier == "full" and not previous["requires_personal_understanding"]
            if not upgrade:
                return _result(root, previous, repeated=True, notice=lock_notice, with_context=with_context,
                               backup_note=note)
            receipt = _receipt(turn_id, session_id or previous.get("session_id"), digest, len(text), moment, found,
                               tier, True, reasons, previous.get("reasons_suppressed", []), previous["version"] + 1)
            receipt["upgraded_from"] = previous["tier"]
        else:
            receipt = _receipt(turn_id, session_id, digest, len(text), moment, found, tier, requires, reasons,
                               suppressed, 1)
        storage.append_jsonl(root, paths.receipts_path(root), receipt)
    return _result(root, receipt, repeated=False, notice=lock_notice, with_context=with_context, backup_note=note)


def _receipt(turn_id, session_id, digest, chars, moment, found, tier_requested, requires, reasons, suppressed, version):
    return {
        "type": "receipt",
        "turn_id": turn_id,
        "version": version,
        "session_id": session_id,
        "created_at": timeutil.iso(moment),
        "message_sha256": digest,
        "message_chars": chars,
        "requires_personal_understanding": requires,
        "signal": found["signal"],
        "tier": "full" if requires else "skip",
        "tier_requested": tier_requested,
        "low_information": bool(found["low_information"]) and requires,
        "read_turn": bool(found.get("recall")),
        "reasons": reasons,
        "reasons_suppressed": suppressed,
        "vetoed": found.get("vetoed", []),
        "required_actions": _actions(requires, found["low_information"], found.get("recall")),
        "language": found.get("language"),
        "classifier_version": CLASSIFIER_VERSION,
    }


def _result(root, receipt, repeated, notice, with_context=True, backup_note=None):
    out = {"receipt": receipt, "turn_id": receipt["turn_id"], "repeated": repeated}
    due, _upcoming, _undated = due_followups(root)
    out["due_followups"] = [brief(root, item, with_prompt=True) for item in due]
    if receipt["requires_personal_understanding"] and with_context:
        from .context import turn_context

        out["context"] = turn_context(root)
    if backup_note:
        out["backup_reminder"] = backup_note
    if receipt["requires_personal_understanding"]:
        if receipt["low_information"]:
            out["next"] = ("Low-information turn: capture it now ({cmd:capture_user_update}), do a light read, answer naturally, "
                           "close the capture ({cmd:finalize_capture}), then {cmd:session_check}.")
        else:
            out["next"] = ("Capture the exact message ({cmd:capture_user_update}), read memory citing the capture, derive records "
                           "or close it ({cmd:finalize_capture}), then {cmd:session_check}.")
    elif receipt.get("read_turn"):
        out["next"] = ("Read turn: the message asks the memory. Recall with {cmd:retrieve_v2} for this turn "
                       "({arg:turn_id}) and answer from what it finds; nothing to save.")
    else:
        out["next"] = "Nothing to save for this turn; answer normally."
    warnings = [notice] if notice else []
    if receipt.get("reasons_suppressed") and not receipt["requires_personal_understanding"]:
        codes = ", ".join(dict.fromkeys(r["code"] for r in receipt["reasons_suppressed"]))
        warnings.append({"code": "PERSONAL_NOT_SAVED",
                         "message": f"this message reads as personal ({codes}); tier skip kept its words out of the archive",
                         "hint": "Ask for skip only when the user asked not to keep a message; to keep it, send the turn "
                                 "again with {arg:tier=full}."})
    if warnings:
        out["warnings"] = warnings
    return out
