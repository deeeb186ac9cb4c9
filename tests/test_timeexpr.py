"""Time expressions in recall queries: resolution, boundaries, false positives, windows."""

import datetime
import unittest

import tests  # noqa: F401  (puts scripts/ on sys.path)
from personal_understanding.retrieval import lunar, timeexpr
from personal_understanding.errors import PuError
from personal_understanding.retrieval.timeexpr import (
    OPEN_END,
    OPEN_START,
    parse_window,
    resolve,
    strip_expressions,
)

D = datetime.date
WED = D(2026, 3, 4)  # a Wednesday, four days into March and into spring
SAT = D(2026, 1, 10)  # a Saturday in January, inside a winter that began last year
NYE = D(2025, 12, 31)  # a Wednesday whose week runs into the next year
LEAP = D(2024, 3, 15)  # the month after a 29-day February

# (text, as_of, from, to, precision, kind); the whole text is the one expression.
TABLE = [
    # days
    ("今天", WED, "2026-03-04", "2026-03-04", "day", "relative"),
    ("昨天", WED, "2026-03-03", "2026-03-03", "day", "relative"),
    ("前天", WED, "2026-03-02", "2026-03-02", "day", "relative"),
    ("大前天", WED, "2026-03-01", "2026-03-01", "day", "relative"),
    ("明天", WED, "2026-03-05", "2026-03-05", "day", "relative"),
    ("后天", WED, "2026-03-06", "2026-03-06", "day", "relative"),
    ("昨晚", WED, "2026-03-03", "2026-03-03", "day", "relative"),
    ("today", WED, "2026-03-04", "2026-03-04", "day", "relative"),
    ("yesterday", WED, "2026-03-03", "2026-03-03", "day", "relative"),
    ("the day before yesterday", WED, "2026-03-02", "2026-03-02", "day", "relative"),
    ("tomorrow", WED, "2026-03-05", "2026-03-05", "day", "relative"),
    ("last night", WED, "2026-03-03", "2026-03-03", "day", "relative"),
    ("Today", WED, "2026-03-04", "2026-03-04", "day", "relative"),
    # weeks (Monday first)
    ("上周", WED, "2026-02-23", "2026-03-01", "week", "relative"),
    ("上个星期", WED, "2026-02-23", "2026-03-01", "week", "relative"),
    ("上礼拜", WED, "2026-02-23", "2026-03-01", "week", "relative"),
    ("上上周", WED, "2026-02-16", "2026-02-22", "week", "relative"),
    ("这周", WED, "2026-03-02", "2026-03-08", "week", "relative"),
    ("本周", WED, "2026-03-02", "2026-03-08", "week", "relative"),
    ("这个星期", WED, "2026-03-02", "2026-03-08", "week", "relative"),
    ("下周", WED, "2026-03-09", "2026-03-15", "week", "relative"),
    ("下个礼拜", WED, "2026-03-09", "2026-03-15", "week", "relative"),
    ("上周三", WED, "2026-02-25", "2026-02-25", "day", "relative"),
    ("上周日", WED, "2026-03-01", "2026-03-01", "day", "relative"),
    ("这个星期天", WED, "2026-03-08", "2026-03-08", "day", "relative"),
    ("下周一", WED, "2026-03-09", "2026-03-09", "day", "relative"),
    ("这周末", WED, "2026-03-07", "2026-03-08", "range", "relative"),
    ("last week", WED, "2026-02-23", "2026-03-01", "week", "relative"),
    ("this week", WED, "2026-03-02", "2026-03-08", "week", "relative"),
    ("next week", WED, "2026-03-09", "2026-03-15", "week", "relative"),
    ("the week before last", WED, "2026-02-16", "2026-02-22", "week", "relative"),
    ("last weekend", WED, "2026-02-28", "2026-03-01", "range", "relative"),
    # months
    ("上个月", WED, "2026-02-01", "2026-02-28", "month", "relative"),
    ("上月", WED, "2026-02-01", "2026-02-28", "month", "relative"),
    ("这个月", WED, "2026-03-01", "2026-03-31", "month", "relative"),
    ("本月", WED, "2026-03-01", "2026-03-31", "month", "relative"),
    ("下个月", WED, "2026-04-01", "2026-04-30", "month", "relative"),
    ("上上个月", WED, "2026-01-01", "2026-01-31", "month", "relative"),
    ("上个月5号", WED, "2026-02-05", "2026-02-05", "day", "relative"),
    ("last month", WED, "2026-02-01", "2026-02-28", "month", "relative"),
    ("this month", WED, "2026-03-01", "2026-03-31", "month", "relative"),
    ("next month", WED, "2026-04-01", "2026-04-30", "month", "relative"),
    ("the month before last", WED, "2026-01-01", "2026-01-31", "month", "relative"),
    # a part of a month or year, said before or after it
    ("三月初", WED, "2026-03-01", "2026-03-10", "range", "relative"),
    ("上个月底", WED, "2026-02-21", "2026-02-28", "range", "relative"),
    ("十二月中旬", WED, "2025-12-11", "2025-12-20", "range", "relative"),
    ("11月第一周", WED, "2025-11-01", "2025-11-07", "range", "relative"),
    ("二月最后一周", WED, "2026-02-22", "2026-02-28", "range", "relative"),
    ("月初", WED, "2026-03-01", "2026-03-10", "range", "relative"),
    ("年底", WED, "2026-11-01", "2026-12-31", "range", "relative"),
    ("去年年底", WED, "2025-11-01", "2025-12-31", "range", "relative"),
    ("今年上半年", WED, "2026-01-01", "2026-06-30", "range", "relative"),
    ("early March", WED, "2026-03-01", "2026-03-10", "range", "relative"),
    ("mid-February", WED, "2026-02-11", "2026-02-20", "range", "relative"),
    ("late January", WED, "2026-01-21", "2026-01-31", "range", "relative"),
    ("the first week of February", WED, "2026-02-01", "2026-02-07", "range", "relative"),
    ("the last week of February", WED, "2026-02-22", "2026-02-28", "range", "relative"),
    ("the second half of January", WED, "2026-01-16", "2026-01-31", "range", "relative"),
    ("the end of last month", WED, "2026-02-21", "2026-02-28", "range", "relative"),
    ("the beginning of last year", WED, "2025-01-01", "2025-02-28", "range", "relative"),
    ("the end of March 2025", WED, "2025-03-21", "2025-03-31", "range", "absolute"),
    ("early 2025", WED, "2025-01-01", "2025-02-28", "range", "absolute"),
    # the same time of an earlier year: its day, or the month around it
    ("去年这个时候", WED, "2025-02-17", "2025-03-19", "range", "relative"),
    ("两年前的今天", WED, "2024-03-04", "2024-03-04", "day", "relative"),
    ("去年的今天", LEAP, "2023-03-15", "2023-03-15", "day", "relative"),
    ("this time last year", WED, "2025-02-17", "2025-03-19", "range", "relative"),
    ("on this day two years ago", WED, "2024-03-04", "2024-03-04", "day", "relative"),
    # years
    ("去年", WED, "2025-01-01", "2025-12-31", "year", "relative"),
    ("今年", WED, "2026-01-01", "2026-12-31", "year", "relative"),
    ("前年", WED, "2024-01-01", "2024-12-31", "year", "relative"),
    ("大前年", WED, "2023-01-01", "2023-12-31", "year", "relative"),
    ("明年", WED, "2027-01-01", "2027-12-31", "year", "relative"),
    ("last year", WED, "2025-01-01", "2025-12-31", "year", "relative"),
    ("this year", WED, "2026-01-01", "2026-12-31", "year", "relative"),
    ("next year", WED, "2027-01-01", "2027-12-31", "year", "relative"),
    ("the year before last", WED, "2024-01-01", "2024-12-31", "year", "relative"),
    ("2019年", WED, "2019-01-01", "2019-12-31", "year", "absolute"),
    ("二〇一九年", WED, "2019-01-01", "2019-12-31", "year", "absolute"),
    ("in 2019", WED, "2019-01-01", "2019-12-31", "year", "absolute"),
    ("back in 2019", WED, "2019-01-01", "2019-12-31", "year", "absolute"),
    ("the year 2019", WED, "2019-01-01", "2019-12-31", "year", "absolute"),
    # seasons
    ("去年夏天", WED, "2025-06-01", "2025-08-31", "season", "relative"),
    ("今年春天", WED, "2026-03-01", "2026-05-31", "season", "relative"),
    ("今年的夏天", WED, "2026-06-01", "2026-08-31", "season", "relative"),
    ("前年秋天", WED, "2024-09-01", "2024-11-30", "season", "relative"),
    ("夏天", WED, "2025-06-01", "2025-08-31", "season", "relative"),
    ("春天", WED, "2026-03-01", "2026-05-31", "season", "relative"),
    ("秋季", WED, "2025-09-01", "2025-11-30", "season", "relative"),
    ("冬天", WED, "2025-12-01", "2026-02-28", "season", "relative"),
    ("这个冬天", WED, "2026-12-01", "2027-02-28", "season", "relative"),
    ("2024年夏天", WED, "2024-06-01", "2024-08-31", "season", "absolute"),
    ("last summer", WED, "2025-06-01", "2025-08-31", "season", "relative"),
    ("this winter", WED, "2026-12-01", "2027-02-28", "season", "relative"),
    ("last winter", WED, "2025-12-01", "2026-02-28", "season", "relative"),
    ("next summer", WED, "2026-06-01", "2026-08-31", "season", "relative"),
    ("last fall", WED, "2025-09-01", "2025-11-30", "season", "relative"),
    ("in the summer", WED, "2025-06-01", "2025-08-31", "season", "relative"),
    ("summer 2019", WED, "2019-06-01", "2019-08-31", "season", "absolute"),
    ("in the fall of 2019", WED, "2019-09-01", "2019-11-30", "season", "absolute"),
    # named months and dates
    ("三月", WED, "2026-03-01", "2026-03-31", "month", "relative"),
    ("3月", WED, "2026-03-01", "2026-03-31", "month", "relative"),
    ("三月份", WED, "2026-03-01", "2026-03-31", "month", "relative"),
    ("四月", WED, "2025-04-01", "2025-04-30", "month", "relative"),
    ("十二月", WED, "2025-12-01", "2025-12-31", "month", "relative"),
    ("十一月", WED, "2025-11-01", "2025-11-30", "month", "relative"),
    ("12月", WED, "2025-12-01", "2025-12-31", "month", "relative"),
    ("2025年3月", WED, "2025-03-01", "2025-03-31", "month", "absolute"),
    ("2025年3月5日", WED, "2025-03-05", "2025-03-05", "day", "absolute"),
    ("2025年十二月三十一日", WED, "2025-12-31", "2025-12-31", "day", "absolute"),
    ("去年3月", WED, "2025-03-01", "2025-03-31", "month", "relative"),
    ("今年三月五号", WED, "2026-03-05", "2026-03-05", "day", "relative"),
    ("3月5日", WED, "2025-03-05", "2025-03-05", "day", "relative"),
    ("3月4号", WED, "2026-03-04", "2026-03-04", "day", "relative"),
    ("十二月二十五日", WED, "2025-12-25", "2025-12-25", "day", "relative"),
    ("２０２５年３月５日", WED, "2025-03-05", "2025-03-05", "day", "absolute"),
    ("in March", WED, "2026-03-01", "2026-03-31", "month", "relative"),
    ("in May", WED, "2025-05-01", "2025-05-31", "month", "relative"),
    ("December", WED, "2025-12-01", "2025-12-31", "month", "relative"),
    ("last March", WED, "2025-03-01", "2025-03-31", "month", "relative"),
    ("next March", WED, "2027-03-01", "2027-03-31", "month", "relative"),
    ("this March", WED, "2026-03-01", "2026-03-31", "month", "relative"),
    ("March 2025", WED, "2025-03-01", "2025-03-31", "month", "absolute"),
    ("Dec 2025", WED, "2025-12-01", "2025-12-31", "month", "absolute"),
    ("March 5", WED, "2025-03-05", "2025-03-05", "day", "relative"),
    ("March 3rd", WED, "2026-03-03", "2026-03-03", "day", "relative"),
    ("March 5, 2025", WED, "2025-03-05", "2025-03-05", "day", "absolute"),
    ("5 March 2025", WED, "2025-03-05", "2025-03-05", "day", "absolute"),
    ("on the 5th of March", WED, "2025-03-05", "2025-03-05", "day", "relative"),
    ("2025-03", WED, "2025-03-01", "2025-03-31", "month", "absolute"),
    ("2025-03-05", WED, "2025-03-05", "2025-03-05", "day", "absolute"),
    ("2025/3/5", WED, "2025-03-05", "2025-03-05", "day", "absolute"),
    ("2025-03-05T10:00:00Z", WED, "2025-03-05", "2025-03-05", "day", "absolute"),
    # N units ago
    ("三天前", WED, "2026-03-01", "2026-03-01", "day", "relative"),
    ("两周前", WED, "2026-02-16", "2026-02-22", "week", "relative"),
    ("两个星期前", WED, "2026-02-16", "2026-02-22", "week", "relative"),
    ("三个月前", WED, "2025-12-01", "2025-12-31", "month", "relative"),
    ("两年前", WED, "2024-01-01", "2024-12-31", "year", "relative"),
    ("十年前", WED, "2016-01-01", "2016-12-31", "year", "relative"),
    ("二十年以前", WED, "2006-01-01", "2006-12-31", "year", "relative"),
    ("3天前", WED, "2026-03-01", "2026-03-01", "day", "relative"),
    ("半年前", WED, "2025-09-01", "2025-09-30", "month", "relative"),
    ("半个月前", WED, "2026-02-16", "2026-02-22", "week", "relative"),
    ("几年前", WED, "2020-01-01", "2024-12-31", "range", "relative"),
    ("好几年前", WED, "2020-01-01", "2024-12-31", "range", "relative"),
    ("几个月前", WED, "2025-09-01", "2026-01-31", "range", "relative"),
    ("几天前", WED, "2026-02-26", "2026-03-02", "range", "relative"),
    ("前几天", WED, "2026-02-26", "2026-03-02", "range", "relative"),
    ("3 days ago", WED, "2026-03-01", "2026-03-01", "day", "relative"),
    ("two weeks ago", WED, "2026-02-16", "2026-02-22", "week", "relative"),
    ("two weekends ago", WED, "2026-02-21", "2026-02-22", "range", "relative"),
    ("a weekend ago", WED, "2026-02-28", "2026-03-01", "range", "relative"),
    ("a week ago", WED, "2026-02-23", "2026-03-01", "week", "relative"),
    ("a month ago", WED, "2026-02-01", "2026-02-28", "month", "relative"),
    ("two years ago", WED, "2024-01-01", "2024-12-31", "year", "relative"),
    ("a couple of weeks ago", WED, "2026-02-16", "2026-02-22", "week", "relative"),
    ("a few years ago", WED, "2020-01-01", "2024-12-31", "range", "relative"),
    ("several days ago", WED, "2026-02-26", "2026-03-02", "range", "relative"),
    ("half a year ago", WED, "2025-09-01", "2025-09-30", "month", "relative"),
    # recent and past-N windows
    ("最近", WED, "2026-02-02", "2026-03-04", "range", "relative"),
    ("这阵子", WED, "2026-02-02", "2026-03-04", "range", "relative"),
    ("近来", WED, "2026-02-02", "2026-03-04", "range", "relative"),
    ("这段时间", WED, "2026-02-02", "2026-03-04", "range", "relative"),
    ("lately", WED, "2026-02-02", "2026-03-04", "range", "relative"),
    ("recently", WED, "2026-02-02", "2026-03-04", "range", "relative"),
    ("these days", WED, "2026-02-02", "2026-03-04", "range", "relative"),
    ("这几天", WED, "2026-02-26", "2026-03-04", "range", "relative"),
    ("这两天", WED, "2026-02-26", "2026-03-04", "range", "relative"),
    ("the past few days", WED, "2026-02-26", "2026-03-04", "range", "relative"),
    ("最近三天", WED, "2026-03-01", "2026-03-04", "range", "relative"),
    ("近两个月", WED, "2026-01-04", "2026-03-04", "range", "relative"),
    ("过去一年", WED, "2025-03-04", "2026-03-04", "range", "relative"),
    ("这几个月", WED, "2025-09-04", "2026-03-04", "range", "relative"),
    ("last saturday", WED, "2026-02-28", "2026-02-28", "day", "relative"),
    ("this past monday", WED, "2026-03-02", "2026-03-02", "day", "relative"),
    ("this friday", WED, "2026-03-06", "2026-03-06", "day", "relative"),
    ("this coming monday", WED, "2026-03-09", "2026-03-09", "day", "relative"),
    ("next saturday", WED, "2026-03-14", "2026-03-14", "day", "relative"),
    ("last wednesday", WED, "2026-02-25", "2026-02-25", "day", "relative"),
    ("这两年", WED, "2024-03-04", "2026-03-04", "range", "relative"),
    ("这三周", WED, "2026-02-11", "2026-03-04", "range", "relative"),
    ("the past week", WED, "2026-02-25", "2026-03-04", "range", "relative"),
    ("the last 2 months", WED, "2026-01-04", "2026-03-04", "range", "relative"),
    ("over the past year", WED, "2025-03-04", "2026-03-04", "range", "relative"),
    # boundaries: weeks across a month or a year, January, winter, leap years
    ("上周", SAT, "2025-12-29", "2026-01-04", "week", "relative"),
    ("这周", NYE, "2025-12-29", "2026-01-04", "week", "relative"),
    ("下周", NYE, "2026-01-05", "2026-01-11", "week", "relative"),
    ("明天", NYE, "2026-01-01", "2026-01-01", "day", "relative"),
    ("下个月", NYE, "2026-01-01", "2026-01-31", "month", "relative"),
    ("明年", NYE, "2026-01-01", "2026-12-31", "year", "relative"),
    ("上个月", SAT, "2025-12-01", "2025-12-31", "month", "relative"),
    ("last month", SAT, "2025-12-01", "2025-12-31", "month", "relative"),
    ("三个月前", SAT, "2025-10-01", "2025-10-31", "month", "relative"),
    ("a week ago", SAT, "2025-12-29", "2026-01-04", "week", "relative"),
    ("这周末", SAT, "2026-01-10", "2026-01-11", "range", "relative"),
    ("十二月", SAT, "2025-12-01", "2025-12-31", "month", "relative"),
    ("一月", SAT, "2026-01-01", "2026-01-31", "month", "relative"),
    ("冬天", SAT, "2025-12-01", "2026-02-28", "season", "relative"),
    ("今年冬天", SAT, "2025-12-01", "2026-02-28", "season", "relative"),
    ("去年冬天", SAT, "2024-12-01", "2025-02-28", "season", "relative"),
    ("this winter", SAT, "2025-12-01", "2026-02-28", "season", "relative"),
    ("last winter", SAT, "2024-12-01", "2025-02-28", "season", "relative"),
    ("冬天", NYE, "2025-12-01", "2026-02-28", "season", "relative"),
    ("上个月", LEAP, "2024-02-01", "2024-02-29", "month", "relative"),
    ("a month ago", LEAP, "2024-02-01", "2024-02-29", "month", "relative"),
    ("冬天", LEAP, "2023-12-01", "2024-02-29", "season", "relative"),
    ("winter 2023", LEAP, "2023-12-01", "2024-02-29", "season", "absolute"),
    ("2月29日", LEAP, "2024-02-29", "2024-02-29", "day", "relative"),
    ("2000年2月", LEAP, "2000-02-01", "2000-02-29", "month", "absolute"),  # a leap century
    ("February 1900", LEAP, "1900-02-01", "1900-02-28", "month", "absolute"),  # a century that is not
    ("2月29日", D(2025, 6, 1), "2024-02-29", "2024-02-29", "day", "relative"),
    ("2月29日", D(2024, 2, 28), "2020-02-29", "2020-02-29", "day", "relative"),
    ("Feb 29", D(2027, 1, 1), "2024-02-29", "2024-02-29", "day", "relative"),
    ("2024年2月29日", WED, "2024-02-29", "2024-02-29", "day", "absolute"),
    ("过去一个月", D(2024, 3, 31), "2024-02-29", "2024-03-31", "range", "relative"),
    # bare month and season: the latest one that has started
    ("三月", D(2026, 2, 15), "2025-03-01", "2025-03-31", "month", "relative"),
    ("三月", D(2026, 3, 1), "2026-03-01", "2026-03-31", "month", "relative"),
    ("夏天", D(2026, 5, 31), "2025-06-01", "2025-08-31", "season", "relative"),
    ("夏天", D(2026, 6, 1), "2026-06-01", "2026-08-31", "season", "relative"),
    ("last summer", D(2026, 7, 1), "2025-06-01", "2025-08-31", "season", "relative"),
    ("last summer", D(2026, 9, 1), "2026-06-01", "2026-08-31", "season", "relative"),
    ("next summer", D(2026, 6, 15), "2027-06-01", "2027-08-31", "season", "relative"),
    ("last March", D(2026, 4, 2), "2026-03-01", "2026-03-31", "month", "relative"),
    # "how was my week?": up to the day it is asked, as "the past week" (a Monday's question is about last week)
    ("my week", WED, "2026-02-25", "2026-03-04", "range", "relative"),
    ("my month", WED, "2026-02-04", "2026-03-04", "range", "relative"),
    ("my day", WED, "2026-03-04", "2026-03-04", "day", "relative"),
    # 大上周 is 上上周, 大下周 下下周; "couple" may go without "of"; 过去这一年 is 过去一年
    ("大上周", WED, "2026-02-16", "2026-02-22", "week", "relative"),
    ("大下周", WED, "2026-03-16", "2026-03-22", "week", "relative"),
    ("大上个月", WED, "2026-01-01", "2026-01-31", "month", "relative"),
    ("过去这一年", WED, "2025-03-04", "2026-03-04", "range", "relative"),
    ("a couple weeks ago", WED, "2026-02-16", "2026-02-22", "week", "relative"),
    ("the past couple weeks", WED, "2026-02-18", "2026-03-04", "range", "relative"),
]


def one(text, as_of):
    found = resolve(text, as_of)
    return found[0] if len(found) == 1 else found


class ResolveTableTest(unittest.TestCase):
    def test_table(self):
        for text, as_of, lo, hi, precision, kind in TABLE:
            with self.subTest(text=text, as_of=as_of):
                got = one(text, as_of)
                self.assertIsInstance(got, dict, f"expected one expression, got {got}")
                self.assertEqual(got["expression"], text)
                self.assertEqual((got["start"], got["end"]), (0, len(text)))
                self.assertEqual((got["from"], got["to"], got["precision"], got["kind"]),
                                 (lo, hi, precision, kind))
                self.assertLessEqual(got["from"], got["to"])

    def test_table_is_generous(self):
        self.assertGreaterEqual(len(TABLE), 180)

    def test_a_rule_is_tried_only_where_its_needles_are(self):
        # A rule is compiled and run only on a text holding one of its needles: every match of every
        # rule must hold one, or a date the user wrote would go unread.
        samples = [row[0] for row in TABLE] + [
            "上周六我们去爬山了", "周末要去看牙", "on Friday I went home", "over the weekend we moved",
            "two weeks ago", "in the past three days", "2025-03-05", "March 5th, 2024", "the 3rd of May 2023"]
        months = set(timeexpr._MONTHS)
        for text in samples + ["yesterday's weekend", "todays", "the eveningday"]:
            # one pass finds each needle a plain substring test finds, overlapping ones too
            folded = text.translate(timeexpr._FOLD_I).lower()
            found = timeexpr._needles_in(text)
            self.assertEqual(found - months, {n for n in timeexpr._NEEDLES if n in folded} - months, text)
        # a month's name counts only as a word of its own (the month rules never match inside a word)
        for text, expected in (("mayday", set()), ("a marathon, a novel, she decided", set()), ("in May", {"may"}),
                               ("March 5th", {"mar"}), ("sept 3", {"sep"}), ("Junes", set()), ("JANUARY", {"jan"})):
            self.assertEqual(timeexpr._needles_in(text) & months, expected, text)
        samples += ["去年圣诞节在哪过的", "2024年的国庆", "what did we do for Thanksgiving?", "New Year’s Eve 2025",
                    "情人节送了什么", "平安夜", "跨年夜", "元旦", "万圣节", "劳动节", "last Valentine's Day", "xmas"]
        for needles, rx, _handler in timeexpr._RULES + timeexpr._BARE_RULES + timeexpr._HOLIDAY_RULES:
            for text in samples:
                for m in rx.finditer(text):
                    if m.end() > m.start():
                        self.assertTrue(timeexpr._needles_in(m.group()) & needles, (rx.pattern[:60], m.group()))

    def assert_question_reads(self, as_of, cases):
        """Each (question, from, to): read as a question is, it names that one range."""
        for text, lo, hi in cases:
            with self.subTest(text=text):
                got = resolve(text, as_of, lean="back", holidays=True)
                self.assertEqual([(f["from"], f["to"]) for f in got], [(lo, hi)])

    def test_a_question_reads_a_holiday_in_the_year_its_words_point_to(self):
        sat = D(2026, 12, 5)
        cases = [("what did we do for Thanksgiving?", "2026-11-26", "2026-11-29"),
                 ("what are we doing for Christmas?", "2026-12-24", "2026-12-26"),
                 ("where was I last Christmas?", "2025-12-24", "2025-12-26"),
                 ("Christmas 2024", "2024-12-24", "2024-12-26"),
                 ("去年圣诞节在哪过的", "2025-12-24", "2025-12-26"),
                 ("国庆去哪玩了", "2026-10-01", "2026-10-07"),
                 ("元旦要去哪", "2027-01-01", "2027-01-01"),
                 ("2024年的国庆", "2024-10-01", "2024-10-07"),
                 ("thanksgiving 2023", "2023-11-23", "2023-11-26"),
                 ("双十一买了什么", "2026-11-11", "2026-11-11"),  # the shopping festivals
                 ("去年双11花了多少钱", "2025-11-11", "2025-11-11"),
                 ("光棍节怎么过的", "2026-11-11", "2026-11-11")]
        self.assert_question_reads(sat, cases)
        self.assertEqual(resolve("双人床太小了", sat, lean="back", holidays=True), [])

    def test_holidays_that_move_fall_on_their_days(self):
        # Easter by the Gregorian computus; Mother's and Father's Day, the American Monday holidays, Black Friday
        sat = D(2026, 12, 5)
        cases = [("what did we do over Easter?", "2026-04-03", "2026-04-06"),
                 ("Easter 2024", "2024-03-29", "2024-04-01"),
                 ("what did I get Mom for Mother's Day?", "2026-05-10", "2026-05-10"),
                 ("去年父亲节送了什么", "2025-06-15", "2025-06-15"),
                 ("where did we go Memorial Day weekend?", "2026-05-23", "2026-05-25"),
                 ("what did I do on Labor Day?", "2026-09-05", "2026-09-07"),
                 ("what did I buy on Black Friday?", "2026-11-27", "2026-11-27"),  # not the last Friday
                 ("清明回老家了吗", "2026-04-04", "2026-04-06"),
                 ("前年春节在哪过的", "2024-02-09", "2024-02-16"),  # 前年, 大前年, 后年 name the holiday's year too
                 ("过年回家了吗", "2026-02-16", "2026-02-23")]  # 过年 is 春节
        self.assert_question_reads(sat, cases)

    def test_wuyi_and_shiyi_are_the_may_and_october_holidays_where_no_number_runs_on(self):
        sat = D(2026, 12, 5)
        self.assert_question_reads(sat, [("去年五一去哪玩了", "2025-05-01", "2025-05-05"),
                                         ("五一去了青岛", "2026-05-01", "2026-05-05"),
                                         ("十一长假干嘛了", "2026-10-01", "2026-10-07")])
        for text in ("二十五一共多少", "我们五一班的同学", "五一路上新开的店", "十一点开会", "第十一期", "三十五一个"):
            self.assertEqual([t["expression"] for t in resolve(text, sat, lean="back", holidays=True)], [], text)
        self.assertEqual(resolve("any plans for xmas?", sat, lean="back", holidays=True)[0]["from"], "2026-12-24")
        self.assertEqual(resolve("any plans for xmas?", sat, lean="back", holidays=True)[0]["holiday"], "xmas")
        # a text the archive holds is not dated by a holiday it names ("I love Christmas music")
        self.assertEqual(resolve("I love Christmas music", sat), [])
        self.assertEqual(resolve("去年圣诞节", sat)[0]["expression"], "去年")

    def test_the_chinese_calendars_festivals_fall_on_their_days(self):
        # published dates of 春节, 端午 and 中秋 (each depends on a new moon's day in China)
        spring = {2000: "02-05", 2012: "01-23", 2015: "02-19", 2020: "01-25", 2021: "02-12", 2023: "01-22",
                  2024: "02-10", 2025: "01-29", 2026: "02-17", 2027: "02-06", 2033: "01-31"}
        dragon = {2015: "06-20", 2017: "05-30", 2020: "06-25", 2023: "06-22", 2024: "06-10", 2025: "05-31"}
        autumn = {2014: "09-08", 2020: "10-01", 2022: "09-10", 2023: "09-29", 2025: "10-06", 2026: "09-25"}
        for festival, table in ((lunar.spring_festival, spring), (lunar.dragon_boat, dragon),
                                (lunar.mid_autumn, autumn)):
            for year, day in table.items():
                self.assertEqual(festival(year), D.fromisoformat(f"{year}-{day}"), (festival.__name__, year))

    def test_a_short_text_that_plainly_points_ahead_reads_a_month_as_the_coming_one(self):
        may = D(2026, 5, 10)
        cases = [("I will visit Paris in March", "2027-03-01"), ("I went to Paris in March", "2026-03-01"),
                 ("三月打算去日本看樱花", "2027-03-01"), ("三月去了日本", "2026-03-01"),
                 ("I plan to return on July 20", "2026-07-20"), ("I'm planning to fly home on April 2nd", "2027-04-02"),
                 ("why am I asking you about it on May 6th?", "2026-05-06"),  # "am I asking" is no plain future
                 ("I'll tell you later. " + "We talked for hours about the old days. " * 5 + "That was in March",
                  "2026-03-01")]  # a long text tells of past and future together: it looks back
        for text, start in cases:
            with self.subTest(text=text):
                self.assertEqual(resolve(text, may)[-1]["from"], start)

    def test_a_question_reads_the_chinese_calendars_festivals(self):
        sat = D(2026, 12, 5)
        cases = [("春节怎么过的", "2026-02-16", "2026-02-23"),  # its eve through the sixth day
                 ("去年春节去哪了", "2025-01-28", "2025-02-04"),
                 ("除夕夜吃了什么", "2026-02-16", "2026-02-16"),
                 ("中秋节和谁过的", "2026-09-25", "2026-09-25"),
                 ("端午回家了吗", "2026-06-19", "2026-06-19"),
                 ("2024年春节", "2024-02-09", "2024-02-16"),
                 ("what did I do for Chinese New Year?", "2026-02-16", "2026-02-23"),
                 ("how was the Mid-Autumn Festival?", "2026-09-25", "2026-09-25")]
        self.assert_question_reads(sat, cases)
        self.assertEqual(resolve("春节快乐", sat), [])  # a saved text is not dated by the festival it names

    def test_letters_that_case_folding_reads_as_ascii_still_count(self):
        # re.I reads ſ as s and the Kelvin sign as k: the needles are looked for the same way.
        for text, plain in (("laſt week", "last week"), ("LAST WEEK", "last week"), ("ſunday last", "sunday last")):
            self.assertEqual([(f["from"], f["to"]) for f in resolve(text, WED)],
                             [(f["from"], f["to"]) for f in resolve(plain, WED)], text)
        self.assertTrue(resolve("laſt week", WED))

    def test_this_weekend_said_looking_back_before_it_comes_is_the_weekend_just_gone(self):
        monday, saturday = D(2026, 3, 9), D(2026, 3, 14)
        for text in ("what did I do this weekend?", "this weekend was great", "这周末过得怎么样", "我这周末干嘛了"):
            self.assertEqual([(r["from"], r["to"]) for r in resolve(text, monday)], [("2026-03-07", "2026-03-08")], text)
            self.assertEqual([(r["from"], r["to"]) for r in resolve(text, saturday)], [("2026-03-14", "2026-03-15")], text)
        for text in ("what am I doing this weekend?", "这周末要去爬山"):  # looking ahead: the coming one
            self.assertEqual([(r["from"], r["to"]) for r in resolve(text, monday)], [("2026-03-14", "2026-03-15")], text)

    def test_in_two_weeks_is_the_week_two_ahead_unless_the_text_looks_back(self):
        sat = D(2026, 12, 5)
        def spans(text):
            return [(r["expression"], r["from"], r["to"]) for r in resolve(text, sat)]
        self.assertEqual(spans("My knee surgery is in two weeks"), [("in two weeks", "2026-12-14", "2026-12-20")])
        self.assertEqual(spans("Finals start in 10 days"), [("in 10 days", "2026-12-15", "2026-12-15")])
        self.assertEqual(spans("two weeks from now"), [("two weeks from now", "2026-12-14", "2026-12-20")])
        self.assertEqual(spans("两周后要做手术"), [("两周后", "2026-12-14", "2026-12-20")])
        self.assertEqual(spans("过两天去医院复查"), [("过两天", "2026-12-07", "2026-12-07")])
        self.assertEqual(spans("再过一个月就毕业了"), [("过一个月", "2027-01-01", "2027-01-31")])
        self.assertEqual(spans("还有三天就考试了"), [("还有三天", "2026-12-08", "2026-12-08")])
        for text in ("度过了两天", "超过两年了", "不过两天而已", "还有两天假期"):  # how long, not when
            self.assertEqual(spans(text), [], text)
        self.assertEqual(timeexpr.lean_of("我去过两次日本"), "back")  # 过 of what was done is still the past
        # how long, not when; and a story's 三个月后 counts from its own event
        for text in ("I finished the whole book in two days", "we got engaged, and in two months we were married",
                     "结婚三个月后他就变了", "三个月后我才知道真相", "the baby is 3 weeks old"):
            self.assertEqual(spans(text), [], text)

    def test_a_question_about_the_next_weeks_is_that_long_from_tomorrow(self):
        sat = D(2026, 12, 5)
        cases = [("what do I have in the next month?", "2026-12-06", "2027-01-04"),
                 ("anything over the next few weeks?", "2026-12-06", "2027-01-16"),
                 ("what's on in the next two weeks?", "2026-12-06", "2026-12-19")]
        for text, lo, hi in cases:
            self.assertEqual([(r["from"], r["to"]) for r in resolve(text, sat, holidays=True)], [(lo, hi)], text)
        self.assertEqual([(r["from"], r["to"]) for r in resolve("next month", sat, holidays=True)],
                         [("2027-01-01", "2027-01-31")])  # a month named stays that month

    def test_this_saturday_or_sunday_said_looking_back_before_it_comes_is_the_one_just_gone(self):
        monday = D(2026, 3, 9)
        for text in ("this Sunday was lovely", "这个星期天干嘛了", "这周六去哪了"):
            got = [r["from"] for r in resolve(text, monday)]
            self.assertEqual(len(got), 1, text)
            self.assertLess(got[0], "2026-03-09", text)
        self.assertEqual([r["from"] for r in resolve("what are we doing this Sunday?", monday)], ["2026-03-15"])
        self.assertEqual([r["from"] for r in resolve("这个星期天要干嘛", monday)], ["2026-03-15"])

    def test_my_weekend_is_a_weekend_read_by_the_tense_and_my_day_off_no_day(self):
        monday = D(2026, 3, 9)
        self.assertEqual([(r["from"], r["to"]) for r in resolve("how was my weekend?", monday)],
                         [("2026-03-07", "2026-03-08")])
        self.assertEqual([(r["from"], r["to"]) for r in resolve("what are we doing for my weekend?", monday, lean="ahead")],
                         [("2026-03-14", "2026-03-15")])
        self.assertEqual(resolve("Thursdays are my day off", monday), [])
        self.assertEqual(resolve("my days are long", monday), [])

    def test_result_shape(self):
        got = resolve("我上周去了北京", WED)
        self.assertEqual(got, [{
            "expression": "上周", "start": 1, "end": 3, "from": "2026-02-23", "to": "2026-03-01",
            "precision": "week", "kind": "relative",
        }])

    def test_datetime_anchor_is_read_as_its_date(self):
        moment = datetime.datetime(2026, 3, 4, 23, 59, tzinfo=datetime.timezone.utc)
        self.assertEqual(resolve("昨天", moment), resolve("昨天", WED))

    def test_empty_text(self):
        self.assertEqual(resolve("", WED), [])


class InSentenceTest(unittest.TestCase):
    def expressions(self, text, as_of=WED):
        return [(f["expression"], f["from"], f["to"]) for f in resolve(text, as_of)]

    def test_expression_inside_a_sentence(self):
        self.assertEqual(self.expressions("上周和妈妈吃饭"), [("上周", "2026-02-23", "2026-03-01")])
        self.assertEqual(self.expressions("What did I eat yesterday?"),
                         [("yesterday", "2026-03-03", "2026-03-03")])
        self.assertEqual(self.expressions("然后我们去年夏天去了海边"),
                         [("去年夏天", "2025-06-01", "2025-08-31")])

    def test_this_year_in_an_age_statement_is_still_this_year(self):
        self.assertEqual(self.expressions("我今年三十岁"), [("今年", "2026-01-01", "2026-12-31")])

    def test_several_expressions_in_order_with_offsets(self):
        text = "去年夏天和2025年3月5日，还有three days ago"
        got = resolve(text, WED)
        self.assertEqual([f["expression"] for f in got], ["去年夏天", "2025年3月5日", "three days ago"])
        for f in got:
            self.assertEqual(text[f["start"]:f["end"]], f["expression"])
        self.assertEqual([f["start"] for f in got], sorted(f["start"] for f in got))

    def test_longest_match_wins_and_nothing_overlaps(self):
        for text in ("2025年3月5日", "大前天", "三天前天气很好", "the day before yesterday",
                     "上上个月5号", "最近三天", "去年十二月", "2025-03-05T10:00:00Z"):
            with self.subTest(text=text):
                got = resolve(text, WED)
                spans = sorted((f["start"], f["end"]) for f in got)
                for (s1, e1), (s2, _) in zip(spans, spans[1:]):
                    self.assertLessEqual(e1, s2)
                self.assertEqual(got[0]["start"], 0)
        self.assertEqual(self.expressions("三天前天气很好"), [("三天前", "2026-03-01", "2026-03-01")])

    def test_full_width_digits_keep_original_offsets(self):
        text = "我在２０２５年３月去过"
        got = resolve(text, WED)
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0]["expression"], "２０２５年３月")
        self.assertEqual(text[got[0]["start"]:got[0]["end"]], "２０２５年３月")
        self.assertEqual((got[0]["from"], got[0]["to"]), ("2025-03-01", "2025-03-31"))

    def test_impossible_date_is_not_reread_as_a_shorter_one(self):
        self.assertEqual(resolve("2023年2月29日", WED), [])
        self.assertEqual(resolve("2月30日", WED), [])
        self.assertEqual(resolve("2025-13-01", WED), [])
        self.assertEqual(resolve("2025-02-30", WED), [])

    def test_possessive_and_capitalised_english(self):
        self.assertEqual(self.expressions("today's meeting"), [("today's", "2026-03-04", "2026-03-04")])
        self.assertEqual(self.expressions("LAST WEEK"), [("LAST WEEK", "2026-02-23", "2026-03-01")])

    def test_mixed_chinese_and_english(self):
        self.assertEqual(self.expressions("我yesterday去了"), [("yesterday", "2026-03-03", "2026-03-03")])


class BareWeekdayTest(unittest.TestCase):
    """周五, "on Friday", 周末: read the way the text's tense points, or the caller's lean; else left alone."""

    def found(self, text, as_of=WED, lean=None):
        return [(t["expression"], t["from"], t["to"]) for t in resolve(text, as_of, lean=lean)]

    def test_the_words_say_which_way(self):
        cases = [  # WED is Wednesday 2026-03-04, SAT Saturday 2026-01-10
            ("我周五做了什么", WED, ("周五", "2026-02-27", "2026-02-27")),
            ("周五要去面试", WED, ("周五", "2026-03-06", "2026-03-06")),
            ("what did I do on Friday?", WED, ("on Friday", "2026-02-27", "2026-02-27")),
            ("what am I doing on Friday?", WED, ("on Friday", "2026-03-06", "2026-03-06")),
            ("we went hiking over the weekend", WED, ("over the weekend", "2026-02-28", "2026-03-01")),
            ("周末打算去爬山", WED, ("周末", "2026-03-07", "2026-03-08")),
            ("周末去爬山了", SAT, ("周末", "2026-01-10", "2026-01-11")),  # back: the weekend that has begun
            ("I'll rest on the weekend", D(2026, 1, 11), ("on the weekend", "2026-01-10", "2026-01-11")),
            ("星期三开会了", WED, ("星期三", "2026-03-04", "2026-03-04")),  # back: on or before the day
        ]
        for text, as_of, expected in cases:
            with self.subTest(text=text):
                self.assertEqual(self.found(text, as_of), [expected])

    def test_without_a_direction_or_as_a_habit_it_is_left_alone(self):
        for text in ("周五开会", "周末愉快", "每周五都要开会", "周一到周五上班了", "I went swimming every Friday",
                     "Fridays were busy", "下周五", "last friday", "what did we do on the Monday before we left"):
            with self.subTest(text=text):
                self.assertEqual([e for e, _f, _t in self.found(text)], [e for e in ("下周五", "last friday")
                                                                           if e == text])
        for text in ("Any ideas for a weekend getaway?", "I went on a Monday", "is there a saturday class I could take?"):
            with self.subTest(text=text):  # some weekend, a Monday: no day in particular, whichever way it leans
                self.assertEqual(self.found(text, lean="back"), [])
        self.assertEqual(self.found("周五开会", lean="back"), [("周五", "2026-02-27", "2026-02-27")])
        self.assertEqual(self.found("周五开会", lean="ahead"), [("周五", "2026-03-06", "2026-03-06")])


class NoFalsePositiveTest(unittest.TestCase):
    QUIET = [
        "5 apples", "这一天", "这三个人", "version 3.5", "room 2019", "房间2019", "我有三个朋友", "我有2019块钱",
        "三个月的课程", "5号楼", "3号线", "第三月", "cap-20261130-abc", "记录cap-20261130-abc",
        "rec-2025-03-05-x", "file_2025-03-05.txt", "see https://example.com/2025/03/05/yesterday",
        "在https://a.com/2025-03-05看的", "mail bob@2019.com", "v2019.3.5", "call 2019",
        "I may 5 times", "May I help you", "Jan said hi", "June said no", "I fall asleep",
        "the last day of school", "in past years", "马上周末了", "看一下周围", "然后天黑了",
        "目前年轻人很多", "说明年龄", "聪明天才", "以后天天加班", "之前天气很好",
        "那年冬天", "每年三月", "25年3月", "几月前", "半天前", "一百年前", "过年前",
        "小时候", "上大学的时候", "高中的时候", "小时候上大学的时候", "12025年", "in 2019-2020",
        "meet at 10:30", "1,2019 people", "每月初交房租", "岁月", "at the end of the day",
    ]

    def test_quiet_texts(self):
        for text in self.QUIET:
            with self.subTest(text=text):
                self.assertEqual(resolve(text, WED), [])

    def test_life_phase_is_not_a_date(self):
        # The summer of one's childhood is not last summer.
        self.assertEqual(resolve("小时候的夏天", WED), [])
        self.assertEqual(resolve("大学时的三月", WED), [])
        self.assertEqual(resolve("上大学的时候去年见过", WED)[0]["expression"], "去年")


class StripTest(unittest.TestCase):
    def strip(self, text):
        return strip_expressions(text, resolve(text, WED))

    def test_strip(self):
        cases = [
            ("上周和妈妈吃饭", "和妈妈吃饭"),
            ("我去年夏天在海边", "我在海边"),
            ("和妈妈上周吃饭", "和妈妈吃饭"),
            ("what did I eat yesterday?", "what did I eat?"),
            ("Yesterday, I went to the park", "I went to the park"),
            ("dinner with mom last week at the lake", "dinner with mom at the lake"),
            ("trip in March 2025 to Rome", "trip to Rome"),
            ("没有时间词", "没有时间词"),
            ("no time here", "no time here"),
        ]
        for text, want in cases:
            with self.subTest(text=text):
                self.assertEqual(self.strip(text), want)

    def test_stale_found_entries_are_ignored(self):
        found = resolve("上周和妈妈吃饭", WED)
        self.assertEqual(strip_expressions("和妈妈吃饭了", found), "和妈妈吃饭了")

    def test_nothing_found(self):
        self.assertEqual(strip_expressions("hello", []), "hello")


class ParseWindowTest(unittest.TestCase):
    def test_forms(self):
        cases = [
            ("2025", ("2025-01-01", "2025-12-31")),
            ("2025-03", ("2025-03-01", "2025-03-31")),
            ("2024-02", ("2024-02-01", "2024-02-29")),
            ("2023-02", ("2023-02-01", "2023-02-28")),
            ("2025-03-05", ("2025-03-05", "2025-03-05")),
            ("2025-3-5", ("2025-03-05", "2025-03-05")),
            ("2024:2025", ("2024-01-01", "2025-12-31")),
            ("2024-06:2025-01-15", ("2024-06-01", "2025-01-15")),
            ("2024-06:", ("2024-06-01", OPEN_END)),
            (":2025-01", (OPEN_START, "2025-01-31")),
            (" 2025-03 ", ("2025-03-01", "2025-03-31")),
            ("２０２５-０３", ("2025-03-01", "2025-03-31")),
            ("2025:2025", ("2025-01-01", "2025-12-31")),
        ]
        for spec, want in cases:
            with self.subTest(spec=spec):
                self.assertEqual(parse_window(spec), want)
        self.assertEqual((OPEN_START, OPEN_END), ("0001-01-01", "9999-12-31"))

    def test_errors(self):
        for spec in ("", ":", "abc", "25", "20250", "2025-13", "2025-00", "2025-02-30",
                     "2025/03", "2025-03-05T10:00", "0000", "2026:2025", "2025-03-02:2025-03-01",
                     "1:2:3", "2024::2025", None, "last week"):
            with self.subTest(spec=spec):
                with self.assertRaises(PuError) as ctx:
                    parse_window(spec)
                self.assertEqual(ctx.exception.code, "BAD_WINDOW")
                self.assertTrue(ctx.exception.hint)

    def test_a_time_as_a_question_says_it_and_other_range_marks(self):
        today = datetime.date(2026, 12, 5)  # a Saturday
        for spec, want in (("next week", ("2026-12-07", "2026-12-13")), ("上个月", ("2026-11-01", "2026-11-30")),
                           ("去年国庆", ("2025-10-01", "2025-10-07")), ("2026-12-07..2026-12-13", ("2026-12-07", "2026-12-13")),
                           ("2024-06/2024-08", ("2024-06-01", "2024-08-31")), ("2024-06:", ("2024-06-01", OPEN_END))):
            with self.subTest(spec=spec):
                self.assertEqual(parse_window(spec, today), want)
        self.assertEqual(parse_window("上个月到这个月", today), ("2026-11-01", "2026-12-31"))
        for spec in ("last month and 2024", "garbage", "2024-13", "last week-ish"):
            with self.subTest(spec=spec):
                with self.assertRaises(PuError) as ctx:
                    parse_window(spec, today)
                self.assertIn("last week", ctx.exception.hint)

    def test_quarters_the_other_day_months_back_and_a_while_ago(self):
        today = datetime.date(2026, 12, 5)
        for text, want in (("上个季度", ("2026-07-01", "2026-09-30")), ("这个季度", ("2026-10-01", "2026-12-31")),
                           ("next quarter", ("2027-01-01", "2027-03-31")), ("the other day", ("2026-11-29", "2026-12-03")),
                           ("two weeks back", ("2026-11-16", "2026-11-22")), ("前阵子", ("2026-11-05", "2026-12-05"))):
            with self.subTest(text=text):
                (found,) = timeexpr.resolve(text, today)
                self.assertEqual((found["from"], found["to"]), want)
        self.assertEqual(timeexpr.resolve("I moved back home", today), [])  # back, with no number of units
        self.assertTrue(timeexpr.is_vague("前阵子"))

    def test_what_lies_ahead_is_read_in_a_question_only(self):
        today = datetime.date(2026, 12, 5)
        for text in ("what's coming up?", "接下来有什么安排", "我有什么待办", "anything I should follow up on?"):
            with self.subTest(text=text):
                found = timeexpr.resolve(text, today, holidays=True)
                self.assertEqual({(f["from"], f["to"]) for f in found}, {("2026-12-06", "2027-03-05")})
                self.assertTrue(all(timeexpr.is_vague(f["expression"]) for f in found))
        self.assertEqual(timeexpr.resolve("I'll call you soon", today), [])  # a text's "soon" names no days
        for text, want in (("接下来一个月我要干嘛", ("2026-12-06", "2027-01-04")), ("未来一周", ("2026-12-06", "2026-12-12"))):
            (found,) = timeexpr.resolve(text, today, holidays=True)
            self.assertEqual((found["from"], found["to"]), want, text)  # the units it names
        (new,) = timeexpr.resolve("what's new?", today, holidays=True)
        self.assertEqual((new["from"], new["to"]), ("2026-11-05", "2026-12-05"))


if __name__ == "__main__":
    unittest.main()
