"""Times as the views show them, without Qt: one implementation for the session list's
order, the sidebar and the branch map.

`parse_time` reads the ISO-8601 times of session files ("Z" or an offset; no zone means
UTC). `relative_age` says how long ago a time was as an `Age`: an English template and its
values, like `Notice` (the GUI translates the template with the context ``notices`` and
fills it in with `fill`; `scripts/notice_strings.py` collects the templates).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


def parse_time(value: str) -> datetime | None:
    """An aware datetime from an ISO-8601 string (naive means UTC), or None."""
    try:
        parsed = datetime.fromisoformat(value.strip())
    except (ValueError, AttributeError, TypeError):
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def time_key(value: str) -> float:
    """Seconds since the epoch, to sort by (times of any zone); -inf when not a time."""
    when = parse_time(value)
    return when.timestamp() if when is not None else float("-inf")


def exact_time(value: str) -> str:
    """The local date and minute, "2026-03-10 12:05" (``value`` itself when not a time)."""
    when = parse_time(value)
    return when.astimezone().strftime("%Y-%m-%d %H:%M") if when is not None else value


@dataclass(frozen=True)
class Age:
    """How long ago something was: ``text`` is English with ``{name}`` placeholders for
    ``args`` (numbers and dates, never translated)."""

    text: str
    args: tuple[tuple[str, str], ...] = ()


def _age(text: str, **values: object) -> Age:
    return Age(text, tuple((k, str(v)) for k, v in values.items()))


def relative_age(value: str, now: datetime | None = None, *, short: bool = False) -> Age | None:
    """How long before ``now`` (default: the local time) ``value`` was: "just now",
    "5 min ago", "3 h ago" (the same calendar day in ``now``'s zone), "yesterday",
    "3 days ago", else the date (also for a time more than a minute in the future: a
    skewed clock). ``short``, for a narrow column (the branch map): "now", "5 min", "3 h",
    "2 d", "4 mo", "1 y" (by elapsed time). None when ``value`` is not a time."""
    when = parse_time(value)
    if when is None:
        return None
    if now is None:
        now = datetime.now().astimezone()
    elif now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    when = when.astimezone(now.tzinfo)
    seconds = (now - when).total_seconds()
    if seconds < -60 and not short:
        return _age("{date}", date=when.date().isoformat())
    if seconds < 60:
        return _age("now") if short else _age("just now")
    if seconds < 3600:
        minutes = int(seconds // 60)
        return _age("{n} min", n=minutes) if short else _age("{n} min ago", n=minutes)
    hours = int(seconds // 3600)
    if short:
        days = int(seconds // 86400)
        if hours < 24:
            return _age("{n} h", n=hours)
        if days < 30:
            return _age("{n} d", n=days)
        if days < 365:
            return _age("{n} mo", n=days // 30)
        return _age("{n} y", n=days // 365)
    days = (now.date() - when.date()).days
    if days == 0:
        return _age("{n} h ago", n=hours)
    if days == 1:
        return _age("yesterday")
    if days < 7:
        return _age("{n} days ago", n=days)
    return _age("{date}", date=when.date().isoformat())
