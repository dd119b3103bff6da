"""Job ids sort by creation time and carry a slug of the task name; times are UTC with a Z."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from zen.core.ids import ID_RE, NAME_RE, iso, make_job_id, name_from_prompt, parse_iso, slugify


@pytest.mark.parametrize(("text", "slug"), [
    ("Fix the Login!", "fix-the-login"),
    ("  spaces   and\ttabs ", "spaces-and-tabs"),
    ("already-a-slug", "already-a-slug"),
    ("under_score.dots/slash", "under-score-dots-slash"),
    ("café au lait", "caf-au-lait"),
    ("", "task"),
    ("!!!", "task"),
    ("---", "task"),
])
def test_slugify(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_slugify_cuts_long_names_without_a_trailing_dash() -> None:
    slug = slugify("a" * 31 + " tail that is cut")
    assert slug == "a" * 31 and len(slug) <= 32
    assert slugify("word " * 20, max_len=10) == "word-word"


@pytest.mark.parametrize("text", ["Fix it", "x" * 200, "!!", "ÄÖÜ 123", "9 lives", "-lead"])
def test_every_slug_is_a_valid_task_name(text: str) -> None:
    assert NAME_RE.match(slugify(text))


def test_name_from_prompt_takes_the_first_words() -> None:
    assert name_from_prompt("Fix the login bug now please") == "fix-the-login-bug"
    assert name_from_prompt("Fix\nthe\n\nlogin") == "fix-the-login"
    assert name_from_prompt("refactor", words=4) == "refactor"
    assert name_from_prompt("one two three", words=2) == "one-two"


def test_a_job_id_has_the_documented_shape() -> None:
    now = datetime(2026, 11, 29, 10, 15, 0, tzinfo=UTC)
    job = make_job_id("Fix Login", now=now, rand="3fa9")
    assert job == "20261129T101500Z-fix-login-3fa9"
    assert ID_RE.match(job)
    assert ID_RE.match(make_job_id("anything at all"))


def test_job_ids_are_stamped_in_utc() -> None:
    cet = timezone(timedelta(hours=1))
    job = make_job_id("x", now=datetime(2026, 11, 29, 11, 15, 0, tzinfo=cet), rand="0000")
    assert job.startswith("20261129T101500Z-")


def test_job_ids_sort_by_creation_time_whatever_the_name() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    names = ["zzz", "aaa", "mmm", "bbb"]
    ids = [make_job_id(n, now=t0 + timedelta(seconds=i)) for i, n in enumerate(names)]
    assert sorted(ids) == ids


def test_random_suffixes_differ() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert len({make_job_id("x", now=now) for _ in range(50)}) > 40


@pytest.mark.parametrize("bad", ["fix-login", "20261129T101500Z-fix-login", "20261129T101500Z-Fix-3fa9",
                                 "20261129T101500Z-../x-3fa9", "2026112T101500Z-fix-3fa9", "x20261129T101500Z-a-3fa9"])
def test_the_id_grammar_refuses_other_shapes(bad: str) -> None:
    assert not ID_RE.match(bad)


@pytest.mark.parametrize(("name", "ok"), [
    ("fix-login", True), ("a", True), ("9", True), ("x" * 48, True),
    ("x" * 49, False), ("-x", False), ("Fix", False), ("a_b", False), ("", False), ("a/b", False),
])
def test_task_name_grammar(name: str, ok: bool) -> None:
    assert bool(NAME_RE.match(name)) is ok


def test_iso_has_milliseconds_and_a_z() -> None:
    ts = datetime(2026, 11, 29, 10, 15, 2, 456789, tzinfo=UTC)
    assert iso(ts) == "2026-11-29T10:15:02.456Z"
    assert iso(datetime(2026, 11, 29, 10, 15, 2, tzinfo=UTC)) == "2026-11-29T10:15:02.000Z"


def test_iso_converts_to_utc() -> None:
    ts = datetime(2026, 11, 29, 12, 0, 0, tzinfo=timezone(timedelta(hours=2)))
    assert iso(ts) == "2026-11-29T10:00:00.000Z"


def test_parse_iso_reads_what_iso_writes() -> None:
    ts = datetime(2026, 11, 29, 10, 15, 2, 456000, tzinfo=UTC)
    back = parse_iso(iso(ts))
    assert back == ts and back.tzinfo is not None
    assert parse_iso("2026-11-29T10:15:02+00:00") == datetime(2026, 11, 29, 10, 15, 2, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_iso("yesterday")
