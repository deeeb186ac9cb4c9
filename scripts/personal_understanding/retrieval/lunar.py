"""The Chinese calendar's festivals by Gregorian date: 春节, 元宵, 端午, 中秋.

A lunar month begins on the day (China time, UTC+8) of a new moon. New moons
are computed with the series of J. Meeus, Astronomical Algorithms (2nd ed.,
ch. 49; good to a minute or so), the solstice and equinox from the mean
formulas of ch. 27 (good to within an hour, years 1000-3000). Then:

- 春节 (正月初一) is the new moon that falls between 21 January and 20 February,
  the day's known bounds;
- month 5 is the month holding the June solstice, month 8 the one holding the
  September equinox (each such 中气 fixes its month's number), so 端午 (五月初五)
  and 中秋 (八月十五) are the 5th and the 15th day of those months.

Pure: no files, no clock.
"""

import datetime as _dt
import math

_CHINA = 8 / 24  # UTC+8, in days
_J2000_NEW_MOON = 2451550.09766  # the new moon of 2000-01-06, k = 0 (JDE)
_SYNODIC = 29.530588861
_TERMS = (  # new moon corrections: (coefficient, powers of E, multiples of M, M', F, Omega)
    (-0.40720, 0, 0, 1, 0, 0), (0.17241, 1, 1, 0, 0, 0), (0.01608, 0, 0, 2, 0, 0), (0.01039, 0, 0, 0, 2, 0),
    (0.00739, 1, -1, 1, 0, 0), (-0.00514, 1, 1, 1, 0, 0), (0.00208, 2, 2, 0, 0, 0), (-0.00111, 0, 0, 1, -2, 0),
    (-0.00057, 0, 0, 1, 2, 0), (0.00056, 1, 1, 2, 0, 0), (-0.00042, 0, 0, 3, 0, 0), (0.00042, 1, 1, 0, 2, 0),
    (0.00038, 1, 1, 0, -2, 0), (-0.00024, 1, -1, 2, 0, 0), (-0.00017, 0, 0, 0, 0, 1), (-0.00007, 0, 2, 1, 0, 0),
    (0.00004, 0, 0, 2, -2, 0), (0.00004, 0, 3, 0, 0, 0), (0.00003, 0, 1, 1, -2, 0), (0.00003, 0, 0, 2, 2, 0),
    (-0.00003, 0, 1, 1, 2, 0), (0.00003, 0, -1, 1, 2, 0), (-0.00002, 0, -1, 1, -2, 0), (-0.00002, 0, 1, 3, 0, 0),
    (0.00002, 0, 0, 4, 0, 0),
)
_SEASON_MEAN = {  # Meeus table 27.B (years 1000-3000): June solstice, September equinox
    6: (2451716.56767, 365241.62603, 0.00325, 0.00888, -0.00030),
    9: (2451810.21715, 365242.01767, -0.11575, 0.00337, 0.00078),
}


def _new_moon(k):
    """JDE of the new moon number k (k = 0: 2000-01-06)."""
    t = k / 1236.85
    jde = _J2000_NEW_MOON + _SYNODIC * k + 0.00015437 * t * t - 0.00000015 * t ** 3 + 0.00000000073 * t ** 4
    e = 1 - 0.002516 * t - 0.0000074 * t * t
    m = math.radians(2.5534 + 29.1053567 * k - 0.0000014 * t * t - 0.00000011 * t ** 3)
    mp = math.radians(201.5643 + 385.81693528 * k + 0.0107582 * t * t + 0.00001238 * t ** 3 - 0.000000058 * t ** 4)
    f = math.radians(160.7108 + 390.67050284 * k - 0.0016118 * t * t - 0.00000227 * t ** 3 + 0.000000011 * t ** 4)
    om = math.radians(124.7746 - 1.56375588 * k + 0.0020672 * t * t + 0.00000215 * t ** 3)
    return jde + sum(c * e ** pe * math.sin(a * m + b * mp + g * f + h * om) for c, pe, a, b, g, h in _TERMS)


def _china_day(jde):
    """The date in China (UTC+8) at a Julian day (TT; ΔT of about a minute is left out)."""
    return _dt.date(2000, 1, 1) + _dt.timedelta(days=math.floor(jde + _CHINA + 0.5 - 2451545.0))


def _new_moon_days(lo, hi):
    """China dates of the new moons from lo to hi (dates), in order."""
    k = math.floor((lo - _dt.date(2000, 1, 6)).days / _SYNODIC) - 1
    out = []
    while True:
        day = _china_day(_new_moon(k))
        if day > hi:
            return out
        if day >= lo:
            out.append(day)
        k += 1


def _season_day(year, month):
    y = (year - 2000) / 1000
    a, b, c, d, e = _SEASON_MEAN[month]
    return _china_day(a + b * y + c * y * y + d * y ** 3 + e * y ** 4)


def spring_festival(year):
    """正月初一: the new moon between 21 January and 20 February."""
    return _new_moon_days(_dt.date(year, 1, 21), _dt.date(year, 2, 20))[0]


def _month_holding(year, month):
    """The first day of the lunar month that holds the solstice (6) or equinox (9) of that year."""
    season = _season_day(year, month)
    return _new_moon_days(season - _dt.timedelta(days=31), season)[-1]


def dragon_boat(year):
    """端午, 五月初五."""
    return _month_holding(year, 6) + _dt.timedelta(days=4)


def mid_autumn(year):
    """中秋, 八月十五."""
    return _month_holding(year, 9) + _dt.timedelta(days=14)
