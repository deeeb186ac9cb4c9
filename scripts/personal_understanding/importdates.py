"""The date forms conversation exports really use, read into the archive's two forms.

Pure. `parse_when(value)` returns "YYYY-MM-DD" for a day or "YYYY-MM-DDTHH:MM:SSZ"
for a moment; a moment given with an offset keeps it ("2026-02-15T01:10:00+08:00"), a
time with no zone is taken as UTC (exports rarely say). Accepted:

- ISO 8601: 2023-05-08, 2023-05-08T13:56:00Z, 2023-05-08 13:56, with an offset (+02:00)
- epoch seconds as a JSON number (ChatGPT's create_time): 1683554160 or 1683554160.5
- LoCoMo: "1:56 pm on 8 May, 2023", and "8 May, 2023"
- day month year / month day year, month names full or short: "8 May 2023", "May 8, 2023",
  each optionally with a time: "May 8, 2023 1:56 PM", "8 May 2023 13:56"
- e-mail style (RFC 2822): "Mon, 08 May 2023 13:56:00 +0000"
- year first with slashes or dots: 2023/05/08, 2023.05.08 13:56
- Chinese: 2023年5月8日, 2023年5月8日 13:56, 2023年5月8日 下午1:56

Refused: 08/05/2023 and other forms whose day and month order cannot be told, words
like "yesterday", impossible dates.
"""

import datetime as dt
import re

from .patterns import Lazy
from .timeutil import iso_as_given

UTC = dt.timezone.utc
FORMS_HELP = ("ISO 8601, epoch seconds, '1:56 pm on 8 May, 2023', '8 May 2023', 'May 8, 2023 1:56 PM', RFC 2822, "
              "'2023/05/08', '2023年5月8日 下午1:56' (no zone: UTC; 08/05/2023 is ambiguous and refused)")

_MONTHS = ("january", "february", "march", "april", "may", "june", "july",
           "august", "september", "october", "november", "december")

_ISO = Lazy(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(Z|z|[+-]\d{2}:?\d{2})?)?", re.ASCII)
_CLOCK = r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(?:([ap])\.?\s*m\.?)?"
_DMY = Lazy(rf"\s*(?:{_CLOCK}\s+on\s+)?(\d{{1,2}})\s+([a-z]+)\.?\s*,?\s*(\d{{4}})(?:\s*,?\s+(?:at\s+)?{_CLOCK})?\s*",
                  re.IGNORECASE | re.ASCII)
_MDY = Lazy(rf"\s*(?:[a-z]+,?\s+)?([a-z]+)\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s*(\d{{4}})(?:\s*,?\s+(?:at\s+)?{_CLOCK})?\s*",
                  re.IGNORECASE | re.ASCII)
_YMD = Lazy(rf"\s*(\d{{4}})[/.](\d{{1,2}})[/.](\d{{1,2}})(?:\s+{_CLOCK})?\s*", re.IGNORECASE | re.ASCII)
_ZH = Lazy(r"\s*(\d{4})年(\d{1,2})月(\d{1,2})[日号]\s*(?:(上午|下午|晚上|中午|凌晨|早上)?\s*(\d{1,2})[:：点](\d{2})?分?)?\s*")


def _iso(moment):
    """The moment in the offset it was given in (Z for UTC): the time of day the person lived."""
    moment.astimezone(UTC)  # raises OverflowError when the instant itself is past the calendar's ends
    return iso_as_given(moment)


def _month(name, value):
    name = name.lower()
    found = [i for i, full in enumerate(_MONTHS, 1) if full == name or (len(name) >= 3 and full.startswith(name))]
    if len(found) != 1:
        raise ValueError(f"{value!r}: unknown month {name!r}")
    return found[0]


def _clock(hour, minute, second, half, value):
    hour, minute, second = int(hour), int(minute), int(second or 0)
    if half:
        if not 1 <= hour <= 12:
            raise ValueError(f"{value!r}: hour {hour} is not on a 12-hour clock")
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    return hour, minute, second


def moment(value, year, month, day, clock=None):
    """The archive's form of a date (a day) or, with clock (hour, minute, second, a/p or None), a moment in UTC.
    `value` is what was read, for the error message."""
    date = dt.date(int(year), int(month), int(day))
    if clock is None or clock[0] is None:
        return date.isoformat()
    hour, minute, second = _clock(*clock, value)
    return _iso(dt.datetime(date.year, date.month, date.day, hour, minute, second, tzinfo=UTC))


def normalize_iso(value):
    """ISO date -> "YYYY-MM-DD"; ISO date-time -> "YYYY-MM-DDTHH:MM:SS" + its offset (naive taken as UTC). ValueError otherwise.

    A fixed grammar rather than fromisoformat, whose accepted forms differ between 3.10 and 3.11.
    """
    m = _ISO.fullmatch(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"{value!r} is not an ISO date or date-time")
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    if m[4] is None:
        return dt.date(year, month, day).isoformat()
    zone, offset = m[7], 0
    if zone and zone not in ("Z", "z"):
        offset = (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 60 + int(zone[-2:]))
    tz = dt.timezone(dt.timedelta(minutes=offset))
    try:
        return _iso(dt.datetime(year, month, day, int(m[4]), int(m[5]), int(m[6] or 0), tzinfo=tz))
    except OverflowError:  # an offset pushing year 9999 past the calendar's end
        raise ValueError(f"{value!r} is outside the representable range") from None


def parse_locomo(value):
    """LoCoMo's session times: "1:56 pm on 8 May, 2023" (and a bare "8 May, 2023")."""
    m = _DMY.fullmatch(value) if isinstance(value, str) else None
    if not m or m[8] or (m[1] and not m[4]):  # its clock is a 12-hour one: without am/pm the hour is a guess
        raise ValueError(f"{value!r} is not a LoCoMo date-time like '1:56 pm on 8 May, 2023'")
    return moment(value, m[7], _month(m[6], value), m[5], m.groups()[0:4])


def parse_epoch(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number of seconds")
    try:
        return _iso(dt.datetime.fromtimestamp(value, UTC))
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"{value!r} seconds is out of range") from None


def parse_when(value):
    """Any accepted form (see the module's notes) -> the archive's form. ValueError names the value."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return parse_epoch(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{value!r} is not a date")
    text = value.strip()
    try:
        if _ISO.fullmatch(text):
            return normalize_iso(text)
        m = _DMY.fullmatch(text)
        if m:
            clock = m.groups()[0:4] if m[1] else m.groups()[7:11]
            return moment(value, m[7], _month(m[6], value), m[5], clock)
        m = _MDY.fullmatch(text)
        if m:
            return moment(value, m[3], _month(m[1], value), m[2], m.groups()[3:7])
        m = _YMD.fullmatch(text)
        if m:
            return moment(value, m[1], m[2], m[3], m.groups()[3:7])
        m = _ZH.fullmatch(text)
        if m:
            if m[5] is None:
                return moment(value, m[1], m[2], m[3])
            hour = int(m[5])
            if m[4] in ("下午", "晚上") and hour < 12:
                hour += 12
            elif m[4] == "中午" and hour < 11:
                hour += 12
            return moment(value, m[1], m[2], m[3], (hour, m[6] or "0", None, None))
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"{value!r}: {exc}" if repr(value) not in str(exc) else str(exc)) from None
    if re.search(r"[A-Za-z]{3}", text) and re.search(r"\d{1,2}:\d{2}", text):
        import email.utils  # e-mail style dates are rare: not every command pays for this import

        parsed = email.utils.parsedate_to_datetime(text) if email.utils.parsedate_tz(text) else None
        if parsed is not None:
            return _iso(parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))
    if re.fullmatch(r"\s*\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}.*", text):
        raise ValueError(f"{value!r}: day and month order cannot be told; write it as 2023-05-08")
    raise ValueError(f"{value!r} is not a date form this importer reads ({FORMS_HELP})")
