"""Time for the claim store: UTC event timestamps and validity bounds.

- Event time `at` is always UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`, strictly increasing
  within one process (two events never share a timestamp, so their order is kept).
- `valid_from` / `valid_to` are a date (`2026-03-31`) or a datetime. A date as
  `valid_from` starts at 00:00 UTC that day; a date as `valid_to` is *inclusive*: the
  claim holds through that whole day. A datetime `valid_to` is exclusive.
- An `as_of` date means the end of that day (what held at any time on it, latest wins).
"""

from __future__ import annotations

import datetime as dt
import threading

UTC = dt.timezone.utc
_ONE_US = dt.timedelta(microseconds=1)
_last: dt.datetime | None = None
_lock = threading.Lock()


def utcnow() -> dt.datetime:
    """Now in UTC, strictly later than any earlier call in this process."""
    global _last
    with _lock:
        now = dt.datetime.now(UTC)
        if _last is not None and now <= _last:
            now = _last + _ONE_US
        _last = now
        return now


def format_at(when: dt.datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_at(text: str) -> dt.datetime:
    """An event timestamp -> aware UTC datetime. Raises ValueError."""
    if not isinstance(text, str) or len(text) < 10:
        raise ValueError(f"not a timestamp: {text!r}")
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _parse(value: object) -> dt.date | dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        raise ValueError(f"not a date: {value!r}")
    text = value.strip()
    if len(text) == 10:
        return dt.date.fromisoformat(text)
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def normalize_bound(value: object) -> str | None:
    """User input for valid_from/valid_to -> stored form (`YYYY-MM-DD` or UTC datetime).

    Raises ValueError with a readable message.
    """
    if value is None or value == "":
        return None
    try:
        parsed = _parse(value)
    except (ValueError, TypeError):
        raise ValueError(f"not an ISO date or datetime: {str(value)[:60]!r} (use YYYY-MM-DD or YYYY-MM-DDTHH:MM)") from None
    if isinstance(parsed, dt.datetime):
        return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if not parsed.microsecond else format_at(parsed)
    return parsed.isoformat()


def bound_start(value: str | None) -> dt.datetime | None:
    """Stored valid_from -> the instant it starts."""
    if not value:
        return None
    parsed = _parse(value)
    if isinstance(parsed, dt.datetime):
        return parsed.astimezone(UTC)
    return dt.datetime(parsed.year, parsed.month, parsed.day, tzinfo=UTC)


def bound_end(value: str | None) -> dt.datetime | None:
    """Stored valid_to -> the first instant it no longer holds (dates are inclusive)."""
    if not value:
        return None
    parsed = _parse(value)
    if isinstance(parsed, dt.datetime):
        return parsed.astimezone(UTC)
    return dt.datetime(parsed.year, parsed.month, parsed.day, tzinfo=UTC) + dt.timedelta(days=1)


def as_of_instant(value: object) -> dt.datetime:
    """`as_of` (date, datetime or ISO string) -> the instant to evaluate at.

    A date means the end of that day, so a claim recorded at 14:00 shows for `--as-of`
    the same day. Raises ValueError.
    """
    try:
        parsed = _parse(value)
    except (ValueError, TypeError):
        raise ValueError(f"not an ISO date or datetime: {str(value)[:60]!r}") from None
    if isinstance(parsed, dt.datetime):
        return parsed.astimezone(UTC)
    return dt.datetime(parsed.year, parsed.month, parsed.day, tzinfo=UTC) + dt.timedelta(days=1) - _ONE_US


def display(when: dt.datetime | str | None) -> str:
    """Compact human form used on pages: `2026-11-22 14:03 UTC`."""
    if when is None:
        return ""
    if isinstance(when, str):
        if len(when) == 10:
            return when
        when = parse_at(when)
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def display_bound(value: str | None) -> str:
    if not value:
        return ""
    return value if len(value) == 10 else display(value)
