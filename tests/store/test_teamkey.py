"""zen.store.teamkey: the home's team key is made once (0600, by link so racing makers agree),
a job's token is an HMAC only that key gives, and `valid` fails closed: no key, no token, a short
key or another job's token is never accepted."""

from __future__ import annotations

import multiprocessing
import stat
from pathlib import Path

import pytest

from zen.store import teamkey
from zen.store.layout import Home

JOB = "20261201T000000Z-fix-0001"
OTHER = "20261201T000001Z-other-0002"


@pytest.fixture
def zh(tmp_path: Path) -> Home:
    return Home(tmp_path / "zh")


def test_the_first_token_makes_a_private_key(zh: Home) -> None:
    assert not zh.team_key.exists()
    tok = teamkey.token(zh, JOB)
    assert stat.S_IMODE(zh.team_key.stat().st_mode) == 0o600
    key = zh.team_key.read_text()
    assert key.endswith("\n") and len(key.strip()) == 64 and int(key, 16) >= 0
    assert len(tok) == 64 and tok != key.strip()
    assert [p.name for p in zh.team_key.parent.iterdir()] == ["team-key"]   # no temp file left


def test_a_token_is_stable_and_names_one_job(zh: Home) -> None:
    assert teamkey.token(zh, JOB) == teamkey.token(zh, JOB)
    assert teamkey.token(zh, JOB) != teamkey.token(zh, OTHER)


def test_valid_accepts_the_jobs_own_token_only(zh: Home) -> None:
    tok = teamkey.token(zh, JOB)
    assert teamkey.valid(zh, JOB, tok)
    assert teamkey.valid(zh, JOB, f"  {tok}\n")            # as pasted from a shell
    assert not teamkey.valid(zh, OTHER, tok)                # never speaks for another job
    assert not teamkey.valid(zh, JOB, tok.upper())
    assert not teamkey.valid(zh, JOB, tok[:-1])
    assert not teamkey.valid(zh, JOB, "")
    assert not teamkey.valid(zh, JOB, None)


def test_valid_without_a_key_is_false_and_makes_none(zh: Home) -> None:
    assert not teamkey.valid(zh, JOB, "0" * 64)
    assert not zh.team_key.exists()


def test_a_new_key_invalidates_every_old_token(zh: Home) -> None:
    tok = teamkey.token(zh, JOB)
    zh.team_key.unlink()
    fresh = teamkey.token(zh, JOB)
    assert fresh != tok
    assert not teamkey.valid(zh, JOB, tok) and teamkey.valid(zh, JOB, fresh)


@pytest.mark.parametrize("content", ["", "\n", "short-key\n", "x" * 31])
def test_a_key_too_short_to_trust_is_refused_with_the_fix(zh: Home, content: str) -> None:
    zh.team_key.parent.mkdir(parents=True)
    zh.team_key.write_text(content)
    with pytest.raises(ValueError) as exc:
        teamkey.token(zh, JOB)
    assert str(exc.value) == f"{zh.team_key} holds no usable key (delete it: zen makes a new one)"
    assert not teamkey.valid(zh, JOB, "anything")
    assert zh.team_key.read_text() == content               # never replaced behind the user's back


def test_a_key_someone_wrote_is_used_as_it_is(zh: Home) -> None:
    zh.team_key.parent.mkdir(parents=True)
    zh.team_key.write_text("k" * 40 + "\n")
    tok = teamkey.token(zh, JOB)
    assert zh.team_key.read_text() == "k" * 40 + "\n"
    assert teamkey.valid(zh, JOB, tok)


def test_job_ids_are_not_confused_by_a_shared_prefix(zh: Home) -> None:
    tok = teamkey.token(zh, "job-1")
    assert not teamkey.valid(zh, "job-10", tok)
    assert not teamkey.valid(zh, "job-", tok)


def _make_token(root: str, job: str) -> str:
    return teamkey.token(Home(root), job)


def test_racing_processes_agree_on_one_key(zh: Home) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        tokens = pool.starmap(_make_token, [(str(zh.root), JOB)] * 3)
    assert len(set(tokens)) == 1
    assert teamkey.valid(zh, JOB, tokens[0])
    assert sorted(p.name for p in zh.team_key.parent.iterdir()) == ["team-key"]
