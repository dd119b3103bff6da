"""What a user types for a job: the whole id, a unique prefix, or a unique name, like git."""

from __future__ import annotations

import pytest

from zen.core.refs import resolve, resolve_many
from zen.errors import Ambiguous, NotFound

NAMES = {
    "20261129T101500Z-fix-login-3fa9": "fix-login",
    "20261129T101600Z-fix-logout-77aa": "fix-logout",
    "20261130T090000Z-docs-0001": "docs",
    "20261130T090000Z-docs-0002": "docs",
}


def test_the_whole_id() -> None:
    assert resolve("20261129T101500Z-fix-login-3fa9", NAMES) == "20261129T101500Z-fix-login-3fa9"


def test_a_unique_prefix() -> None:
    assert resolve("20261129T1015", NAMES) == "20261129T101500Z-fix-login-3fa9"
    assert resolve("20261129T1016", NAMES) == "20261129T101600Z-fix-logout-77aa"


def test_a_unique_name() -> None:
    assert resolve("fix-login", NAMES) == "20261129T101500Z-fix-login-3fa9"


def test_surrounding_space_is_ignored() -> None:
    assert resolve("  fix-logout\n", NAMES) == "20261129T101600Z-fix-logout-77aa"


def test_an_exact_id_wins_over_a_longer_id_it_prefixes() -> None:
    names = {"abc": "one", "abcd": "two"}
    assert resolve("abc", names) == "abc"


def test_an_ambiguous_prefix_lists_the_candidates() -> None:
    with pytest.raises(Ambiguous) as info:
        resolve("20261129T10", NAMES)
    msg = str(info.value)
    assert "ambiguous" in msg and "20261129T101500Z-fix-login-3fa9" in msg and "20261129T101600Z-fix-logout-77aa" in msg


def test_a_name_shared_by_two_jobs_is_ambiguous() -> None:
    with pytest.raises(Ambiguous, match="20261130T090000Z-docs-0001, 20261130T090000Z-docs-0002"):
        resolve("docs", NAMES)


def test_a_long_candidate_list_is_cut() -> None:
    names = {f"2026-{i:02d}": "x" for i in range(12)}
    with pytest.raises(Ambiguous) as info:
        resolve("2026", names)
    assert str(info.value).endswith(" ...") and "2026-07" in str(info.value) and "2026-08" not in str(info.value)


def test_nothing_matches() -> None:
    with pytest.raises(NotFound, match="no job matches 'nope' \\(zen status lists them\\)"):
        resolve("nope", NAMES)
    with pytest.raises(NotFound, match="no incident matches"):
        resolve("nope", NAMES, what="incident")


@pytest.mark.parametrize("ref", ["", "   "])
def test_an_empty_ref(ref: str) -> None:
    with pytest.raises(NotFound, match="no job given"):
        resolve(ref, NAMES)


def test_the_errors_are_expected_errors_with_exit_1() -> None:
    for exc in (Ambiguous, NotFound):
        assert exc("x").exit_code == 1


def test_resolve_many_keeps_the_order_and_fails_on_any() -> None:
    assert resolve_many(["fix-logout", "20261129T1015"], NAMES) == [
        "20261129T101600Z-fix-logout-77aa", "20261129T101500Z-fix-login-3fa9"]
    with pytest.raises(NotFound):
        resolve_many(["fix-login", "nope"], NAMES)
