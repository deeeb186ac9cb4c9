"""Verbatim capture: the user's exact words, saved once, hashed, read back.

A capture is one write-once JSON file under sources/conversation/YYYY/MM/.
It is registered in the derivation ledger (memory/v2/ledger.jsonl) as
`pending`; that ledger line is the commit point. If anything fails before it,
the file is removed again, so no half-saved capture remains.
"""

import json
import unicodedata
from pathlib import Path

from . import archive, config, credentials, inputs, paths, storage, timeutil
from .archive_index import open_index
from .errors import PuError
from .patterns import Lazy
from .textinput import check_size, require_text, sha256_hex
from .tiers import check_capacity

CAPTURE_FORMAT = 1


def _failed(exc):
    """Every failure after the receipt checks says plainly that the capture FAILED."""
    if isinstance(exc, PuError) and exc.message.startswith("capture FAILED"):
        return exc
    code = exc.code if isinstance(exc, PuError) else "CAPTURE_FAILED"
    message = exc.message if isinstance(exc, PuError) else str(exc)
    hint = exc.hint if isinstance(exc, PuError) else ""
    return PuError(code, f"capture FAILED: {message}", hint or "Nothing was saved; retry the capture.")


def _taken(index, capture_id):
    return index.capture(capture_id) is not None or index.tombstoned(capture_id)


def _check_new_id(index, capture_id):
    paths.check_id(capture_id, "capture id")
    if index.capture(capture_id) is not None:
        raise PuError("CAPTURE_ID_EXISTS", f"capture {capture_id} already exists", "Captures are never overwritten; a correction is a new capture with a new id.")
    if index.count("SELECT COUNT(*) FROM tombstones WHERE id=?", (capture_id,)):
        raise PuError("CAPTURE_ID_FORGOTTEN", f"capture id {capture_id} was forgotten and cannot be reused", "Use a new capture id.")


def text_capture_of_turn(index, turn_id):
    """The capture holding a turn's message (None when it is not saved)."""
    for capture_id in index.turn_capture_ids(turn_id):
        row = index.capture(capture_id) or {}
        if row.get("kind") == "text" and row.get("status") != "forgotten":
            return capture_id
    return None


def _turn_receipt(index, turn_id):
    receipt = index.receipt(turn_id)
    if receipt is None:
        raise PuError("CAPTURE_NO_RECEIPT", f"turn {turn_id} has no preflight receipt", "Run {cmd:preflight_context} for this message first; its receipt decides whether to capture.")
    if receipt.get("signal") == "credential":
        raise credentials.not_saved(f"turn {turn_id} gives a password, PIN or key")
    if not receipt["requires_personal_understanding"]:
        raise PuError(
            "CAPTURE_NOT_REQUIRED",
            f"turn {turn_id} was preflighted as {receipt['tier']} ({receipt['signal']}); it does not call for a capture",
            "If the message is personal after all, run {cmd:preflight_context} again with {arg:tier=full} for the same turn, then capture.",
        )
    return receipt


def capture_payload(doc):
    """The bytes of a capture file."""
    return (json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


def captured_event(doc, relpath, at=None):
    """The ledger line that registers a capture (the commit point of a capture)."""
    return {
        "event": "captured",
        "capture_id": doc["capture_id"],
        "path": relpath,
        "kind": doc.get("kind"),
        "utf8_sha256": doc.get("utf8_sha256") or doc.get("sha256"),
        "turn_id": doc.get("turn_id"),
        "session_id": doc.get("session_id"),
        "captured_at": doc.get("captured_at"),
        "occurred_at": doc.get("occurred_at"),
        "chars": doc.get("chars", 0),
        "speaker": doc.get("speaker"),
        "source": doc.get("source"),
        "source_ref": doc.get("source_ref"),
        "at": at or doc.get("captured_at"),
    }


def store_capture(root, doc, data_check, index):
    """Write one capture document and register it. Caller holds the lock.

    `data_check(stored_doc)` re-verifies the read-back document.
    """
    relpath = paths.capture_relpath(doc["capture_id"], doc["captured_at"])
    target = paths.inside_root(root, relpath)
    payload = capture_payload(doc)
    check_capacity(root, len(payload) + doc.get("bytes", 0) * (doc["kind"] == "attachment"))
    storage.write_once(root, target, payload)
    try:
        with open(target, "rb") as handle:
            stored = json.loads(handle.read().decode("utf-8"))
        if stored != doc or not data_check(stored):
            raise PuError("CAPTURE_VERIFY_FAILED", f"read-back of {relpath} does not match what was written", "The disk returned different bytes; check the disk and retry.")
        storage.append_jsonl(root, paths.ledger_events_path(root), captured_event(doc, relpath))
    except BaseException:
        storage.remove_file(root, target)  # not registered: leave nothing half-saved
        raise
    return relpath


def _saved(capture_id, relpath, turn_id, lock_notice, **fields):
    """What a successful capture reports (it was written, read back and registered)."""
    out = {"captured": True, "verified": True, "capture_id": capture_id, "path": relpath}
    out.update(fields)
    out.update(turn_id=turn_id, ledger_status="pending")
    if lock_notice:
        out["warnings"] = [lock_notice]
    return out


def capture_text(root, text, turn_id, capture_id=None, session_id=None, occurred_at=None, source="chat",
                 speaker="user", now=None):
    """Save one user message verbatim for a turn whose receipt requires it."""
    archive.require(root)
    paths.check_id(turn_id, "turn id")
    text, data = require_text(text)
    check_size(data, config.load(root)["max_message_bytes"])
    if session_id is not None:
        paths.check_id(session_id, "session id")
    if occurred_at is not None:
        # kept in the offset it was given in: the time as the person lived it
        occurred_at = timeutil.iso_as_given(timeutil.parse_instant(occurred_at, "occurred_at", keep_offset=True))
    digest = sha256_hex(data)
    moment = now or timeutil.now()
    with storage.archive_lock(root, "capture") as lock_notice:
        index = open_index(root)
        receipt = _turn_receipt(index, turn_id)
        if receipt["message_sha256"] != digest:
            raise PuError(
                "CAPTURE_HASH_MISMATCH",
                f"the text's SHA-256 {digest[:12]}… differs from the receipt's {receipt['message_sha256'][:12]}… for turn {turn_id}",
                "Capture the complete message exactly as preflighted (same bytes, no trimming or edits).",
            )
        for existing in index.turn_capture_ids(turn_id):
            row = index.capture(existing)
            if row and row.get("utf8_sha256") == digest and row.get("kind") == "text":
                raise PuError("CAPTURE_ALREADY_SAVED", f"turn {turn_id}'s message is already saved as {existing}",
                              f"Use capture id {existing}; a message is saved once.", {"capture_id": existing})
        capture_id = capture_id or paths.fresh_id(lambda: paths.new_id("cap", moment), lambda c: _taken(index, c))
        _check_new_id(index, capture_id)
        doc = {
            "format": CAPTURE_FORMAT,
            "capture_id": capture_id,
            "kind": "text",
            "speaker": speaker,
            "text": text,
            "utf8_sha256": digest,
            "bytes": len(data),
            "chars": len(text),
            "captured_at": timeutil.iso(moment),
            "occurred_at": occurred_at,
            "session_id": session_id if session_id is not None else receipt.get("session_id"),
            "turn_id": turn_id,
            "source": source,
        }
        try:
            relpath = store_capture(root, doc, lambda d: sha256_hex(d["text"].encode("utf-8")) == digest, index)
        except BaseException as exc:
            raise _failed(exc) from None
    return _saved(capture_id, relpath, turn_id, lock_notice, utf8_sha256=digest, bytes=len(data), chars=len(text),
                  next="Read memory citing this capture ({arg:capture_id}), then add records citing it or close it with "
                       "{cmd:finalize_capture} as no-derivation-needed.")


_BAD_NAME = Lazy(r"[\x00-\x1f\x7f/\\:]")


def check_attachment_name(name):
    name = unicodedata.normalize("NFC", name or "")
    if not name or name in (".", "..") or _BAD_NAME.search(name) or name.startswith("..") or len(name) > 255:
        raise PuError(
            "ATTACHMENT_BAD_NAME",
            f"attachment name {name!r} is not a plain file name",
            "Give a bare file name such as photo.jpg: no folders, no '..', no absolute paths, no control characters.",
        )
    return name


def capture_attachment(root, file, turn_id, name=None, capture_id=None, session_id=None, now=None):
    """Keep an attachment's original bytes (addressed by SHA-256) as its own capture."""
    import mimetypes  # here, not at the top: every CLI call imports this module, few add a file

    archive.require(root)
    paths.check_id(turn_id, "turn id")
    source = Path(file)
    if source.is_symlink():
        raise PuError("ATTACHMENT_SYMLINK", f"{file} is a symbolic link", "Pass the real file, not a link to it.")
    name = check_attachment_name(name if name is not None else source.name)
    data = inputs.read_file(source, config.load(root)["max_attachment_bytes"], "attachment",
                            unreadable="ATTACHMENT_NOT_FOUND", too_large="ATTACHMENT_TOO_LARGE")
    digest = sha256_hex(data)
    moment = now or timeutil.now()
    with storage.archive_lock(root, "capture_attachment") as lock_notice:
        index = open_index(root)
        receipt = _turn_receipt(index, turn_id)
        capture_id = capture_id or paths.fresh_id(lambda: paths.new_id("att", moment), lambda c: _taken(index, c))
        _check_new_id(index, capture_id)
        blob_rel = paths.attachment_relpath(digest)
        blob = paths.inside_root(root, blob_rel)
        reused = blob.exists()
        try:
            if reused:
                if sha256_hex(blob.read_bytes()) != digest:
                    raise PuError("ATTACHMENT_BLOB_CORRUPT", f"stored {blob_rel} no longer matches its hash", "Check the archive with {cmd:validate_memory}; restore the file from a backup.")
            else:
                storage.write_once(root, blob, data)
                if sha256_hex(blob.read_bytes()) != digest:
                    storage.remove_file(root, blob)
                    raise PuError("CAPTURE_VERIFY_FAILED", f"read-back of {blob_rel} does not match", "Check the disk and retry.")
            doc = {
                "format": CAPTURE_FORMAT,
                "capture_id": capture_id,
                "kind": "attachment",
                "speaker": "user",
                "name": name,
                "media_type": mimetypes.guess_type(name)[0] or "application/octet-stream",
                "sha256": digest,
                "bytes": len(data),
                "blob": blob_rel,
                "captured_at": timeutil.iso(moment),
                "session_id": session_id if session_id is not None else receipt.get("session_id"),
                "turn_id": turn_id,
                "source": "attachment",
            }
            try:
                relpath = store_capture(root, doc, lambda d: d["sha256"] == digest, index)
            except BaseException:
                if not reused:
                    storage.remove_file(root, blob)
                raise
        except BaseException as exc:
            raise _failed(exc) from None
    return _saved(capture_id, relpath, turn_id, lock_notice, blob=blob_rel, sha256=digest, bytes=len(data), name=name,
                  reused_existing_bytes=reused)


def read_capture(root, relpath):
    """Load a stored capture document (raises PuError when missing or unreadable)."""
    target = paths.inside_root(root, relpath)
    try:
        with open(target, "rb") as handle:
            return json.loads(handle.read().decode("utf-8"))
    except FileNotFoundError:
        raise PuError("CAPTURE_MISSING", f"{relpath} is missing", "Restore it from a backup ({cmd:restore_archive}).") from None
    except (ValueError, UnicodeDecodeError):
        raise PuError("CAPTURE_UNREADABLE", f"{relpath} is not valid JSON", "Restore it from a backup ({cmd:restore_archive}).") from None


def checked_text(root, relpath, expected_sha):
    """A text capture's words, only while they still hash to the SHA-256 the ledger registered.

    Every read that serves words as the user's own goes through here: one file,
    one hash. A changed file raises CAPTURE_TAMPERED; its text is never served.
    """
    doc = read_capture(root, relpath)
    if doc.get("kind") == "attachment":
        raise PuError("CAPTURE_NOT_TEXT", f"{relpath} is an attachment: it keeps bytes, not words to quote",
                      "Quote and cite the user's text captures; an attachment's derived text (OCR, transcript) is a "
                      "record of its own, not the user's words.", {"path": relpath})
    text = doc.get("text")
    if not isinstance(text, str) or sha256_hex(text.encode("utf-8", "surrogatepass")) != expected_sha:
        raise PuError("CAPTURE_TAMPERED", f"{relpath} no longer matches the SHA-256 registered when it was saved",
                      "Its words are not served as the user's. Run {cmd:validate_memory}; restore the file from a "
                      "backup with {cmd:restore_archive}, or ask the user what they said.", {"path": relpath})
    return text


def tampered_note(relpath):
    return {"fidelity": "tampered", "path": relpath,
            "note": "this capture's file changed after it was saved (SHA-256 mismatch): its text is withheld and "
                    "must not be quoted as the user's words"}


def attachment_bytes(root, doc, expected_sha):
    """The file of an attachment's bytes: the one path its registered SHA-256 names, inside the root.

    None when its document names another place (the document was changed): bytes are never read
    from wherever a document points.
    """
    try:
        relpath = paths.attachment_relpath(expected_sha)
    except PuError:
        return None
    return paths.inside_root(root, relpath) if doc.get("blob") == relpath else None


def verify_capture(root, relpath, expected_sha):
    """True when the stored capture still hashes to what was registered."""
    doc = read_capture(root, relpath)
    if doc.get("kind") == "attachment":
        blob = attachment_bytes(root, doc, expected_sha)
        return (blob is not None and blob.is_file() and sha256_hex(blob.read_bytes()) == expected_sha
                and doc.get("sha256") == expected_sha)
    text = doc.get("text")
    return isinstance(text, str) and sha256_hex(text.encode("utf-8")) == expected_sha == doc.get("utf8_sha256")
