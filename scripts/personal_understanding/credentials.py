"""Credentials in a message: passwords, PINs, keys and tokens the archive must never hold.

A message is held to carry a credential when it names one and gives its value
("my password for the gym app is hunter2", "银行卡密码是123456", "PIN: 4821"), or when
it holds a token in a form issued by a known service (an OpenAI or GitHub key, an
AWS access key id, a Slack token, a PEM private key). Words about a password
without one ("I forgot my password again") are ordinary news and are saved.

A value must look like a secret: a digit or a symbol in it, or quotes around it.
"my password is too weak" names no value; a missed credential is saved like any
message, while a message wrongly held to carry one is lost, so the rule leans to
saving.
"""

import re

from .errors import PuError
from .patterns import Lazy

MASK = "••••"
TELL_USER = "Tell the user it was not saved; anything else in it can be said again without the secret."

_NAME_EN = (r"(?:wi-?fi\s+)?(?:password|passcode|passphrase|passwd|pwd|pin(?:\s+(?:code|number))?|"
            r"api\s+key|api\s+token|access\s+token|secret\s+key|private\s+key|security\s+code|cvv|otp|"
            r"one[-\s]time\s+code|verification\s+code|(?:door|gate|garage|alarm|lock|safe|entry)\s+code|(?:lock|safe|locker)\s+combination)")
# "password for the gym app is", "PIN: ", "wifi password = ", "passcode's"; at most a few words between.
_NAMED_EN = Lazy(
    r"\b" + _NAME_EN + r"(?:'s\s+|(?:\s+(?:for|of|to|on|at)\s+[^\n.,;:!?]{1,40}?)?"
    r"(?:\s*[:=]\s*|\s+(?:is|was|are)(?:\s+(?:now|still|just))?\s+|\s+(?:changed\s+)?to\s+))"
    r"(?P<value>\"[^\"\s]{3,64}\"|'[^'\s]{3,64}'|`[^`\s]{3,64}`|[^\s\"'`]{4,64})",
    re.IGNORECASE)
_NAMED_ZH = Lazy(
    r"(?:密码|口令|密钥|PIN码|pin码|验证码|支付码|卡密)"
    r"\s*(?:是|为|：|:|=|改成了?|改为|换成了?)\s*"
    r"(?P<value>[\"'“‘]?[A-Za-z0-9!@#$%^&*_\-+=.?~]{4,64}[\"'”’]?)")
_ISSUED = Lazy(
    r"\b(?P<value>sk-(?:proj-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|"
    r"AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{35})"
    r"|(?P<pem>-----BEGIN [A-Z ]*PRIVATE KEY-----)")
_SYMBOL = Lazy(r"[0-9!@#$%^&*_+=?~]")  # not "-": first-person, well-known
_TRAILING = ".,;:!?)]}。，；！？）"


def _secret_like(value):
    if value[:1] in "\"'`“‘":
        return True  # said in quotes: the user gave it as the value
    return bool(_SYMBOL.search(value.rstrip(_TRAILING)))


# Every match holds one of these (lower-cased): most texts are passed over without running the patterns.
_HINTS = ("pass", "pwd", "pin", "key", "token", "code", "cvv", "otp", "combination", "密", "口令", "码",
          "sk-", "gh", "github_pat_", "akia", "xox", "aiza", "-----begin")


def find(text):
    """[(start, end)] of each credential value in `text`, in order (empty when it holds none)."""
    low = text.lower()
    if not any(h in low for h in _HINTS):
        return []
    spans = []
    for pattern in (_NAMED_EN, _NAMED_ZH):
        for m in pattern.finditer(text):
            value = m.group("value")
            if _secret_like(value):
                end = m.end("value") - (len(value) - len(value.rstrip(_TRAILING)))
                spans.append((m.start("value"), end))
    for m in _ISSUED.finditer(text):
        name = "value" if m.group("value") else "pem"
        spans.append((m.start(name), len(text) if name == "pem" else m.end(name)))
    return sorted(set(spans))


def masked(text):
    """`text` with each credential value replaced by MASK (what a receipt may keep as evidence)."""
    out, last = [], 0
    for start, end in find(text):
        if start >= last:
            out.append(text[last:start] + MASK)
            last = end
    return "".join(out) + text[last:]


def not_saved(what):
    """The refusal of a write that would keep a credential: `what` says whose words gave one."""
    return PuError("CREDENTIAL_NOT_SAVED", f"{what}; credentials are never saved", TELL_USER)
