"""turn: the first call of every user turn, for an agent mid-chat.

One call does what the fine-grained operations do in order: preflight (the
receipt), capture when the receipt requires it, and the read the agent needs
to answer: due follow-ups, what the archive already holds about this message,
and on a read turn (the message asks the memory) the recall itself. Calling
it again for the same turn and message returns the same receipt and capture.
"""

from . import capture, credentials, receipts
from .archive_index import open_index
from .errors import PuError
from .reads import probe_message
from .retrieval.lexical import asks_advice

MEMORY_LIMIT = 5
RECALL_LIMIT = 10


def is_read_turn(receipt):
    """The message asks the memory ("what do you remember about...", 我最近怎么样)."""
    return bool(receipt.get("read_turn", receipt.get("signal") == "recall"))


def _receipt_view(receipt):
    # Each cue once: the full receipt keeps every piece of evidence, the agent needs only which cues fired.
    return {"tier": receipt["tier"], "signal": receipt["signal"],
            "reasons": list(dict.fromkeys(r["code"] for r in receipt["reasons"])),
            "low_information": receipt["low_information"], "required_actions": receipt["required_actions"],
            "version": receipt["version"]}


def _save(root, text, turn_id, session_id):
    try:
        saved = capture.capture_text(root, text, turn_id, session_id=session_id)
        return saved["capture_id"], saved.get("utf8_sha256"), saved.get("warnings", [])
    except PuError as exc:
        if exc.code != "CAPTURE_ALREADY_SAVED":  # a retried call: the message is already saved, once
            raise
        return exc.details["capture_id"], None, []


TASK_READ_CHARS = 80  # a short request may be about someone the archive knows; a longer one carries pasted text


def asks_something(receipt, text):
    """A plain question or short request that is neither personal news nor technical ("小李最近怎么样",
    "what did the doctor say", "tell me about Jess"): the archive may hold its answer even where the
    words do not say they ask the memory. A request for advice reads even when technical ("can you
    suggest a laptop?"): what the user said about themselves (always on a Mac) is what the advice depends on."""
    if receipt["signal"] == "technical":
        return asks_advice(text)
    if receipt["signal"] != "non-personal":
        return False
    codes = {r["code"] for r in receipt["reasons"]}
    return "question" in codes or ("task" in codes and len(text) <= TASK_READ_CHARS)


CREDENTIAL_NEXT = "This message gives a password, PIN or key: credentials are never saved, so nothing of it was. " + \
    credentials.TELL_USER


FORGET_STEP = ("The user asks to forget something they said: the `recall` rows are what the archive holds that "
               "matches (for \"forget that\", the capture of what they said just before). Agree with them which one "
               "they mean, call {cmd:forget} with its {arg:id} (a dry run that lists every place it reaches), then "
               "again with {arg:confirm=true} once they agree.")


def _next(personal, read_turn, low_information, found=False, forget=False):
    if personal:
        step = ("Answer the user, then call {cmd:remember} with this {arg:turn_id}: the records this message adds "
                "(they cite its capture by default), or a specific {arg:reason} why nothing is new.")
        if low_information:
            step = "Little to derive here: answer naturally, then call {cmd:remember} with this {arg:turn_id} and a {arg:reason}."
        step += " Say it is saved only when that call returns may_claim_saved true."
        return step + " " + FORGET_STEP if forget else step
    if forget:
        return FORGET_STEP + " Nothing of this message was saved; do not claim anything was saved."
    if read_turn:
        return ("A question to the memory: answer from `recall` (rows say why they came up). Before quoting the user, "
                "read the words with {cmd:recall} {arg:mode=deep}. Nothing to save; do not claim anything was saved.")
    if found:
        return ("Nothing to save for this turn. The archive holds rows about this question (memories, each with why): "
                "use them where they answer it. Do not claim anything was saved.")
    return "Nothing to save for this turn; answer normally and do not claim anything was saved."


def turn(root, text, turn_id=None, session_id=None, tier="auto", limit=None):
    pre = receipts.preflight(root, text, turn_id=turn_id, session_id=session_id, tier=tier, with_context=False)
    receipt = pre["receipt"]
    turn_id = pre["turn_id"]
    personal = receipt["requires_personal_understanding"]
    read_turn = is_read_turn(receipt)
    forget = any(r["code"] == "forget-request" for r in receipt["reasons"])
    out = {"turn_id": turn_id, "receipt": _receipt_view(receipt), "read_turn": read_turn, "repeated": pre["repeated"],
           "captured": False, "capture_id": None, "due_followups": pre["due_followups"]}
    warnings = list(pre.get("warnings", []))
    if personal:
        capture_id, digest, notes = _save(root, text, turn_id, session_id)
        out.update(captured=True, capture_id=capture_id)
        if digest:
            out["utf8_sha256"] = digest
        warnings += notes
    if read_turn or personal:
        key = "recall" if read_turn else "memories"
        try:
            out[key] = probe_message(root, text, turn_id, limit or (RECALL_LIMIT if read_turn else MEMORY_LIMIT),
                                     wordless=forget)  # a request to forget keeps no words of what it names
        except PuError as exc:  # the message is saved either way; say what the read could not do
            out["read_error"] = exc.to_dict()
    elif asks_something(receipt, text):
        try:
            found = probe_message(root, text, turn_id, limit or MEMORY_LIMIT, words_if_found=True)
            if found.get("status") == "ok" and found.get("top"):
                out["memories"] = found  # only what matched: a general question costs the agent nothing
        except PuError as exc:
            out["read_error"] = exc.to_dict()
    out["next"] = CREDENTIAL_NEXT if receipt["signal"] == "credential" else \
        _next(personal, read_turn, receipt["low_information"], "memories" in out, forget)
    waiting = open_index(root).waiting_turns(turn_id)
    if waiting:
        warnings.append({"code": "TURNS_NOT_CLOSED",
                         "message": f"the words of turn {', '.join(waiting)} are saved but not yet closed",
                         "hint": "Call {cmd:remember} with each of those turn ids (records, or a reason): until then no "
                                 "turn may be said to be saved."})
    if pre.get("backup_reminder"):
        out["backup_reminder"] = pre["backup_reminder"]
    if warnings:
        out["warnings"] = warnings
    return out
