"""Relative times given their day: `yesterday` in a line said on 6 October 2022 becomes
`yesterday (5 October, 2022)`.

A note, a chat turn or a claim says "last week" against the day it was written; an agent
reading it months later cannot tell which week that was, and a question about "June 2023"
shares no word with it. The phrase is kept (it is what was said) and its day follows it,
in the style the page writes its own dates in (`dmy`: "5 October, 2022"; else ISO).

Only what the day determines is resolved: yesterday, tomorrow, last night, the day before
yesterday, the day after tomorrow, last/this/next <weekday> and "on <weekday>", last/next
week, weekend, month, year, "N days, weeks, months or years ago" and "in N days or weeks"
with a number. Vague spans ("a few days
ago", "recently") are left as they are, as is a phrase the writer already dated, or one
inside a longer phrase with another meaning ("the last week of August", "last year's").

Weekdays, weeks starting on Monday (said on Wednesday 2 December 2026):
- "next Thursday" is the Thursday of the calendar week after the day's, 10 December (a
  reader, British or American, does not mean the next day); "next Monday" said on a Sunday
  is the next day, the Monday of the week after;
- "this Thursday" and "on Thursday" (and a deadline's "by", "before", "until Thursday") are
  the coming one, 3 December; "this Wednesday" is the day itself, while "on Wednesday" said
  on a Wednesday is left as written (that day or a week on: the line cannot tell);
- "last Thursday" or "this past Thursday" is the most recent one before the day, 26
  November; "last Wednesday" said on a Wednesday a week before;
- "this" or "on" in a sentence in the past tense ("we shipped on Monday", "the party on
  Saturday was fun": a word ending in -ed, was, went, met, ...) means one gone by, this
  week's or last week's: it is left as written. A wrong day is worse than none.
"""

from __future__ import annotations

import datetime as dt
import re

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

_NUM = r"(?P<n>\d{1,3}|" + "|".join(NUMBERS) + r")"
_PHRASE = re.compile(
    r"(?<![\w'-])(?<!the )(?:"
    r"(?P<dby>the day before yesterday)|(?P<dat>the day after tomorrow)|(?P<yday>yesterday)"
    r"|(?<!after )(?P<tmrw>tomorrow)|(?P<lnight>last night)"
    r"|(?P<wdir>last|this past|next|this) (?P<wday>" + "|".join(DAYS) + r")"
    r"|(?:on|by|before|until|till) (?P<oday>" + "|".join(DAYS) + r")"
    r"|(?P<dir>last|next) (?P<span>week|weekend|month|year)"
    r"|" + _NUM + r" (?P<unit>day|week|month|year)s? ago"
    r"|in (?P<in_n>\d{1,2}|" + "|".join(NUMBERS) + r") (?P<in_unit>day|week)s?"
    r")(?![\w'-])(?! of\b)", re.I)
# The writer dated it already: "yesterday (2023-06-20)", "last week, on 12 June"
_DATED = re.compile(r"\s*[(,]?\s*(?:on\s+)?(?:\d{1,4}[-/ ]|(?:" + "|".join(MONTHS) + r")\b)", re.I)
_DMY = re.compile(r"\b\d{1,2} (?:" + "|".join(MONTHS) + r"),? \d{4}\b")


def style_of(text: str) -> str:
    """`dmy` when `text` (a page's title or first line) writes a date as "6 October, 2022"."""
    return "dmy" if _DMY.search(text or "") else "iso"


def _day(d: dt.date, style: str) -> str:
    return f"{d.day} {MONTHS[d.month - 1]}, {d.year}" if style == "dmy" else d.isoformat()


def _month(year: int, month: int) -> str:
    year += (month - 1) // 12
    return f"{MONTHS[(month - 1) % 12]} {year}"


# A sentence in the past tense: its "on Monday" or "this Monday" is one gone by. Any word
# like these counts, also one that is no verb there ("the deferred release"): then the
# phrase is left as written, which is never wrong.
_PAST = re.compile(r"(?<![\w'-])(?:(?!(?:need|feed|seed|speed|indeed|proceed|succeed|exceed|shed|sled|hundred)\b)"
                   r"[a-z]{2,}ed"
                   r"|was|were|went|did|had|came|got|made|took|saw|met|said|told|gave|found|left|ran|began"
                   r"|bought|brought|thought|felt|kept|spent|sent|ate|wrote|won|lost|held|sat|stood|spoke"
                   r"|drove|flew|broke|chose|fell|forgot|knew|paid|sold|taught|caught|heard|meant|slept"
                   r"|swam|threw|understood|woke|wore|built|led|rode|sang|became|drank|gone|been|ago"
                   r"|yesterday|earlier)(?![\w'-])", re.I)
_ENDS = re.compile(r"[.!?\n:;]")


def _in_the_past(text: str, m: re.Match[str]) -> bool:
    """Whether the clause `m` is in (its sentence, to a colon or semicolon) speaks in the
    past tense: "Called the barn: they will confirm by Friday" looks ahead."""
    start = max(text.rfind(c, 0, m.start()) for c in ".!?\n:;") + 1
    end = _ENDS.search(text, m.end())
    stop = end.start() if end else len(text)
    return bool(_PAST.search(text, start, stop)) and not _AHEAD.search(text, start, stop)


# Words that look ahead in a clause ("they will confirm by Friday"): its weekday is a coming one.
_AHEAD = re.compile(r"(?<![\w'-])(?:will|'ll|shall|going to|needs? to|has to|have to|must|should|wants|is due|"
                    r"are due|expects)(?![\w'-])",
                    re.I)


def _when(m: re.Match[str], day: dt.date, style: str) -> str | None:
    g = m.groupdict()
    if g["dby"]:
        return _day(day - dt.timedelta(days=2), style)
    if g["dat"]:
        return _day(day + dt.timedelta(days=2), style)
    if g["in_n"]:  # "in two weeks": a day ahead, about as sure as the writer was
        k = int(g["in_n"]) if g["in_n"].isdigit() else NUMBERS[g["in_n"].casefold()]
        ahead = dt.timedelta(days=k * (7 if g["in_unit"].casefold() == "week" else 1))
        return ("about " if g["in_unit"].casefold() == "week" else "") + _day(day + ahead, style)
    if g["yday"] or g["lnight"]:
        return _day(day - dt.timedelta(days=1), style)
    if g["tmrw"]:
        return _day(day + dt.timedelta(days=1), style)
    if g["wday"] or g["oday"]:
        want = DAYS.index((g["wday"] or g["oday"]).casefold())
        said = (g["wdir"] or "on").casefold()
        if said == "next":  # that day of the calendar week after this one (weeks start on Monday)
            return _day(day + dt.timedelta(days=7 + want - day.weekday()), style)
        if said in ("this", "on"):  # the coming one; "this" counts the day itself
            ahead = (want - day.weekday()) % 7
            return None if ahead == 0 and said == "on" else _day(day + dt.timedelta(days=ahead), style)
        return _day(day - dt.timedelta(days=(day.weekday() - want - 1) % 7 + 1), style)
    if g["span"]:
        span, later = g["span"].casefold(), g["dir"].casefold() == "next"
        if span in ("week", "weekend"):
            return f"the {span} {'after' if later else 'before'} {_day(day, style)}"
        if span == "month":
            return _month(day.year, day.month + (1 if later else -1))
        return str(day.year + (1 if later else -1))
    n = NUMBERS.get(g["n"].casefold()) if not g["n"].isdigit() else int(g["n"])
    unit = g["unit"].casefold()
    if unit == "day":
        return _day(day - dt.timedelta(days=n), style)
    if unit == "week":
        return f"about {_day(day - dt.timedelta(weeks=n), style)}"
    if unit == "month":
        return _month(day.year, day.month - n)
    return str(day.year - n)


def resolve(text: str, day: dt.date | None, style: str = "iso") -> str:
    """`text` with each relative time followed by its day, counted from `day`."""
    if day is None or not text:
        return text
    out: list[str] = []
    last = 0
    for m in _PHRASE.finditer(text):
        if _DATED.match(text, m.end()):
            continue
        if (m.group("oday") or (m.group("wdir") or "").casefold() == "this") and _in_the_past(text, m):
            continue
        try:
            when = _when(m, day, style)
        except (OverflowError, ValueError):  # a day at the calendar's edge (year 1, 9999)
            continue
        if when is None:
            continue
        out.append(text[last:m.end()])
        out.append(f" ({when})")
        last = m.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


_STATED = re.compile(r"\b(?:(?P<iso>\d{4}-\d{2}-\d{2})|(?P<d1>\d{1,2}) (?P<m1>[A-Z][a-z]+),? (?P<y1>\d{4})|"
                     r"(?P<m2>[A-Z][a-z]+) (?P<d2>\d{1,2}),? (?P<y2>\d{4}))\b")


def stated_day(text: str) -> dt.date | None:
    """The first day `text` states: `2024-03-02`, `2 March, 2024` or `March 2, 2024`."""
    for m in _STATED.finditer(text or ""):
        if m.group("iso"):
            got = parse_day(m.group("iso"))
        else:
            month = (m.group("m1") or m.group("m2")).capitalize()
            if month not in MONTHS:
                continue
            try:
                got = dt.date(int(m.group("y1") or m.group("y2")), MONTHS.index(month) + 1,
                              int(m.group("d1") or m.group("d2")))
            except ValueError:
                got = None
        if got is not None:
            return got
    return None


def parse_day(value: object) -> dt.date | None:
    """A `YYYY-MM-DD` at the start of `value` (a frontmatter date or a claim's), else None."""
    m = re.match(r"(\d{4})-(\d{2})-(\d{2})", str(value or "").strip())
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


_ASKED = re.compile(r"(?<![\w-])(?:(?P<y>yesterday|last night)|today|this morning|this afternoon|tonight)"
                    r"(?![\w-])", re.I)


def asked_day(prompt: str, today: dt.date) -> dt.date | None:
    """The day a question about recent work names: "What did I do yesterday?" -> the day
    before `today`; "this morning" -> `today`; None when it names no day."""
    m = _ASKED.search(prompt or "")
    if not m:
        return None
    return today - dt.timedelta(days=1) if m.group("y") else today


_SPAN = re.compile(r"(?<![\w-])(?:(?P<this>this week)|(?P<last>(?<!the )last week)"
                   r"|(?:the )?(?:past|last) (?:(?P<n>\d{1,2}|" + "|".join(NUMBERS) + r") (?P<unit>days|weeks)|week))"
                   r"(?![\w-])(?! of\b)", re.I)


def asked_window(prompt: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days a question about recent change names, first and last included: a day
    (`asked_day`: today, yesterday, this morning, ...), this week (Monday to today), last
    week (Monday to Sunday), the past week or N days or weeks (to today); None when it
    names no span, or only a vague one ("recently", as `resolve` leaves it), or when it
    states another day its words are relative to ("last week before 23 January, 2023")."""
    said = stated_day(prompt or "")
    if said is not None and said != today:
        return None
    m = _SPAN.search(prompt or "")
    if m is None:
        # "What did I do yesterday, and what's left for today?" names both days.
        days = [today - dt.timedelta(days=1) if d.group("y") else today for d in _ASKED.finditer(prompt or "")]
        return (min(days), max(days)) if days else None
    monday = today - dt.timedelta(days=today.weekday())
    if m.group("this"):
        return monday, today
    if m.group("last"):
        return monday - dt.timedelta(days=7), monday - dt.timedelta(days=1)
    n = m.group("n")
    count = 1 if n is None else int(n) if n.isdigit() else NUMBERS[n.casefold()]
    days = count * (7 if n is None or m.group("unit").casefold() == "weeks" else 1)
    return today - dt.timedelta(days=max(1, days) - 1), today
