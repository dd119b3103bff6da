"""Durations as people type them, and the compact form zen prints."""

from __future__ import annotations

import pytest

from zen.core.durations import format_duration, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90.0),
    ("30m", 1800.0),
    ("1h30m", 5400.0),
    ("2.5s", 2.5),
    ("7d", 604800.0),
    ("1w", 604800.0),
    ("250ms", 0.25),
    ("5ms", 0.005),        # "ms" is milliseconds, not minutes and seconds
    ("1m30s", 90.0),
    (" 1H 30M ", 5400.0),  # case and spaces do not matter
    ("10 s", 10.0),
    ("45", 45.0),          # a bare number is seconds
    ("0.5", 0.5),
    ("0s", 0.0),
    (12, 12.0),
    (1.5, 1.5),
])
def test_parse(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty duration"),
    ("   ", "empty duration"),
    ("-5", "negative"),
    (-1, "negative"),
    (-0.5, "negative"),
    ("abc", "not a duration"),
    ("5x", "not a duration"),
    ("m5", "not a duration"),
    ("5m3", "not a duration"),      # a trailing number without a unit
    ("1.5.2s", "not a duration"),
    ("ms", "not a duration"),
    ("5 minutes", "not a duration"),
    ("-5m", "not a duration"),
    ("1 2", "a space inside a number"),   # not 12 seconds
    ("1 0m", "a space inside a number"),
])
def test_parse_rejects_with_a_readable_message(text: str | float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration(text)


def test_the_error_suggests_the_forms_it_understands() -> None:
    with pytest.raises(ValueError) as info:
        parse_duration("soon")
    assert "'soon'" in str(info.value) and "30m" in str(info.value)


@pytest.mark.parametrize("flag", [True, False])
def test_booleans_are_not_durations(flag: bool) -> None:
    # bool is an int in Python; a YAML `timeout: yes` must not become one second
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(flag)


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"),
    (-5, "0s"),
    (59.9, "59s"),
    (60, "1m"),
    (3599, "59m"),
    (3600, "1h00m"),
    (7500, "2h05m"),
    (86399, "23h59m"),
    (86400, "1d"),
    (10 * 86400 + 5, "10d"),
])
def test_format(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("text", ["45s", "3m", "1h05m"])
def test_what_is_printed_for_under_a_day_parses_back(text: str) -> None:
    assert format_duration(parse_duration(text)) == text
