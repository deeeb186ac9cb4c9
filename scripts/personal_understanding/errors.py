"""The one error type. Every refusal carries a stable code, a message and a hint."""

from .patterns import Lazy

QUOTED_MAX = 100  # a refusal shows at most the start of a long value it quotes ...
MESSAGE_MAX = 600  # ... and is never longer than this: the caller pays for every byte of it
_QUOTED = Lazy(r"'([^'\n]{%d,})'|\"([^\"\n]{%d,})\"" % (QUOTED_MAX, QUOTED_MAX))


def _clipped(message):
    def short(match):
        mark, body = match.group(0)[0], match.group(1) or match.group(2)
        return f"{mark}{body[:60]}{mark}... ({len(body)} characters)"
    message = _QUOTED.sub(short, message)
    return message if len(message) <= MESSAGE_MAX else message[:MESSAGE_MAX - 3] + "..."


class PuError(Exception):
    """A refused or failed operation.

    `code` is stable (tests, agents and scripts match on it), `message` says what
    happened and where, `hint` says what to do next. `details` carries optional
    structured context (for example the conflicting ids).
    """

    def __init__(self, code, message, hint="", details=None):
        message = _clipped(message)
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details or {}

    def to_dict(self):
        out = {"code": self.code, "message": self.message, "hint": self.hint}
        if self.details:
            out["details"] = self.details
        return out


def usage(message, hint=""):
    """Bad arguments: the caller asked for something that cannot be done as asked."""
    return PuError("BAD_ARGUMENT", message, hint or "See the command's arguments (its help, or the tool's input schema).")


class Problem:
    """One finding of a check: where, what, how bad. Printed as `path:line: code message`."""

    __slots__ = ("severity", "code", "path", "line", "message")

    def __init__(self, severity, code, path, line, message):
        self.severity = severity  # "error" fails the archive; "warning" does not
        self.code = code
        self.path = path
        self.line = line
        self.message = message

    def __str__(self):
        where = f"{self.path}:{self.line}" if self.line else f"{self.path}"
        return f"{where}: {self.code} {self.message}"

    def __repr__(self):
        return f"Problem({self.severity!r}, {str(self)!r})"

    def to_dict(self):
        return {
            "severity": self.severity,
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "text": str(self),
        }
