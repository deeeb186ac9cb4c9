"""Time expressions in recall queries, resolved against an anchor date.

`resolve(text, as_of)` finds expressions such as 上周, 去年夏天, 2025年3月5日,
"two weeks ago" or "in March" and turns each into an inclusive date range. A
resolution is a reading of the query, never a fact: callers record it in the
retrieval trace and use it to narrow or boost candidates. `strip_expressions`
removes them so the rest of the query can be searched as words;
`parse_window` reads the CLI's explicit --window.

Semantics where usage is ambiguous (as_of is "today"):
- Weeks run Monday to Sunday; 上周/last week is the whole previous week. Last (or
  this past) Saturday is the latest Saturday before as_of, this Saturday the one
  in as_of's week, this coming Saturday the first after as_of, next Saturday the
  one in the week after (as 下周六). A bare weekday or weekend (周五, 星期六, 周末,
  "on Monday", "over the weekend") may be either side of the day it is said: it is
  read only when the text leans one way (did, went, 了 look back; will, going to,
  要, 打算 look ahead; both or neither: left alone) or the caller leans (a question
  to the memory looks back): back, the latest such day or weekend on or before
  as_of; ahead, the first on or after it. "every Friday", 每周五, 周一到周五 are habits.
- Bare month (三月, "in March"): the most recent such month that has started by
  as_of (in 2026-03 it is March 2026, in 2026-02 March 2025). "this March" is
  in as_of's year, "last March" the latest one before the current month,
  "next March" the first one after it.
- Month and day without a year (3月5日, "March 5"): the most recent such date
  on or before as_of, because recall looks backwards; a bare month or a month and
  day in a text of at most AHEAD_MONTH_CHARS that plainly points ahead (will, 'll,
  going to, planning, scheduled, 打算, 准备, 计划) and not back: the first such month
  not yet over, the first such date on or after as_of ("I'll visit Paris in March"
  said in May is next March).
- Seasons are Northern-hemisphere meteorological (Mar-May, Jun-Aug, Sep-Nov,
  Dec-Feb); a winter belongs to the year of its December. Bare season (夏天,
  "in the summer"): the most recent one that has started by as_of.
  今年/this <season>: the one containing as_of, else the one in as_of's year;
  去年/前年/明年 shift that by whole years. English "last summer" is the most
  recent summer that has ended, "next summer" the first that has not begun.
- "Few" (几, 好几, 前几天, a few, several) means 2 to 6 units: 几年前 is the
  years 6 to 2 back, precision "range". "A couple" is 2.
- Recently (最近, 近来, 这阵子, 前阵子, lately, recently, these days): as_of minus 30
  days through as_of. The other day: as 前几天, 2 to 6 days back. The past few days (这几天, 这两天, the past few days):
  as_of minus 6 days through as_of. The past N units (最近三天, 过去一年, 这几个月,
  这两年, the past 2 weeks): from the same day N units back through as_of.
- N units ago (or back) is the whole calendar unit N back (三个月前 is a month). A quarter (上个季度,
  this quarter) is its three calendar months. 半年前 is
  the month six back; 半个月前 the week holding the day 15 days back. Ahead the same way: "in two
  weeks", "two weeks from now", 过两天, 还有三天就 are the unit N ahead; "in N units" not in a text
  that looks back ("finished it in two days" is how long), 三个月后 only in one that plainly looks
  ahead (a story's 结婚三个月后 counts from its own event). 大上周 is 上上周, 大下周 下下周.
- "My week" ("how was my week?", asked on a Monday too), my month, my year: as the past week, month,
  year; my day is today; my weekend a bare weekend. "This weekend" / 这周末 (and this Saturday or
  Sunday, 这个星期天) said looking back before it has come is the one just gone.
- In a question only: holidays (圣诞节, last Thanksgiving, Easter by the Gregorian computus, Mother's
  Day, Memorial Day weekend, 清明, the Chinese calendar's festivals) in the year their words point
  to, and what lies ahead (coming up, 接下来一个月, "in the next two weeks": that long from tomorrow).
- A part of a month said beside it (三月初, 上个月底, 十二月中旬, early March, mid-May, the end of
  last month): 初/上旬/early/the beginning of are days 1-10, 中旬/mid/the middle of 11-20,
  底/末/下旬/late/the end of 21 to the last; the first to fourth week of it days 1-7 to 22-28,
  its last week (最后一周) the last seven days; its halves 1-15 and 16 on. Of a year (去年年底,
  early 2025, the end of last year): its first or last two months, its middle June and July, its
  halves January-June and July-December. Said alone (月初, 年底, 上半年), of as_of's month or year.
- The same time of an earlier year (去年这个时候, 两年前的这个时候, this time last year): that
  date then, give or take AROUND_DAYS; 去年的今天, on this day two years ago: that very day.
- kind is "absolute" only when the text names the year (2019年, March 2025,
  2025-03-05); everything anchored on as_of is "relative".
- Life phases (小时候, 上大学的时候) are not dates and are left alone.
"""

import datetime as _dt
import re

from ..errors import PuError
from ..patterns import Lazy
from . import lunar

OPEN_START, OPEN_END = "0001-01-01", "9999-12-31"
FEW = (2, 6)
RECENT_DAYS = 30
# "Recently", 最近: a guess at the last month, not a window the words name (see is_vague).
_RECENT_CN = r"最近|近来|近期|这阵子|这段时间|这段日子|这一阵子?|前阵子|前一阵子?|前段时间"
_RECENT_EN = r"lately|recently|these\s+days|nowadays|of\s+late"
FEW_DAYS = 6
AHEAD_MONTH_CHARS = 200  # a month named without a year is read ahead in a text this short that points ahead
AROUND_DAYS = 15  # 去年这个时候, this time last year: the same date then, give or take half a month
_TD = _dt.timedelta


def _recent(_m, as_of):
    return as_of - _TD(RECENT_DAYS), as_of, "range"


# "Coming up", 接下来, 待办: what lies ahead, a guess at the next months (read only in a question: a text
# that says "soon" names no days of its own).
AHEAD_DAYS = 90
_COMING_CN = (r"(?:接下来|未来|今后|往后)的?(?:(?P<n>几|两|[二三四五六七八九十]|一)个?(?P<u>天|周|星期|礼拜|月|年))?"
              r"|待办|要做的事|该做的事|要做什么|得做什么|有什么安排")
_N_EN = (r"a\s+few|a\s+couple(?:\s+of)?|couple(?:\s+of)?|half\s+a|few|several|\d{1,3}|an?"
         r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve")
_COMING_EN = (r"upcoming|coming\s+up|in\s+the\s+future|soon|to-?dos?|on\s+my\s+plate|follow(?:\s+|-)?ups?"
              r"|(?:have|need|got)\s+to\s+do"
              # "in the next month", "over the next few weeks", "the coming days": that long from tomorrow
              rf"|(?:(?:over|in|during|within)\s+)?the\s+(?:next|coming)\s+(?:(?P<en_n>{_N_EN})\s+)?"
              r"(?P<en_u>day|week|month|year)s?")
_NEW_EN = r"what'?s\s+new|anything\s+new"  # asked, the last month (read only in a question)


def _coming(m, as_of):
    """What lies ahead: the next AHEAD_DAYS from tomorrow, or the units a Chinese phrase names (接下来一个月)."""
    found = m.groupdict()
    n, unit = found.get("n") or found.get("en_n"), found.get("u") or found.get("en_u")
    if unit:
        # as many days as n units back, turned forward ("the coming weeks": a few)
        lo, hi, _p = _past(as_of, _num(n) if n else ("few" if m.group().lower().endswith("s") else 1), _unit_of(unit))
        return as_of + _TD(1), as_of + (hi - lo), "range", "ahead"
    return as_of + _TD(1), as_of + _TD(AHEAD_DAYS), "range", "ahead"


_VAGUE = Lazy(rf"(?:{_RECENT_CN}|{_RECENT_EN}|{_COMING_CN}|{_COMING_EN}|{_NEW_EN})", re.I)


def is_vague(expression):
    """Does a resolved expression only guess at a window (recently, 最近; coming up, 接下来) rather than name one?"""
    return bool(_VAGUE.fullmatch(expression))


# One character for one character, so offsets into the normalised text are
# offsets into the caller's text.
_WIDTH = str.maketrans({chr(0xFF10 + i): str(i) for i in range(10)}
                       | {"－": "-", "／": "/", "：": ":", "．": ".", "，": ",", "\u3000": " "})
_URL = Lazy(r"(?:[a-z][a-z0-9+.\-]*://|www\.)\S+|[\w.+\-]+@[\w\-]+\.[\w.]+", re.I)


# ---------------------------------------------------------------- date arithmetic

def _month(y, m, k=0):
    if not 1 <= m <= 12:
        raise ValueError(f"month {m}")
    y, m0 = divmod(y * 12 + m - 1 + k, 12)
    return _dt.date(y, m0 + 1, 1), _dt.date(y, m0 + 1, _month_days(y, m0 + 1))


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _month_days(y, m):
    """calendar.monthrange(y, m)[1], without importing calendar (and locale, which it brings: 1 ms a CLI call)."""
    return 29 if m == 2 and y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) else _MONTH_DAYS[m - 1]


def _year(y):
    return _dt.date(y, 1, 1), _dt.date(y, 12, 31)


def _quarter(as_of, k):
    """The quarter holding as_of, moved by k quarters (上个季度, last quarter)."""
    first = _month(as_of.year, (as_of.month - 1) // 3 * 3 + 1, 3 * k)[0]
    return first, _month(first.year, first.month, 2)[1], "range"


def _unit(day, unit, k=0):
    """The calendar unit holding `day`, moved by k units."""
    if unit == "day":
        return day + _TD(k), day + _TD(k)
    if unit == "week":
        mon = day - _TD(day.weekday()) + _TD(7 * k)
        return mon, mon + _TD(6)
    return _month(day.year, day.month, k) if unit == "month" else _year(day.year + k)


def _ago(as_of, n, unit):
    if unit == "weekend":  # two weekends ago: the weekend of the week two weeks back (last weekend's is one)
        if n in ("few", "half"):
            return None
        lo, hi = _unit(as_of, "week", -n)
        return lo + _TD(5), hi, "range"
    if n == "few":
        return _unit(as_of, unit, -FEW[1])[0], _unit(as_of, unit, -FEW[0])[1], "range"
    if n == "half":
        if unit == "year":
            return (*_month(as_of.year, as_of.month, -6), "month")
        return (*_unit(as_of - _TD(15), "week"), "week") if unit == "month" else None
    return (*_unit(as_of, unit, -n), unit)


def _later(as_of, n, unit, lean=None):
    """In n units, n units from now, 三个月后: the calendar unit n ahead (as "n units ago" is n back).
    Not in a text that looks back: "finished the book in two days" is how long, not when."""
    if lean == "back" or unit == "weekend":
        return None
    if n == "few":
        return _unit(as_of, unit, FEW[0])[0], _unit(as_of, unit, FEW[1])[1], "range"
    if n == "half":
        if unit == "year":
            return (*_month(as_of.year, as_of.month, 6), "month")
        return (*_unit(as_of + _TD(15), "week"), "week") if unit == "month" else None
    return (*_unit(as_of, unit, n), unit)


def _cn_ahead(m, as_of):
    return _later(as_of, _num(m["n"]), _unit_of(m["u"]))


def _cn_later(m, as_of, lean=None):
    # only where the text plainly looks ahead (几天后要考试): a story's 结婚三个月后 counts from its own event
    return _cn_ahead(m, as_of) if lean == "ahead" else None


def _en_later(m, as_of, lean=None):
    # "two weeks from now" says when whatever the tense
    return _later(as_of, _num(m["n"] or m["n2"]), _unit_of(m["u"] or m["u2"]), None if m["now"] else lean)


def _past(as_of, n, unit):
    """From the same day n units back (month ends clamp) through as_of."""
    n = FEW[1] if n == "few" else n
    if not isinstance(n, int) or n < 1:
        return None
    if unit in ("day", "week"):
        return as_of - _TD(n * (7 if unit == "week" else 1)), as_of, "range"
    first, last = _month(as_of.year, as_of.month, -n * (12 if unit == "year" else 1))
    return first.replace(day=min(as_of.day, last.day)), as_of, "range"


def _season(label, m0):
    return _dt.date(label, m0, 1), _month(label, m0, 2)[1]


def _season_label(as_of, m0, mode):
    if mode == "this":
        held = [y for y in (as_of.year - 1, as_of.year)
                if _season(y, m0)[0] <= as_of <= _season(y, m0)[1]]
        return held[0] if held else as_of.year
    if mode == "next":
        label = as_of.year - 1
        while _season(label, m0)[0] <= as_of:
            label += 1
        return label
    label = as_of.year + 1
    if mode == "last":  # the latest that has ended
        while _season(label, m0)[1] >= as_of:
            label -= 1
    else:  # bare: the latest that has started
        while _season(label, m0)[0] > as_of:
            label -= 1
    return label


def _month_year(as_of, m, mode):
    if mode == "ahead":  # the first such month not yet over
        return as_of.year + (m < as_of.month)
    if mode == "last":
        return as_of.year - (m >= as_of.month)
    if mode == "next":
        return as_of.year + (m <= as_of.month)
    return as_of.year - (m > as_of.month) if mode == "bare" else as_of.year


def _recent_date(as_of, m, d):
    """Latest m/d on or before as_of; eight years back always reaches a Feb 29."""
    for y in range(as_of.year, as_of.year - 9, -1):
        try:
            day = _dt.date(y, m, d)
        except ValueError:
            continue
        if day <= as_of:
            return day
    raise ValueError(f"no day {m}/{d}")


def _coming_date(as_of, m, d):
    """First m/d on or after as_of."""
    for y in range(as_of.year, as_of.year + 9):
        try:
            day = _dt.date(y, m, d)
        except ValueError:
            continue
        if day >= as_of:
            return day
    raise ValueError(f"no day {m}/{d}")


def _on(day, kind="relative"):
    return day, day, "day", kind


# ---------------------------------------------------------------- numbers

_CN_DIGIT = dict(zip("〇零一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9)))
_EN_NUM = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_EN_NUM.update({"a": 1, "an": 1, "a couple": 2, "a couple of": 2, "couple of": 2, "couple": 2})
_FEW_WORDS = {"几", "好几", "few", "a few", "several"}
_CN_UNIT = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week",
            "月": "month", "年": "year"}


# re.I lets these stand for ASCII letters; needles and table lookups fold them the same way.
_FOLD_I = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def _key(s):
    # the words a match holds as re.I read them (laſt is last), for the tables below
    return re.sub(r"\s+", " ", s.strip().translate(_FOLD_I).lower())


def _num(s):
    s = _key(s)
    if s in _FEW_WORDS or s in ("半", "half a"):
        return "few" if s in _FEW_WORDS else "half"
    if s.isdigit():
        return int(s)
    if s in _EN_NUM:
        return _EN_NUM[s]
    if "十" in s:
        tens, _, ones = s.partition("十")
        return (_CN_DIGIT[tens] if tens else 1) * 10 + (_CN_DIGIT[ones] if ones else 0)
    if len(s) == 4:  # 二〇二五
        return int("".join(str(_CN_DIGIT[c]) for c in s))
    return _CN_DIGIT[s]


def _unit_of(word):
    return _CN_UNIT.get(word) or word.lower().rstrip("s")


# ---------------------------------------------------------------- Chinese rules

_D = "一二三四五六七八九"
_N_CN = rf"(?:[{_D}]?十[{_D}]?|[{_D}两〇零]|\d{{1,3}})"
_MON_CN = rf"(?:1[0-2]|0?[1-9]|十[一二]?|[{_D}])"
_DAY_CN = rf"(?:3[01]|[12]\d|0?[1-9]|三十一?|二十[{_D}]?|十[{_D}]?|[{_D}])"
_NUM_BEFORE = rf"(?<![\d{_D}十〇零两百千万几第])"
_UNIT_CN = r"(?P<u>天|日|周|星期|礼拜|月|年)"
# Lookarounds keep common compounds out: 目前年轻 (前年), 然后天黑 (后天),
# 马上周末 (上周), 看一下周围 (下周), 说明年龄 (明年), 日本月刊 (本月).
_PREV = r"(?<![马早晚路身桌楼墙线网台面])上"
_NEXT = r"(?<![一以如地底天楼手乡])下"
_REL_PREFIX = rf"(?P<p>大上|{_PREV}上|{_PREV}|这|(?<!日)本|大下|{_NEXT}下|{_NEXT})"  # 大上周: the week before last
_PREFIX_OFF = {"上上": -2, "大上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2, "大下": 2}
_YEAR_OFF = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
_DAY_OFF = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "昨晚": -1, "昨夜": -1,
            "今天": 0, "今日": 0, "今晚": 0, "今早": 0, "今夜": 0, "明天": 1, "明日": 1,
            "明晚": 1, "明早": 1, "后天": 2, "大后天": 3}
_SEASON = {"春": 3, "夏": 6, "秋": 9, "冬": 12,
           "spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_NOT_PAST = r"(?<![提以之目此])"
_NOT_AFTER = r"(?<![先之以然最午背随稍过])"
_YREL = (rf"(?P<yr>大前年|{_NOT_PAST}前年|去年|今年|(?<![说聪透证表声])明年|{_NOT_AFTER}后年)"
         r"(?![龄纪级轻份])")
_YABS = r"(?<![A-Za-z0-9_\-/.:])(?P<ya>(?:19|20)\d{2}|[〇零一二三四五六七八九]{4})年"


def _cn_year(m, as_of):
    if m["ya"]:
        year, kind, off = _num(m["ya"]), "absolute", None
    else:
        off = _YEAR_OFF[m["yr"]]
        year, kind = as_of.year + off, "relative"
    if m["s"]:
        m0 = _SEASON[m["s"]]
        label = year if off is None else _season_label(as_of, m0, "this") + off
        return (*_season(label, m0), "season", kind)
    if m["m"] and m["d"]:
        return _on(_dt.date(year, _num(m["m"]), _num(m["d"])), kind)
    if m["m"]:
        return (*_month(year, _num(m["m"])), "month", kind)
    return (*_year(year), "year", kind)


def _cn_month_day(m, as_of, ahead=False):
    mon = _num(m["m"])
    if m["d"]:
        return _on(_coming_date(as_of, mon, _num(m["d"])) if ahead else _recent_date(as_of, mon, _num(m["d"])))
    return (*_month(_month_year(as_of, mon, "ahead" if ahead else "bare"), mon), "month")


def _weekday(wd):
    """Monday 0 .. Sunday 6, of 一..日 (天 is Sunday too) or an English weekday's name."""
    return 6 if wd == "天" else "一二三四五六日".find(wd) if len(wd) == 1 else _WEEKDAYS.index(wd.lower())


def _cn_week(m, as_of, back=False):
    off = _PREFIX_OFF[m["p"]]
    lo, hi = _unit(as_of, "week", off)
    wd = m["wd"]
    if not wd:
        return lo, hi, "week"
    if wd == "末":
        return _weekend_of(lo, as_of, back and off == 0)
    return _on(_weekend_day(lo + _TD(_weekday(wd)), as_of, back and off == 0))


def _cn_month_rel(m, as_of):
    lo, hi = _unit(as_of, "month", _PREFIX_OFF[m["p"]])
    return _on(lo.replace(day=_num(m["d"]))) if m["d"] else (lo, hi, "month")


def _cn_season(m, as_of):
    m0 = _SEASON[m["s"]]
    return (*_season(_season_label(as_of, m0, "this" if m["this"] else "bare"), m0), "season")


def _cn_ago(m, as_of):
    n = _num(m["n"])
    if m["u"] == "月" and not m["ge"] and n in ("few", "half"):
        return None  # 几月前 asks "before which month?"
    return _ago(as_of, n, _unit_of(m["u"]))


def _cn_past(m, as_of):
    """最近三天, 过去一年, 这几个月: from the same day n units back through as_of."""
    return _past(as_of, _num(m["n"]), _unit_of(m["u"]))


def _years_back(m, as_of):
    """The same time n years before as_of: its very day (去年的今天) or the month around it."""
    n = _num(m["n"]) if m["n"] else 1 if _key(m["yr"]) == "last" else -_YEAR_OFF[m["yr"]]
    if not isinstance(n, int) or n < 1:
        return None
    day = as_of.replace(year=as_of.year - n, day=min(as_of.day, 28) if as_of.month == 2 else as_of.day)
    if m["day"]:
        return _on(day)
    return day - _TD(AROUND_DAYS), day + _TD(AROUND_DAYS), "range"


def _this_part(m, as_of):
    """月初, 月底, 年底, 上半年 said alone: of as_of's month or year."""
    if m["half"]:
        return _part(*_year(as_of.year), _PART_OF[m["half"] + "半年"], "year")
    unit = "month" if m["u"] == "月" else "year"
    return _part(*_unit(as_of, unit), _PART_OF[m["part"]], unit)


# A part of a month or year, named before it (early March, the end of last month, the first week of
# October) or after it (三月初, 上个月底, 十一月第一周, 去年年底, 今年上半年).
_PART_OF = {"初": "early", "上旬": "early", "中旬": "mid", "下旬": "late", "底": "late", "末": "late",
            "上半月": "first half", "下半月": "second half", "上半年": "first half", "下半年": "second half",
            "beginning": "early", "start": "early", "middle": "mid", "end": "late",
            "first half": "first half", "second half": "second half", "latter half": "second half"}
_WEEK_NO = {"first": 1, "second": 2, "third": 3, "fourth": 4, "一": 1, "二": 2, "三": 3, "四": 4}
_PART_BEFORE = Lazy(r"(?:(?<![a-z])(?P<lead>early|mid|late)[\s-]+"
                    r"|(?<![a-z])(?:the\s+)?(?P<of>beginning|start|middle|end|first\s+half|second\s+half|latter\s+half"
                    r"|(?P<wk>first|second|third|fourth|last|final)\s+week)\s+of\s+(?:the\s+month\s+of\s+)?)$", re.I)
_PART_AFTER = Lazy(r"的?(?:(?P<part>初|上旬|中旬|下旬|底|末|上半月|下半月)"
                   r"|第(?P<wk>[一二三四1-4])个?(?:周|星期|礼拜)|(?P<last>最后一个?(?:周|星期|礼拜)))")
_YEAR_PART_AFTER = Lazy(r"的?(?:年(?P<part>初|底|末|中(?![秋国]))|(?P<half>上|下)半年)")


def _part(lo, hi, part, unit):
    """(from, to, "range") of a part of the month or year lo..hi; None when the part does not apply."""
    if part == "first half":
        return (lo, lo + _TD(14), "range") if unit == "month" else (lo, _month(lo.year, 6)[1], "range")
    if part == "second half":
        return (lo + _TD(15), hi, "range") if unit == "month" else (_month(lo.year, 7)[0], hi, "range")
    if unit == "year":  # a year's start and end are two months, its middle June and July
        first = {"early": 1, "mid": 6, "late": 11}.get(part)
        return (_month(lo.year, first)[0], _month(lo.year, first + 1)[1], "range") if first else None
    if part.startswith("week "):
        k = int(part[5:])
        return (hi - _TD(6), hi, "range") if k == 5 else (lo + _TD(7 * (k - 1)), lo + _TD(7 * k - 1), "range")
    first = {"early": 0, "mid": 10, "late": 20}[part]
    return lo + _TD(first), (hi if part == "late" else lo + _TD(first + 9)), "range"


def _narrow(norm, found):
    """Read a month's or year's part said beside it into its span: [(start, end, got)] in, the same out."""
    out = []
    for s, e, got in found:
        unit = got[2] if len(got) > 2 else None
        if unit not in ("month", "year"):
            out.append((s, e, got))
            continue
        start, end = s, e
        head = _key(norm[s:e].split(None, 1)[0]) if norm[s:e].strip() else ""
        part = "mid" if head.startswith("mid-") else head if head in ("early", "mid", "late") else None
        lead = norm[max(0, s - 40):s]
        before = _PART_BEFORE.search(lead) if part is None else None
        if before:
            start = s - len(lead) + before.start()
            if before["lead"]:
                part = _key(before["lead"])
            elif before["wk"]:
                wk = _key(before["wk"])
                part = "week 5" if wk in ("last", "final") else f"week {_WEEK_NO[wk]}"
            else:
                part = _PART_OF[_key(before["of"])]
        if part is None:
            after = (_PART_AFTER if unit == "month" else _YEAR_PART_AFTER).match(norm, e)
            if after:
                end = after.end()
                if unit == "year":  # 年中 is its middle
                    part = _PART_OF[after["half"] + "半年"] if after["half"] else _PART_OF.get(after["part"], "mid")
                elif after["wk"]:
                    part = f"week {_WEEK_NO.get(after['wk']) or int(after['wk'])}"
                else:
                    part = "week 5" if after["last"] else _PART_OF[after["part"]]
        narrowed = _part(got[0], got[1], part, unit) if part else None
        if narrowed is None:
            out.append((s, e, got))
        else:
            out.append((start, end, (*narrowed, *got[3:])))
    return out


_CN_RULES = [
    ("年", rf"(?:{_YABS}|{_YREL})(?:的?(?P<m>{_MON_CN})月份?(?:(?P<d>{_DAY_CN})[日号])?"
     r"|的?(?P<s>[春夏秋冬])[天季])?", _cn_year),
    # A bare month or season after 年 or 的 (25年3月, 每年三月, 小时候的夏天, 那个夏天)
    # belongs to some other or every year, not to the latest one.
    ("月", rf"{_NUM_BEFORE}(?<![年的])(?P<m>{_MON_CN})月份?(?:(?P<d>{_DAY_CN})[日号])?", _cn_month_day),
    ("周星礼", rf"{_REL_PREFIX}一?个?(?:周(?![围边到期年岁全遭刊报])|星期|礼拜)"
     r"(?:(?P<wd>[一二三四五六日天]|末)(?![起直样般定些点次共切边致同个气空然才真生本子常]))?",
     _cn_week),
    ("月", rf"{_REL_PREFIX}一?个?月(?![亮光球饼色票])(?:(?P<d>{_DAY_CN})[日号])?", _cn_month_rel),
    ("春夏秋冬", r"(?<![年那每某的])(?<!那个)(?<!每个)(?<!某个)(?P<this>这个)?(?P<s>[春夏秋冬])[天季]", _cn_season),
    ("天日晚夜早", rf"(?P<w>大前天|{_NOT_PAST}前天|昨天|昨日|昨晚|昨夜|今天|今日|今晚|今早|今夜"
     rf"|(?<![聪光透])明天|明日|明晚|明早|大后天|{_NOT_AFTER}后天)",
     lambda m, a: _on(a + _TD(_DAY_OFF[m["w"]]))),
    ("前", rf"{_NUM_BEFORE}(?P<n>{_N_CN}|好几|几|半)(?P<ge>个)?{_UNIT_CN}(?:以|之)?前", _cn_ago),
    # 三个月后, 两周以后 (not 后来, 后面): read by the text's tense, see _later
    ("后", rf"{_NUM_BEFORE}(?P<n>{_N_CN}|好几|几|半)(?P<ge>个)?{_UNIT_CN}(?:以|之)?后(?![来面])", _cn_later),
    # 过两天, 再过一个月, 还有三天就: ahead whatever else the text says (not 度过, 超过, 熬过, 不过两天)
    ("过", rf"(?<![度经通超错难好不跳越穿闯挺熬撑活路])过(?P<n>{_N_CN}|好几|几|半)(?P<ge>个)?{_UNIT_CN}(?![前后])",
     _cn_ahead),
    ("还", rf"还有(?P<n>{_N_CN}|好几|几|半)(?P<ge>个)?{_UNIT_CN}(?=就|才)", _cn_ahead),
    ("前", r"前几天|前些天|前些日子|前两天", lambda m, a: _ago(a, "few", "day")),
    ("季", r"(?P<p>上个?|这个?|本|下个?)季度", lambda m, a: _quarter(a, {"上": -1, "下": 1}.get(m["p"][0], 0))),
    ("去近", rf"(?:过去|最近|近)[的这]?(?P<n>{_N_CN}|几)个?{_UNIT_CN}(?:里|内|来|中|以来)?", _cn_past),
    ("这近", r"这几天|这两天|近几天|近日|这些天|这些日子", lambda m, a: (a - _TD(FEW_DAYS), a, "range")),
    # 这几个月, 这两年, 这三周: the past few units, as 最近几个月 (not 这一天 or 这个月, a day or month of its own)
    ("这", rf"这(?P<n>几|两|[二三四五六七八九]|十[{_D}]?|[{_D}]?十)个?(?P<u>周|星期|礼拜|月|年)"
     r"(?:里|内|来|中|以来)?", _cn_past),
    ("近阵段", _RECENT_CN, _recent),
    # 去年这个时候, 两年前的今天: the same time of an earlier year, not the whole year
    ("年", rf"(?:(?P<yr>大前年|{_NOT_PAST}前年|去年)|{_NUM_BEFORE}(?P<n>{_N_CN})年(?:以|之)?前)的?"
     r"(?:(?P<day>今天|今日|这一天|这天)|这个时候|这时候|这时|此时|这会儿|同期)", _years_back),
    # 月初, 年底: this month's or year's part (十一月初, 上个月底, 去年年底: see _narrow)
    ("月年", r"(?<![\d一二三四五六七八九十个这本上下去今明前后年每])(?P<u>月|年)(?P<part>初|底|末)"
     r"|(?<![\d一二三四五六七八九十个这本上下去今明前后年每])(?P<half>上|下)半年", _this_part),
]


# ---------------------------------------------------------------- English rules

def _w(body):
    # Plain \b counts CJK as word characters, so 我yesterday would never match.
    return rf"(?<![A-Za-z0-9_]){body}(?![A-Za-z0-9_]|[.,:/\-]\d)"


_MON_EN = (r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
           r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DAY_EN = r"(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YR_EN = r"(?P<y>(?:19|20)\d{2})"
_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
# Month words that are also names or ordinary words ("May I", "Jan said", "in
# June" is fine): bare, they need a lead word; lowercase may/mar need a year.
_AMBIGUOUS_MON = {"may", "mar", "march", "jan", "jun", "june", "aug", "august", "apr",
                  "april", "sep", "oct", "nov", "dec", "feb", "jul"}
_EN_DAY = {"today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0,
           "this evening": 0, "yesterday": -1, "last night": -1,
           "day before yesterday": -2, "tomorrow": 1, "day after tomorrow": 2}
_EN_OFF = {"last": -1, "this past": -1, "this": 0, "next": 1, "this coming": 1,
           "before last": -2, "after next": 2}
_EN_MODE = {"last": "last", "this past": "last", "this": "this", "next": "next"}


def _en_month(m, as_of, ahead=False):
    g = m.groupdict()
    tok, lead, year, day = g["mon"], _key(g.get("p") or ""), g.get("y"), g.get("d")
    idx = _MONTHS.index(tok[:3].lower()) + 1
    if not year and not lead:
        if tok.lower() in _AMBIGUOUS_MON and not day:
            return None
        if tok in ("may", "mar"):
            return None  # "may 5 people"
    if day:
        return _on(_dt.date(int(year), idx, int(day)), "absolute") if year \
            else _on(_coming_date(as_of, idx, int(day)) if ahead else _recent_date(as_of, idx, int(day)))
    if year:
        return (*_month(int(year), idx), "month", "absolute")
    mode = _EN_MODE.get(lead, "bare")
    return (*_month(_month_year(as_of, idx, "ahead" if ahead and mode == "bare" else mode), idx), "month")


def _en_season(m, as_of):
    m0, lead = _SEASON[m["s"].lower()], _key(m["p"] or "")
    if m["y"]:
        return (*_season(int(m["y"]), m0), "season", "absolute")
    if not lead:
        return None  # "I fall asleep", "summer camp"
    return (*_season(_season_label(as_of, m0, _EN_MODE.get(lead, "bare")), m0), "season")


def _en_rel_unit(m, as_of, back=False):
    unit, off = m["u"].lower(), _EN_OFF[_key(m["p"])]
    if unit == "weekend":
        return _weekend_of(_unit(as_of, "week", off)[0], as_of, back and off == 0)  # only "this" is 0
    return (*_unit(as_of, unit, off), unit)


def _weekend_of(monday, as_of, back):
    """The weekend of the week starting `monday`; said looking back ("what did I do this weekend?",
    这周末过得怎么样) before that weekend has come, this week's is the one just gone."""
    sat = monday + _TD(5)
    if back and as_of < sat:
        sat -= _TD(7)
    return sat, sat + _TD(1), "range"


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _en_weekday(m, as_of, back=False):
    """last/this past Saturday: the latest one before as_of; this Saturday: the one in as_of's week;
    this coming Saturday: the first after as_of; next Saturday: the one in next week (as 下周六)."""
    idx, lead = _weekday(m["wd"]), _key(m["p"])
    if lead in ("last", "this past"):
        return _on(as_of - _TD((as_of.weekday() - idx - 1) % 7 + 1))
    if lead == "this coming":
        return _on(as_of + _TD((idx - as_of.weekday() - 1) % 7 + 1))
    day = _unit(as_of, "week", 1 if lead == "next" else 0)[0] + _TD(idx)
    return _on(_weekend_day(day, as_of, back and lead == "this"))


def _weekend_day(day, as_of, back):
    """This Saturday or Sunday said looking back before it has come ("this Sunday was lovely" on a
    Monday, 这个星期天干嘛了): the one just gone, as with this weekend."""
    return day - _TD(7) if back and day.weekday() >= 5 and day > as_of else day


def _en_past(m, as_of):
    if m["n"] is None and ("last" in m["p"].lower() or m["pl"]):
        return None  # "the last day", "past years": no count, no window
    return _past(as_of, _num(m["n"]) if m["n"] else 1, _unit_of(m["u"]))


_MONTH_NEEDLES = " ".join(_MONTHS)
# (needles, pattern, handler): see _rule
_EN_RULES = [
    ("today tonight yesterday tomorrow night morning afternoon evening",
     _w(r"(?:the\s+)?(?P<w>day\s+(?:before\s+yesterday|after\s+tomorrow)|today|tonight"
        r"|yesterday|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening))(?:['’]s)?"),
     lambda m, a: _on(a + _TD(_EN_DAY[_key(m["w"])]))),
    ("before after", _w(r"the\s+(?P<u>week|month|year)\s+(?P<p>before\s+last|after\s+next)"), _en_rel_unit),
    ("week month year", _w(r"(?P<p>last|this\s+past|this\s+coming|this|next)\s+(?P<u>week|weekend|month|year)"),
     _en_rel_unit),
    # "how was my week?" (asked on a Monday too), "my month has been crazy": the week, month or year up to
    # the day it is said, as "the past week" ("my weekend" is a bare weekend)
    ("week month year", _w(r"my\s+(?P<u>week|month|year)(?!s)"), lambda m, a: _past(a, 1, m["u"].lower())),
    ("day", _w(r"my\s+day(?!s|\s+off|\s+job)"), lambda m, a: _on(a)),  # "how was my day?", not "my day off"
    (" ".join(_WEEKDAYS),
     _w(r"(?P<p>last|this\s+past|this\s+coming|this|next)\s+(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday"
        r"|sunday)"), _en_weekday),
    ("day week month year",
     _w(rf"(?:in\s+(?:(?:about|around|just|only)\s+)?(?P<n>{_N_EN})\s+(?P<u>day|week|month|year)s?"
        r"(?!\s+(?:ago|back|before|earlier|later|old|in\s+a\s+row))"
        rf"|(?P<n2>{_N_EN})\s+(?P<u2>day|week|month|year)s?\s+from\s+(?P<now>now|today))"),
     _en_later),
    ("ago back", _w(rf"(?P<n>{_N_EN})\s+(?P<u>day|weekend|week|month|year)s?\s+(?:ago|back)"),
     lambda m, a: _ago(a, _num(m["n"]), _unit_of(m["u"]))),
    ("other", _w(r"the\s+other\s+day"), lambda m, a: _ago(a, "few", "day")),
    ("quarter", _w(r"(?P<p>last|this|next)\s+quarter"), lambda m, a: _quarter(a, _EN_OFF[m["p"].lower()])),
    ("day week month year",
     _w(rf"(?P<p>(?:(?:over|in|during)\s+)?the\s+(?:past|last)|past|last)\s+(?:(?P<n>{_N_EN})\s+)?"
        r"(?P<u>day|week|month|year)(?P<pl>s)?"), _en_past),
    ("time day date",
     _w(rf"(?:(?:around|at|on|about)\s+)?this\s+(?:(?P<day>day|date)|time)\s+(?:(?P<yr>last)\s+year"
        rf"|(?P<n>{_N_EN})\s+years?\s+ago)"), _years_back),
    ("late recent days", _w(_RECENT_EN), _recent),
    (_MONTH_NEEDLES, _w(rf"(?:on\s+)?(?:the\s+)?{_DAY_EN}(?:\s+of)?\s+{_MON_EN}(?:,?\s+{_YR_EN})?"), _en_month),
    (_MONTH_NEEDLES, _w(rf"(?:on\s+)?{_MON_EN}\s+(?:the\s+)?{_DAY_EN}(?:,?\s+{_YR_EN})?"), _en_month),
    ("19 20", _w(rf"(?:(?:in|during)\s+)?{_MON_EN},?\s+(?:of\s+)?{_YR_EN}"), _en_month),
    (_MONTH_NEEDLES,
     _w(rf"(?:(?P<p>in|during|last|this|next|early|late|mid)\s+(?:the\s+month\s+of\s+)?)?{_MON_EN}"), _en_month),
    ("spring summer autumn fall winter",
     _w(r"(?:(?P<p>last|this\s+past|this|next|in|during|over)\s+)?(?:the\s+)?"
        rf"(?P<s>spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?{_YR_EN})?"), _en_season),
    ("19 20", _w(rf"(?:in|during|back\s+in|throughout|(?:the\s+)?year|early|mid|late)\s+{_YR_EN}"),
     lambda m, a: (*_year(int(m["y"])), "year", "absolute")),
]

# Bare weekdays and weekends: read only in a direction (see lean_of).
_BARE_CN = (r"(?<![上下这本每逢个到至～~\-])(?:周|星期|礼拜)(?P<wd>[一二三四五六日天]|末)"
            r"(?![到至～~\-]|[起直样般定些点次共切边致同个气空然才真生本子常报刊])")
_BARE_EN = _w(r"(?<!every )(?<!each )(?<!\ba )(?<!\ban )(?<!any )(?<!one )(?:(?:on|over|at|during)\s+)?(?:the\s+|my\s+)?"
              r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)(?!s)"
              r"(?!\s+(?:before|after|of)\b)")  # the Monday before July 24 is anchored on that day
_BACK_CN = Lazy(r"了|过(?![年节来去]|[一二两三四五六七八九十几半\d]+个?(?:天|周|星期|礼拜|月|年)|一阵)|已经|刚刚|刚才")  # 过两天: ahead
_AHEAD_CN = Lazy(r"要(?!是)|打算|准备|计划|将要|得去|会去|想去")
_BACK_EN = Lazy(r"(?<![a-z'])(?:did|was|were|had|went|got|saw|met|ate|spent|made|took|came|left|bought|ran|drove"
                r"|flew|told|said|[a-z]{3,}ed)(?![a-z'])", re.I)
_NOT_BACK_EN = frozenset("indeed exceed proceed succeed speed breed bleed seed feed weed need".split())
_AHEAD_EN = Lazy(r"(?<![a-z])(?:will|won't|shall|gonna|going\s+to|plan(?:s|ning)?\s+to|plans?\s+for|scheduled"
                 r"|supposed\s+to)(?![a-z])|'ll(?![a-z])|(?<![a-z])(?:am|are|is)\s+(?:[a-z]+\s+)?[a-z]+ing(?![a-z])",
                 re.I)


def lean_of(text):
    """"back", "ahead" or None: which way the text's tense points (both or neither: None)."""
    back = bool(_BACK_CN.search(text)) or any(m.group().lower() not in _NOT_BACK_EN for m in _BACK_EN.finditer(text))
    ahead = bool(_AHEAD_CN.search(text) or _AHEAD_EN.search(text))
    return None if back == ahead else ("back" if back else "ahead")


# Words that say plainly a text is about what is to come: a month is read ahead only on these ("why am I
# asking" and 要 point ahead too often by chance; lean_of reads them for a bare weekday).
_PLAINLY_AHEAD = Lazy(r"(?<![a-z])(?:will|shall|gonna|going\s+to|plan(?:s|ning)?\s+to|planning|scheduled|upcoming"
                      r"|coming\s+up)(?![a-z])|'ll(?![a-z])|打算|准备|计划|将要|将会", re.I)


def _plainly_ahead(text, tense):
    """Does the text (whose lean_of is `tense`) say plainly, and only, that it is about what is to come?"""
    return tense == "ahead" and bool(_PLAINLY_AHEAD.search(text))


def _bare(m, as_of, lean):
    """A bare weekday or weekend, the latest on or before as_of (back) or the first on or after it (ahead)."""
    wd = m["wd"].lower()
    if wd in ("末", "weekend"):
        if lean == "back":
            sat = as_of - _TD((as_of.weekday() - 5) % 7)
        else:
            sat = as_of - _TD(1) if as_of.weekday() == 6 else as_of + _TD((5 - as_of.weekday()) % 7)
        return sat, sat + _TD(1), "range"
    idx = _weekday(wd)
    step = (as_of.weekday() - idx) % 7 if lean == "back" else -((idx - as_of.weekday()) % 7)
    return _on(as_of - _TD(step))


def _lunar_days(day, first, last):
    return day + _TD(first), day + _TD(last)


def _thanksgiving(year):
    """The fourth Thursday of November, through the weekend after it."""
    thursday = _nth_weekday(year, 11, 3, 4)
    return thursday, thursday + _TD(3)


def _nth_weekday(year, month, weekday, n):
    """The n-th (1, 2, ...; -1 the last) weekday (Monday 0) of a month."""
    if n > 0:
        first = _dt.date(year, month, 1)
        return first + _TD((weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = _dt.date(year, month, _month_days(year, month))
    return last - _TD((last.weekday() - weekday) % 7)


def _long_weekend(month, n):
    """A Monday holiday (n-th Monday of the month, -1 the last) with the weekend before it."""
    def days(year):
        monday = _nth_weekday(year, month, 0, n)
        return monday - _TD(2), monday
    return days


def _easter(year):
    """Good Friday through Easter Monday; Easter Sunday by the anonymous Gregorian algorithm (Meeus, ch. 8)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l) // 451
    month, day = divmod(h + l - 7 * m + 114, 31)
    sunday = _dt.date(year, month, day + 1)
    return sunday - _TD(2), sunday + _TD(1)


# A holiday's days in a given year: (month, day, days) from that day, or a function of the year.
_HOLIDAY_SPAN = {
    "christmas eve": (12, 24, 1), "平安夜": (12, 24, 1), "christmas": (12, 24, 3), "xmas": (12, 24, 3),
    "圣诞节": (12, 24, 3), "圣诞": (12, 24, 3), "new year's eve": (12, 31, 1), "跨年": (12, 31, 2),
    "new year's day": (1, 1, 1), "元旦": (1, 1, 1), "halloween": (10, 31, 1), "万圣节": (10, 31, 1),
    "valentine's day": (2, 14, 1), "valentines day": (2, 14, 1), "情人节": (2, 14, 1),
    "fourth of july": (7, 4, 1), "independence day": (7, 4, 1), "国庆节": (10, 1, 7), "国庆": (10, 1, 7),
    "劳动节": (5, 1, 5), "五一": (5, 1, 5), "十一": (10, 1, 7), "thanksgiving": _thanksgiving, "感恩节": _thanksgiving,
    "双十一": (11, 11, 1), "双11": (11, 11, 1), "光棍节": (11, 11, 1), "双十二": (12, 12, 1), "双12": (12, 12, 1),
    "singles day": (11, 11, 1), "singles' day": (11, 11, 1),
    "清明节": (4, 4, 3), "清明": (4, 4, 3), "easter": _easter, "memorial day": _long_weekend(5, -1),
    "labor day": _long_weekend(9, 1), "labour day": _long_weekend(9, 1),
    "black friday": lambda y: (_thanksgiving(y)[0] + _TD(1),) * 2,
}
for _names, _span in ((("mother's day", "mothers day", "母亲节"), lambda y: (_nth_weekday(y, 5, 6, 2),) * 2),
                      (("father's day", "fathers day", "父亲节"), lambda y: (_nth_weekday(y, 6, 6, 3),) * 2)):
    _HOLIDAY_SPAN.update(dict.fromkeys(_names, _span))
# The Chinese calendar's festivals (lunar.py): 春节 is its eve through the sixth day, as the holiday runs.
for _names, _span in (
        (("春节", "过年", "spring festival", "chinese new year", "lunar new year"),
         lambda y: _lunar_days(lunar.spring_festival(y), -1, 6)),
        (("除夕", "大年三十", "年三十"), lambda y: _lunar_days(lunar.spring_festival(y), -1, -1)),
        (("大年初一", "正月初一"), lambda y: _lunar_days(lunar.spring_festival(y), 0, 0)),
        (("元宵节",), lambda y: _lunar_days(lunar.spring_festival(y), 14, 14)),
        (("端午节", "端午", "dragon boat festival"), lambda y: _lunar_days(lunar.dragon_boat(y), 0, 0)),
        (("中秋节", "中秋", "mid-autumn festival", "mid autumn festival", "moon festival"),
         lambda y: _lunar_days(lunar.mid_autumn(y), 0, 0))):
    _HOLIDAY_SPAN.update(dict.fromkeys(_names, _span))
_YEAR_LEAD = dict(_YEAR_OFF, this=0, next=1)  # "last" is the latest one over, not last year's


def _holiday_days(name, year):
    span = _HOLIDAY_SPAN[name]
    if callable(span):
        return span(year)
    month, day, days = span
    start = _dt.date(year, month, day)
    return start, start + _TD(days - 1)


# Words of a holiday's name that any date could have (Chinese New Year, New Year's Eve, Mid-Autumn Festival)
_DATE_ONLY = frozenset(("new", "year", "year's", "years", "day", "eve", "festival"))


def _naming(said):
    """The words of a holiday's name that say what it is, not only when: Chinese of Chinese New Year."""
    return " ".join(w for w in said.split() if _key(w).replace("’", "'") not in _DATE_ONLY)


def _holiday(m, as_of, lean):
    """A holiday: in the year it names (2024, 去年, this), else the last one (last) or the one the
    words point to: the latest begun by as_of (back) or the first not yet over (ahead)."""
    name, lead = _key(m["h"]).replace("’", "'"), _key(m["p"] or "")
    if m["y"]:
        lo, hi = _holiday_days(name, int(m["y"]))
        return lo, hi, "range", "absolute", _naming(m["h"])
    if lead in _YEAR_LEAD:
        lo, hi = _holiday_days(name, as_of.year + _YEAR_LEAD[lead])
        return lo, hi, "range", "relative", _naming(m["h"])
    lo, hi = _holiday_days(name, as_of.year)
    if lead == "last" or lean == "back":
        if lo > as_of:
            lo, hi = _holiday_days(name, as_of.year - 1)
        if lead == "last" and hi >= as_of:  # not the one under way
            lo, hi = _holiday_days(name, as_of.year - 1)
    elif lean == "ahead":
        if hi < as_of:
            lo, hi = _holiday_days(name, as_of.year + 1)
    else:
        return None
    return lo, hi, "range", "relative", _naming(m["h"])


_HOLIDAY_EN = _w(r"(?:(?P<p>last|this|next)\s+)?(?P<h>christmas\s+eve|christmas|xmas|new\s+year['’]s\s+(?:eve|day)"
                 r"|halloween|valentine['’]?s\s+day|fourth\s+of\s+july|independence\s+day|thanksgiving"
                 r"|(?:chinese|lunar)\s+new\s+year|spring\s+festival|mid[\s-]autumn\s+festival|moon\s+festival"
                 r"|dragon\s+boat\s+festival|easter|memorial\s+day|labou?r\s+day|black\s+friday"
                 r"|(?:mother|father)['’]?s\s+day|singles['’]?\s+day)(?:\s+weekend)?"
                 r"(?:,?\s+(?P<y>(?:19|20)\d{2}))?")
_HOLIDAY_CN = (r"(?:(?P<y>(?:19|20)\d{2})年的?|(?P<p>大前年|前年|去年|今年|明年|后年)的?)?"
               r"(?P<h>平安夜|圣诞节|圣诞|跨年|元旦|万圣节|情人节|国庆节|国庆|劳动节|感恩节|春节|过年|除夕|大年三十|年三十"
               r"|大年初一|正月初一|元宵节|端午节|端午|中秋节|中秋|双十一|双11|光棍节|双十二|双12|母亲节|父亲节|清明节|清明"
               # 五一 and 十一 are the May and October holidays only where no number runs on (二十五一共, 十一点)
               r"|(?<![一二三四五六七八九十百千万零两\d])五一(?![一二三四五六七八九十百千万零两\d点号日月年个路班楼次岁])"
               r"|(?<![一二三四五六七八九十百千万零两\d第双])十一(?=长假|假期|黄金周|期间|放假))")


# Digits must stand alone: file_2025-03-05.txt and cap-2026-11-30-x are ids.
_ISO_RULE = (
    r"(?<![A-Za-z0-9_\-/.:#@])(?P<y>(?:19|20)\d{2})(?P<sep>[-/])(?P<m>\d{1,2})"
    r"(?:(?P=sep)(?P<d>\d{1,2})(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?)?)?(?![A-Za-z0-9_\-/@#]|[.:]\w)",
    lambda m, a: _on(_dt.date(int(m["y"]), int(m["m"]), int(m["d"])), "absolute") if m["d"]
    else (*_month(int(m["y"]), int(m["m"])), "month", "absolute"),
)



def _rule(needles, pattern, handler, flags=0):
    """A rule, compiled the first time a text holds one of its needles (compiling every rule cost
    more than most probes). Every match of the pattern holds one: Chinese needles are characters,
    English ones parts of words."""
    return (frozenset(needles.split() if needles.isascii() else needles), Lazy(pattern, flags), handler)


_MONTH_HANDLERS = (_cn_month_day, _en_month)  # a month or day named without a year
_WEEK_HANDLERS = (_cn_week, _en_rel_unit, _en_weekday)  # this weekend, 这周末: read back, the one just gone
_LATER_HANDLERS = (_cn_later, _en_later)  # in two weeks, 三个月后: read by the text's own tense
_RULES = ([_rule(n, p, f) for n, p, f in _CN_RULES] + [_rule("19 20", _ISO_RULE[0], _ISO_RULE[1])]
          + [_rule(n, p, f, re.I) for n, p, f in _EN_RULES])
# Bare weekdays and weekends: read only in a direction.
_BARE_RULES = [_rule("周星礼", _BARE_CN, _bare), _rule(" ".join(_WEEKDAYS + ("weekend",)), _BARE_EN, _bare, re.I)]
# Holidays, read only in a question (resolve(holidays=True)): a text that names Christmas is seldom
# about the day it would be read as.
_HOLIDAY_RULES = [_rule("夜诞跨旦圣情庆劳恩春夕三初宵端秋双棍五十母父清过", _HOLIDAY_CN, _holiday),
                  _rule("christmas xmas year halloween valentine july independence thanksgiving festival easter "
                        "memorial labor labour black mother father singles",
                        _HOLIDAY_EN, _holiday, re.I)]
_COMING_RULES = [_rule("接未今往待要该得安", _COMING_CN, _coming),
                 _rule("upcoming coming future soon to plate follow next", _w(_COMING_EN), _coming, re.I),
                 _rule("new", _w(_NEW_EN), _recent, re.I)]
_NEEDLES = frozenset(n for needles, _rx, _h in _RULES + _BARE_RULES + _HOLIDAY_RULES + _COMING_RULES for n in needles)
# Every needle a text holds is found by a substring test each: 128 of them cost a question a few
# microseconds, where one pattern of them all cost 1.3 ms to compile and was slower to run over a long turn.
_PLAIN_NEEDLES = tuple(_NEEDLES.difference(_MONTHS))
# A month's name is a word of its own in every rule: "mar" in marathon, "nov" in novel or "dec" in decided
# must not cost compiling and running the month rules.
_MONTH_WORD = Lazy("(?<![a-z])(" + "|".join(_MONTHS) + ")(?:uary|ruary|ch|il|e|y|ust|t|tember|ober|ember)?(?![a-z])",
                   needs=tuple(_MONTHS))


def _needles_in(text):
    folded = text.translate(_FOLD_I).lower()
    found = {n for n in _PLAIN_NEEDLES if n in folded}
    found.update(m.group(1) for m in _MONTH_WORD.finditer(folded))
    return found


def _holds(rules, handlers):
    return any(h in handlers for _rx, h in rules)


def _bound(rules, handlers, **reading):
    """`rules` with each of `handlers` called with `reading` too (what the whole text says: its tense)."""
    return [(rx, lambda m, a, h=h: h(m, a, **reading)) if h in handlers else (rx, h) for rx, h in rules]


def _rules(found, rules=_RULES):
    """The rules that could match a text holding the needles `found`, in rule order."""
    return [(rx, handler) for needles, rx, handler in rules if not needles.isdisjoint(found)]


# ---------------------------------------------------------------- public API

def resolve(text, as_of, lean=None, holidays=False):
    """Every time expression in `text`, in order, resolved against `as_of`.

    Overlapping readings are settled longest first (2025年3月5日 is one
    expression, not 2025年 + 3月 + 5日). Anything inside a URL or e-mail
    address is ignored. `lean` ("back" or "ahead") is the direction a bare
    weekday or weekend is read in when the text itself does not say (lean_of).
    `holidays`: read holidays too (圣诞节, last Thanksgiving, 去年国庆), as a question does.
    """
    if isinstance(as_of, _dt.datetime):
        as_of = as_of.date()
    if not text:
        return []
    norm = text.translate(_WIDTH)
    could_link = "://" in norm or "@" in norm or "www." in norm.lower()
    masked = [u.span() for u in _URL.finditer(norm)] if could_link else []
    found = []
    found_needles = _needles_in(norm)
    rules = _rules(found_needles)
    bare = _rules(found_needles, _BARE_RULES)
    named = _rules(found_needles, _HOLIDAY_RULES) if holidays else []
    coming = _rules(found_needles, _COMING_RULES) if holidays else []
    months = len(norm) <= AHEAD_MONTH_CHARS and _holds(rules, _MONTH_HANDLERS)
    later = _holds(rules, _LATER_HANDLERS)
    tense = lean_of(norm) if months or later or bare or named else None  # the text's own lean, read once
    if months and _plainly_ahead(norm, tense):
        # "I'll visit Paris in March", "明年...三月要去日本" said in December: the coming one. A longer text
        # often tells of past and future dates together, and is left to look back.
        rules = _bound(rules, _MONTH_HANDLERS, ahead=True)
    if later:
        rules = _bound(rules, _LATER_HANDLERS, lean=tense)
    if coming and any(rx.search(norm) for rx, _h in coming):
        lean = "ahead"  # 周末有什么安排: a question about plans asks about the coming weekend
    direction = (tense or lean) if bare or named else None
    if direction == "back":
        rules = _bound(rules, _WEEK_HANDLERS, back=True)
    # a bare weekday is left alone when the words point nowhere; a holiday can still name its year
    directed = (bare if direction else []) + named
    rules += [(rx, lambda m, a, h=handler: h(m, a, direction)) for rx, handler in directed] + coming
    for rx, handler in rules:
        for m in rx.finditer(norm):
            s, e = m.span()
            if s == e or any(ms < e and s < me for ms, me in masked):
                continue
            try:
                got = handler(m, as_of)
            except KeyError:
                got = None
            except (ValueError, OverflowError):
                # 2025年2月29日 names no day, but it still holds its span so the
                # 2月29日 inside it is not read as some other year's date.
                got = ()
            if got is not None:
                found.append((s, e, got))
    found = _narrow(norm, found)
    taken = []
    for s, e, got in sorted(found, key=lambda c: (c[0] - c[1], c[0])):
        if all(e <= ts or te <= s for ts, te, _ in taken):
            taken.append((s, e, got))
    return [
        dict({"expression": text[s:e], "start": s, "end": e, "from": got[0].isoformat(),
              "to": got[1].isoformat(), "precision": got[2], "kind": (got[3:] or ("relative",))[0]},
             **({"holiday": got[4]} if len(got) > 4 else {}))  # the holiday's naming words are words of the text too
        for s, e, got in sorted(taken, key=lambda c: c[0]) if got
    ]


def strip_expressions(text, found):
    """`text` without the expressions in `found` (from `resolve` on the same text)."""
    out = text
    for f in sorted(found, key=lambda f: f["start"], reverse=True):
        s, e = f["start"], f["end"]
        if out[s:e] != f["expression"]:
            continue
        # Only two Latin words left touching need a space to stay apart.
        pair = out[s - 1:s] + out[e:e + 1]
        glue = " " if len(pair) == 2 and pair.isascii() and pair.isalnum() else ""
        out = out[:s] + glue + out[e:]
    out = re.sub(r"[ \t]{2,}", " ", out)
    out = re.sub(r" +([,.!?;:，。！？；：、])", r"\1", out)
    return re.sub(r"^[\s,，、;；:：]+|\s+$", "", out)


_WINDOW_SIDE = Lazy(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?")
_WINDOW_RANGE = Lazy(r"\s*(?:\.\.|/|:)\s*")  # 2024-06:2024-08, 2024-06..2024-08, 2024-06/2024-08
_WINDOW_LEFT = Lazy(r"(?i)[\s,，、;；~～\-–—]+|\b(?:and|to|or|through)\b|[和与及到至或]")  # between two times
_WINDOW_HINT = ("Use YYYY, YYYY-MM, YYYY-MM-DD or FROM:TO with either side open (2025-03, 2024-06:), "
                "or a time as a question says it (last week, 上个月).")


def _window_side(part, spec):
    m = _WINDOW_SIDE.fullmatch(part)
    try:
        if m and m[3]:
            return _on(_dt.date(int(m[1]), int(m[2]), int(m[3])))[:2]
        if m:
            return _month(int(m[1]), int(m[2])) if m[2] else _year(int(m[1]))
    except ValueError:
        pass
    raise PuError("BAD_WINDOW", f"cannot read {part!r} in window {spec!r} as a date", _WINDOW_HINT)


def parse_window(spec, today=None):
    """`--window` value to an inclusive (from, to) pair of ISO dates; open sides are
    OPEN_START / OPEN_END. Besides dates, a time as a question says it ("last week", 上个月),
    read against `today`, covering every expression it holds."""
    raw = str(spec or "").strip().translate(_WIDTH)
    if not raw:
        raise PuError("BAD_WINDOW", "the window is empty", _WINDOW_HINT)
    parts = _WINDOW_RANGE.split(raw)
    if not all(p == "" or _WINDOW_SIDE.fullmatch(p) for p in parts) and today is not None:
        said = resolve(raw, today, holidays=True)
        if said and not _WINDOW_LEFT.sub("", strip_expressions(raw, said)):
            return min(t["from"] for t in said), max(t["to"] for t in said)
    if len(parts) == 1:
        lo, hi = _window_side(raw, spec)
        return lo.isoformat(), hi.isoformat()
    if len(parts) != 2 or not any(parts):
        raise PuError("BAD_WINDOW", f"window {spec!r} needs one ':' and at least one date", _WINDOW_HINT)
    left, right = parts
    lo = _window_side(left, spec)[0].isoformat() if left else OPEN_START
    hi = _window_side(right, spec)[1].isoformat() if right else OPEN_END
    if lo > hi:
        raise PuError("BAD_WINDOW", f"window {spec!r} ends before it starts", _WINDOW_HINT)
    return lo, hi
