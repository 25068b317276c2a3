"""Times as the views show them (`workbench._time`): one parser and one relative age for
the sidebar, the branch map and the session list's order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from desktop_agent.workbench import (
    SidebarRow,
    exact_time,
    fill,
    newest_first,
    parse_time,
    relative_age,
    time_key,
)

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).isoformat().replace("+00:00", "Z")


def shown(value: str, *, short: bool = False) -> str:
    age = relative_age(value, NOW, short=short)
    return "" if age is None else fill(age.text, age.args)


@pytest.mark.parametrize(
    ("when", "long", "short"),
    [
        (ago(seconds=20), "just now", "now"),
        (ago(minutes=5), "5 min ago", "5 min"),
        (ago(minutes=59), "59 min ago", "59 min"),
        (ago(hours=3), "3 h ago", "3 h"),
        (ago(hours=13), "yesterday", "13 h"),  # 23:00 the day before
        (ago(days=1, hours=1), "yesterday", "1 d"),
        (ago(days=3), "3 days ago", "3 d"),
        (ago(days=6), "6 days ago", "6 d"),
        (ago(days=8), "2026-03-02", "8 d"),
        (ago(days=40), "2026-01-29", "1 mo"),
        (ago(days=800), "2023-12-31", "2 y"),
        ("2026-03-10T12:30:00+01:00", "30 min ago", "30 min"),  # other time zones
        ("2026-03-10T11:00:00", "1 h ago", "1 h"),  # naive means UTC
        ("2026-03-11T12:00:00Z", "2026-03-11", "now"),  # in the future (clock skew)
        ("not a date", "", ""),
        ("", "", ""),
    ],
)
def test_relative_age_long_and_short(when: str, long: str, short: str) -> None:
    assert shown(when) == long
    assert shown(when, short=True) == short


def test_the_age_is_a_template_and_its_values_for_the_gui_to_translate() -> None:
    age = relative_age(ago(minutes=5), NOW)
    assert age is not None and (age.text, age.args) == ("{n} min ago", (("n", "5"),))
    assert relative_age(ago(days=1), NOW) == relative_age(ago(days=1, hours=2), NOW)


def test_days_are_counted_in_the_zone_of_now() -> None:
    local_now = datetime(2026, 3, 10, 0, 30, tzinfo=UTC).astimezone(
        datetime(2026, 1, 1, tzinfo=UTC).astimezone().tzinfo
    )
    # 40 minutes earlier is still "min ago", whatever the calendar day
    age = relative_age("2026-03-09T23:50:00Z", local_now)
    assert age is not None and fill(age.text, age.args) == "40 min ago"
    naive_now = datetime(2026, 3, 10, 12, 0)  # naive means UTC, as for the values
    assert relative_age(ago(hours=2), naive_now) == relative_age(ago(hours=2), NOW)


def test_parse_time_and_the_order_of_rows_of_any_zone() -> None:
    assert parse_time("2026-03-10T12:00:00Z") == NOW
    assert parse_time("2026-03-10T13:00:00+01:00") == NOW
    assert parse_time("2026-03-10T12:00:00") == NOW
    assert parse_time("yesterday") is None and parse_time("") is None
    assert time_key("garbage") == float("-inf") and time_key(ago(seconds=1)) < NOW.timestamp()

    def row(name: str, when: str) -> SidebarRow:
        return SidebarRow(path=name, id=name, cwd="/w", title=name, last_activity=when)

    rows = [
        row("broken", "not a time"),
        row("berlin", "2026-03-10T12:30:00+01:00"),  # 11:30 UTC
        row("utc", "2026-03-10T11:45:00Z"),
        row("naive", "2026-03-10T11:00:00"),
    ]
    assert [r.path for r in newest_first(rows)] == ["utc", "berlin", "naive", "broken"]


def test_exact_time_is_local_and_keeps_what_is_not_a_time() -> None:
    local = NOW.astimezone()
    assert exact_time("2026-03-10T12:00:00Z") == local.strftime("%Y-%m-%d %H:%M")
    assert exact_time("garbage") == "garbage"
