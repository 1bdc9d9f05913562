"""The dates a question names, as days, months or years: "on 3 June, 2023", "in May", "2022", "2023年3月5日",
and the ranges people say ("between August 11 and 15", "the week before 16 November", "early June", "3月上旬").

A date in a question says when, not what: `without_dates` blanks it so its words are not searched, and the
ranking favours pages said on, or telling of, the days named (`store.ranking`). Only what a calendar settles
is read; a date named without its year matches that day in any year, and a weekend needs its year.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_NUM_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "couple": 2, "few": 3}

_MONTHS = {name: i + 1 for i, name in enumerate(
    "january february march april may june july august september october november december".split())}
_MONTHS.update({name[:3]: i for name, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
# "June", "June 3", "June 3rd, 2023", "3 June 2023", "3rd of June", "2023"; a month only with a capital.
_DATE_WORD = re.compile(
    r"\b(?:(\d{1,2}(?:st|nd|rd|th)?)\s+(?:of\s+)?)?([A-Z][a-z]{2,8})\.?"
    r"(?:\s+(\d{1,2}(?:st|nd|rd|th)?)\b)?(?:,?\s+((?:19|20)\d\d))?\b|\b((?:19|20)\d\d)\b")
_CJK_DATE = re.compile(r"(?:((?:19|20)\d\d\s*年)\s*)?(\d{1,2})\s*月(?:\s*(\d{1,2}\s*[日号]))?|((?:19|20)\d\d)\s*年")
DateNamed = tuple[int | None, int | None, int | None]


def dates_named(query: str) -> list[DateNamed]:
    """(year, month, day) a question names ("in June", "on 3 June, 2023", "August 2023", "2022", "2023年3月5日" ...),
    any part optional.

    A month counts when written with a capital (so "may" and "march" as words do not), and not as the
    first word of the question ("May I ..."). A question names at most MAX_NAMED dates (the first in
    calendar order): each is a date token to look up.
    """
    return sorted({d for d, _ in _dates(query)}, key=lambda f: (f[0] or 0, f[1] or 0, f[2] or 0))[:MAX_NAMED]


def months_named(query: str) -> list[tuple[int | None, int | None]]:
    """(year, month) pairs a question names, either part optional (`dates_named` without the day)."""
    return sorted({(y, m) for y, m, _ in dates_named(query)}, key=lambda f: (f[0] or 0, f[1] or 0))


def without_dates(query: str) -> str:
    """The question with its dates blanked out (day, month and year, and the words of a range: "between",
    "the week before", "early"): a date says when, it is not a word to look for. A text that tells of that
    month by its name ("Last August I ...") is not what the question asks for; the dates rank it."""
    out = list(query or "")
    for _, spans in _dates(query):
        for s, e in spans:
            out[s:e] = " " * (e - s)
    return "".join(out)


def date_words(query: str) -> str:
    """The question with only the numbers of its dates blanked: what `auto` searches when nothing but dates is
    left ("March 5, 2026" looks for "March"; its day and year would match any number in any text)."""
    blanked = without_dates(query)
    return "".join(" " if b == " " and c.isdigit() else c for c, b in zip(query or "", blanked, strict=True))


def _leading_int(text: str) -> int:
    return int(re.match(r"\d+", text).group(0))  # type: ignore[union-attr]


def _dates(query: str) -> list[tuple[DateNamed, list[tuple[int, int]]]]:
    """Each date named, with the spans of its words (and of the words of a range it opens or closes)."""
    found: list[tuple[DateNamed, list[tuple[int, int]], tuple[int, int]]] = []  # (date, number spans, whole span)
    query = query or ""
    for m in _DATE_WORD.finditer(query):
        if m.group(5):
            found.append(((int(m.group(5)), None, None), [m.span(5)], m.span(5)))
            continue
        month = _MONTHS.get(m.group(2).lower())
        if month is None or (m.start(2) == 0 and m.group(2) in ("May", "March") and not (m.group(3) or m.group(4))):
            continue
        day_group = 1 if m.group(1) else 3 if m.group(3) else 0
        day = _leading_int(m.group(day_group)) if day_group else None
        if day is not None and not 1 <= day <= 31:
            day, day_group = None, 0
        found.append(((int(m.group(4)) if m.group(4) else None, month, day), [m.span()], m.span()))
    for m in _CJK_DATE.finditer(query):
        if m.group(2) and 1 <= int(m.group(2)) <= 12:
            day = _leading_int(m.group(3)) if m.group(3) else None
            day = day if day is not None and 1 <= day <= 31 else None
            found.append(((_leading_int(m.group(1)) if m.group(1) else None, int(m.group(2)), day), [m.span()], m.span()))
        elif m.group(4):
            found.append(((int(m.group(4)), None, None), [m.span()], m.span()))
    found.sort(key=lambda f: f[2])
    # A year named beside a month is part of it, not a date of its own.
    with_month = {d[0] for d, _, _ in found if d[1] is not None and d[0] is not None}
    found = [f for f in found if not (f[0][1] is None and f[0][0] in with_month)]
    return _ranges(query, found)


# --------------------------------------------------------------------------- date ranges as people say them
# "between August 11 and 15, 2023", "the week before 16 November", "the second week of May", "early June",
# "2023年3月上旬", "3月5日到3月9日": the days of the range, each a date named (a day inside favours its pages
# most, a page of the range's months still more than the rest). Only what a calendar settles is read.
MAX_RANGE_DAYS = 62
MAX_NAMED = 366
_RANGE_AND = re.compile(r"\s*(?:and|to|until|till|through|-|\u2013|\u2014|\u5230|\u81f3|~|\uff5e)\s*$", re.I)
_RANGE_OPEN = re.compile(r"(?:\b(?:between|from)\s+|\u4ece)$", re.I)
_AND_DAY = re.compile(r"\s*(?:and|to|until|till|through|-|\u2013|\u2014)\s*(\d{1,2})(?:st|nd|rd|th)?\b"
                      r"(?:,?\s+((?:19|20)\d\d)\b)?", re.I)
_NUM = r"(?P<n>\d{1,2}|a|one|two|three|four|five|six|a\s+few|a\s+couple\s+of|couple\s+of)"
_SHIFT = re.compile(r"(?:\bthe\s+|\b)(?:" + _NUM + r"\s+)?(?P<unit>days?|weeks?|weekends?|months?)\s+"
                    r"(?P<dir>before|after|prior\s+to|following|leading\s+up\s+to)\s+(?:the\s+)?$", re.I)
_OF = re.compile(r"(?:\bthe\s+|\b)(?P<unit>week|weekend)\s+of\s+(?:the\s+)?$", re.I)
_PART = re.compile(r"(?:\bthe\s+|\b)(?:(?P<nth>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+(?P<unit>week|weekend)"
                   r"|(?P<half>first|second)\s+half|(?P<part>beginning|start|early|middle|mid|end|late))"
                   r"(?:\s+of\s+|\s*-\s*|\s+)(?:the\s+)?$", re.I)
_YEAR_PART = re.compile(r"(?:\bthe\s+|\b)(?:(?P<season>summer|winter|spring|fall|autumn)|(?P<half>first|second)\s+half"
                        r"|(?P<part>beginning|start|early|middle|mid|end|late))(?:\s+of\s+|\s*-\s*|\s+)(?:the\s+)?$", re.I)
_CJK_YEAR_PART = re.compile(r"\s*(?P<part>\u4e0a\u534a\u5e74|\u4e0b\u534a\u5e74|\u6625[\u5929\u5b63]|\u590f[\u5929\u5b63]"
                            r"|\u79cb[\u5929\u5b63]|\u51ac[\u5929\u5b63]|\u5e74\u521d|\u5e74\u5e95)")
_SEASONS = frozenset("summer spring fall autumn winter \u6625 \u590f \u79cb \u51ac".split())
# The months of a part of a year (winter: its December and the January and February after it).
_YEAR_MONTHS = {"summer": (6, 7, 8), "spring": (3, 4, 5), "fall": (9, 10, 11), "autumn": (9, 10, 11),
                "winter": (12, 13, 14), "first": (1, 2, 3, 4, 5, 6), "second": (7, 8, 9, 10, 11, 12),
                "beginning": (1, 2, 3, 4), "start": (1, 2, 3, 4), "early": (1, 2, 3, 4), "middle": (5, 6, 7, 8),
                "mid": (5, 6, 7, 8), "end": (9, 10, 11, 12), "late": (9, 10, 11, 12),
                "\u4e0a\u534a\u5e74": (1, 2, 3, 4, 5, 6), "\u4e0b\u534a\u5e74": (7, 8, 9, 10, 11, 12),
                "\u6625": (3, 4, 5), "\u590f": (6, 7, 8), "\u79cb": (9, 10, 11), "\u51ac": (12, 13, 14),
                "\u5e74\u521d": (1, 2, 3), "\u5e74\u5e95": (10, 11, 12)}
_CJK_PART = re.compile(r"\s*(?P<part>\u4e0a\u65ec|\u4e2d\u65ec|\u4e0b\u65ec|\u521d|\u5e95|\u672b)")
_NTH = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": 0}
_PART_DAYS = {"beginning": (1, 10), "start": (1, 10), "early": (1, 10), "middle": (11, 20), "mid": (11, 20),
              "end": (21, 31), "late": (21, 31), "\u4e0a\u65ec": (1, 10), "\u4e2d\u65ec": (11, 20),
              "\u4e0b\u65ec": (21, 31), "\u521d": (1, 10), "\u5e95": (21, 31), "\u672b": (21, 31)}
_LEAP = 2000  # a year with 29 February, for the arithmetic of a date named without its year


def _calendar(d: DateNamed) -> date | None:
    y, m, day = d
    if m is None or day is None:
        return None
    try:
        return date(y or _LEAP, m, day)
    except ValueError:
        return None


def _span_days(first: date, last: date, year_known: bool) -> list[DateNamed]:
    if last < first or (last - first).days >= MAX_RANGE_DAYS:
        return []
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    return [(d.year if year_known else None, d.month, d.day) for d in days]


def _month_days(y: int | None, m: int, first: int, last: int) -> list[DateNamed]:
    end = (date(y or _LEAP, m % 12 + 1, 1) if m < 12 else date((y or _LEAP) + 1, 1, 1)) - timedelta(days=1)
    return [(y, m, d) for d in range(first, min(last, end.day) + 1)]


def _ranges(query: str, found: list[tuple[DateNamed, list[tuple[int, int]], tuple[int, int]]]
            ) -> list[tuple[DateNamed, list[tuple[int, int]]]]:
    """The dates found, with those a range expression wraps replaced by what the range covers. The range's
    own words ("between", "the week before", "early") are blanked with the date; a season's name stays a word."""
    out: list[tuple[DateNamed, list[tuple[int, int]]]] = []
    consumed = -1  # text up to here belongs to a range already read
    for i, (d, spans, (start, end)) in enumerate(found):
        if start < consumed:
            continue
        before = query[max(0, start - 48):start]
        offset = start - len(before)
        y, m, day = d
        covered: list[DateNamed] = []  # what the range covers ([] when the date is no range)
        blank: list[tuple[int, int]] = []
        if day is not None and m is not None:
            covered, blank, consumed = _day_range(query, found, i, before, offset)
        if not covered and day is None and m is not None:
            covered, blank = _month_part(query, d, before, offset, end)
        if not covered and m is None and y is not None:
            covered, blank = _year_part(query, y, before, offset, end)
        if covered:
            marks = [*spans, *blank]
            for x in covered:
                out.append((x, marks))
        else:
            out.append((d, spans))
    return out


def _day_range(query: str, found: list[tuple[DateNamed, list[tuple[int, int]], tuple[int, int]]], i: int,
               before: str, offset: int) -> tuple[list[DateNamed], list[tuple[int, int]], int]:
    """A range around a named day: "between A and B" (or "A to B", "A - 15, 2023"), "N days / the week / the
    weekend / the month before or after A", "the week / weekend of A". (covered, spans to blank, end of the text read)."""
    d, spans, (start, end) = found[i]
    y, m, day = d
    assert m is not None and day is not None
    nxt = found[i + 1] if i + 1 < len(found) else None
    joined = (nxt is not None and nxt[0][1] is not None and nxt[0][2] is not None
              and _RANGE_AND.fullmatch(query[end:nxt[2][0]]) is not None)
    tail = None if joined else _AND_DAY.match(query, end)
    if joined or tail is not None:
        if joined:
            assert nxt is not None
            (y2, m2, d2), spans2, (start2, end2) = nxt
        else:
            assert tail is not None
            y2, m2, d2 = int(tail.group(2)) if tail.group(2) else None, m, int(tail.group(1))
            spans2, start2, end2 = [tail.span(1), *([tail.span(2)] if tail.group(2) else [])], tail.start(1), tail.end()
        year = y if y is not None else y2
        a, b = _calendar((year, m, day)), _calendar((y2 if y2 is not None else year, m2, d2))
        if a is not None and b is not None and b < a and year is None:
            b = _calendar((_LEAP + 1, m2, d2))  # "from 28 December to 3 January"
        covered = _span_days(a, b, year is not None) if a is not None and b is not None else []
        if covered:
            opener = _RANGE_OPEN.search(before)
            blank = [*spans2, (end, start2 if joined else tail.start(1))]  # type: ignore[union-attr]
            if opener:
                blank.append((offset + opener.start(), start))
            return covered, blank, end2
    anchor = _calendar(d)
    if anchor is None:
        return [], [], end
    shift = _SHIFT.search(before)
    if shift is not None:
        word = " ".join((shift.group("n") or "a").lower().split())
        last = word.split()[-1]
        n = int(word) if word.isdigit() else _NUM_WORDS.get(word.split()[-2] if last == "of" else last, 1)
        unit = shift.group("unit").lower().rstrip("s")
        sign = 1 if shift.group("dir").lower() in ("after", "following") else -1
        covered = []
        if unit == "day":
            covered = _span_days(anchor + timedelta(days=sign * n), anchor + timedelta(days=sign * n), y is not None)
        elif unit == "week":
            far, near = anchor + timedelta(days=sign * 7 * n), anchor + timedelta(days=sign * (7 * (n - 1) + 1))
            covered = _span_days(min(far, near), max(far, near), y is not None)
        elif unit == "weekend" and y is not None:
            sat = anchor + timedelta(days=(5 - anchor.weekday()) % 7)
            if sign < 0:
                sat -= timedelta(days=7) if sat + timedelta(days=1) >= anchor else timedelta(0)
                while sat + timedelta(days=1) >= anchor:
                    sat -= timedelta(days=7)
            elif sat <= anchor:
                sat += timedelta(days=7)
            sat += timedelta(days=sign * 7 * (n - 1))
            covered = _span_days(sat, sat + timedelta(days=1), True)
        elif unit == "month":
            total = m - 1 + sign * n
            covered = [(None if y is None else y + total // 12, total % 12 + 1, None)]
        if covered:
            return covered, [(offset + shift.start(), start)], end
    of = _OF.search(before)
    if of is not None:
        if of.group("unit").lower() == "week" or y is None:
            first = anchor - timedelta(days=anchor.weekday()) if y is not None else anchor - timedelta(days=3)
            covered = _span_days(first, first + timedelta(days=6), y is not None)
        else:
            sat = anchor + timedelta(days=5 - anchor.weekday())
            covered = _span_days(sat, sat + timedelta(days=1), True)
        return covered, [(offset + of.start(), start)], end
    return [], [], end


def _month_part(query: str, d: DateNamed, before: str, offset: int, end: int
                ) -> tuple[list[DateNamed], list[tuple[int, int]]]:
    """Part of a named month: "early / mid / late June", "the beginning / end of June", "the second (last)
    week of June", "the first weekend of June 2023" (a weekend needs the year), "6月上旬 / 中旬 / 下旬"."""
    y, m, _ = d
    assert m is not None
    part = _PART.search(before)
    if part is not None:
        blank = [(offset + part.start(), offset + len(before))]
        if part.group("part"):
            first, last = _PART_DAYS[part.group("part").lower()]
            return _month_days(y, m, first, last), blank
        if part.group("half"):
            return _month_days(y, m, *((1, 15) if part.group("half").lower() == "first" else (16, 31))), blank
        nth = _NTH[part.group("nth").lower()]
        if part.group("unit").lower() == "week":
            length = len(_month_days(y, m, 1, 31))
            first = 7 * (nth - 1) + 1 if nth else length - 6
            return _month_days(y, m, first, first + 6), blank
        if y is not None:
            saturdays = [x for x in _month_days(y, m, 1, 31) if x[2] is not None and date(y, m, x[2]).weekday() == 5]
            sat = _calendar(saturdays[nth - 1] if 0 < nth <= len(saturdays) else saturdays[-1])
            if sat is not None:
                return _span_days(sat, sat + timedelta(days=1), True), blank
        return [], []
    cjk = _CJK_PART.match(query, end)
    if cjk is not None:
        first, last = _PART_DAYS[cjk.group("part")]
        return _month_days(y, m, first, last), [cjk.span()]
    return [], []


def _year_part(query: str, y: int, before: str, offset: int, end: int) -> tuple[list[DateNamed], list[tuple[int, int]]]:
    """Part of a named year, as its months: "summer 2021", "the winter of 2022", "the first half of 2023",
    "early 2023", "2023年夏天", "2023年上半年"."""
    part = _YEAR_PART.search(before)
    cjk = None if part is not None else _CJK_YEAR_PART.match(query, end)
    if part is not None:
        key = (part.group("season") or part.group("half") or part.group("part")).lower()
        # A season stays a word ("last summer" may be told of a summer the calendar puts elsewhere).
        blank = [] if part.group("season") else [(offset + part.start(), offset + len(before))]
    elif cjk is not None:
        key = cjk.group("part") if cjk.group("part") in _YEAR_MONTHS else cjk.group("part")[0]
        blank = [] if key in _SEASONS else [cjk.span()]
    else:
        return [], []
    return [(y + (mo - 1) // 12, (mo - 1) % 12 + 1, None) for mo in _YEAR_MONTHS[key]], blank
