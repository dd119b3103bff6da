"""zen.core.sizes: sizes as people type them in zen.yaml (limits.max_prompt_size, min_free_disk)
to bytes, one readable sentence for anything else, and the compact form zen prints."""

from __future__ import annotations

import pytest

from zen.core.sizes import format_size, parse_size


@pytest.mark.parametrize("text, n", [
    ("200000", 200_000),
    (200000, 200_000),
    (1.9, 1),                      # a bare number of bytes is cut to whole bytes
    ("0", 0),
    ("512KiB", 512 * 1024),
    ("512kib", 512 * 1024),        # case does not matter
    ("1MiB", 1024**2),
    ("1MB", 1000**2),              # decimal and binary units differ
    ("1m", 1000**2),
    ("2GiB", 2 * 1024**3),
    ("1.5GiB", 3 * 1024**3 // 2),
    ("10 KB", 10_000),             # spaces are allowed
    (" 7b ", 7),
])
def test_parse(text: str | float, n: int) -> None:
    assert parse_size(text) == n


@pytest.mark.parametrize("text", ["huge", "1TiB", "MiB", "-1MiB", "1,000", "", "1.2.3",
                                  "1 2", "1 024KiB", "1. 5MiB"])   # no space inside a number
def test_what_is_no_size_is_refused_with_the_forms_it_takes(text: str) -> None:
    with pytest.raises(ValueError) as exc:
        parse_size(text)
    assert str(exc.value) == f"{text!r} is not a size (try 200000, 512KiB, 1MiB, 2GiB)"


@pytest.mark.parametrize("value", [-1, -0.5])
def test_a_negative_number_is_refused(value: float) -> None:
    with pytest.raises(ValueError, match=r"is negative$"):
        parse_size(value)


@pytest.mark.parametrize("flag", [True, False])
def test_a_boolean_is_no_size(flag: bool) -> None:
    # `max_prompt_size: yes` in zen.yaml must not read as one byte
    with pytest.raises(ValueError, match=r"is not a size$"):
        parse_size(flag)


@pytest.mark.parametrize("n, text", [
    (0, "0 bytes"),
    (999, "999 bytes"),
    (1023, "1023 bytes"),
    (1024, "1 KiB"),
    (1536, "1.5 KiB"),
    (204800, "200 KiB"),
    (1024**2, "1 MiB"),
    (15 * 1024**2 + 1, "15 MiB"),     # ten and over: no decimals
    (3 * 1024**3 // 2, "1.5 GiB"),
])
def test_format(n: int, text: str) -> None:
    assert format_size(n) == text


@pytest.mark.parametrize("text", ["1 KiB", "200 KiB", "1 MiB", "2 GiB"])
def test_what_is_printed_for_whole_units_parses_back(text: str) -> None:
    assert format_size(parse_size(text)) == text
