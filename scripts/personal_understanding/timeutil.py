"""Time stamps: UTC, second precision, ISO 8601 with a trailing Z.

When the words were said (`occurred_at`) keeps the UTC offset it was given in,
so a time reads as the person lived it; `iso_as_given` writes that form.
"""

import datetime as _dt
import re

from .errors import PuError

UTC = _dt.timezone.utc
_DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
# A time's fraction of a second and its UTC offset, in the forms Python 3.11's fromisoformat reads and
# 3.10's does not (a fraction of other than 3 or 6 digits, a comma, an offset without its colon).
_TIME_TAIL = re.compile(r"([T ]\d{2}:\d{2}(?::\d{2})?)(?:[.,](\d+))?(?:([+-]\d{2}):?(\d{2})?)?$", re.ASCII)


def now():
    return _dt.datetime.now(UTC).replace(microsecond=0)


def iso(moment):
    """Format an aware datetime as 2026-11-30T07:43:00Z."""
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso():
    return iso(now())


def iso_as_given(moment):
    """Format an aware datetime in its own offset: 2026-02-15T01:10:00+08:00 (Z when UTC)."""
    moment = moment.replace(microsecond=0)
    if moment.utcoffset() == _dt.timedelta(0):
        return iso(moment)
    return moment.isoformat()


def parse_instant(text, field="time", keep_offset=False):
    """Parse an ISO date or date-time; naive values are taken as UTC.

    The result is in UTC unless keep_offset, which leaves it in the offset the text gave.
    """
    if isinstance(text, _dt.datetime):
        moment = text
    else:
        raw = str(text).strip()
        if raw.endswith("Z") or raw.endswith("z"):
            raw = raw[:-1] + "+00:00"
        raw = _TIME_TAIL.sub(_time_tail, raw, count=1)
        try:
            if len(raw) == 10:
                moment = _dt.datetime.fromisoformat(raw + "T00:00:00")
            else:
                moment = _dt.datetime.fromisoformat(raw)
        except ValueError:
            raise PuError(
                "BAD_DATE",
                f"{field} {text!r} is not an ISO date or date-time",
                "Use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.",
            ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment if keep_offset else moment.astimezone(UTC)


def _time_tail(m):
    """The tail of a date-time as every supported Python reads it: six digits of fraction (more are
    cut, as 3.11 cuts them) and an offset of hours and minutes with a colon."""
    clock, fraction, hours, minutes = m.groups()
    out = clock
    if fraction:
        out += "." + (fraction + "000000")[:6]
    if hours:
        out += f"{hours}:{minutes or '00'}"
    return out


def is_partial_date(text):
    """True for YYYY, YYYY-MM or YYYY-MM-DD (the precision a person remembers)."""
    return bool(_DATE_RE.fullmatch(str(text)))
