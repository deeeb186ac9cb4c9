"""Checks every incoming message goes through before anything is hashed or stored."""

from .errors import PuError

try:  # the interpreter's own SHA-256 hashes a message as fast as OpenSSL's, without loading OpenSSL (ms a process)
    from _sha2 import sha256 as _builtin_sha256  # Python 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256 as _builtin_sha256
    except ImportError:
        _builtin_sha256 = None
BUILTIN_MAX = 1 << 20  # larger data (attachments, backups) goes to hashlib, several times faster on it


def utf8_bytes(text, what="message"):
    """The exact UTF-8 bytes of `text`; refuses text that has none (lone surrogates)."""
    if isinstance(text, bytes):
        try:
            text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PuError("INVALID_UTF8", f"the {what} is not valid UTF-8 (byte {exc.start})", "Send the text as UTF-8; nothing was stored.") from None
        return text
    if not isinstance(text, str):
        raise PuError("BAD_ARGUMENT", f"the {what} must be a string", "Pass the text as a JSON string.")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PuError("INVALID_UTF8", f"the {what} contains characters that are not valid UTF-8 (position {exc.start})", "Send the text as UTF-8; nothing was stored.") from None


def decode_utf8(data, what="message"):
    utf8_bytes(data, what)
    return data.decode("utf-8")


def sha256_digest(data):
    if _builtin_sha256 is not None and len(data) < BUILTIN_MAX:
        return _builtin_sha256(data).digest()
    import hashlib

    return hashlib.sha256(data).digest()


def sha256_hex(data):
    return sha256_digest(data).hex()


def require_text(text, what="message"):
    """Non-empty, valid UTF-8. Returns (text, bytes)."""
    data = utf8_bytes(text, what)
    if isinstance(text, bytes):
        text = data.decode("utf-8")
    if not text.strip():
        raise PuError("EMPTY_MESSAGE", f"the {what} is empty", "There is nothing to save; skip the capture for an empty turn.")
    return text, data


def check_size(data, limit, what="message"):
    if limit and len(data) > limit:
        raise PuError(
            "MESSAGE_TOO_LARGE",
            f"the {what} is {len(data)} bytes, over the cap of {limit} bytes",
            "Split it into parts (each its own turn), or raise max_message_bytes in memory/v2/config.json.",
        )
