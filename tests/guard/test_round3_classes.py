"""The third-round corpus, part C (tests/guard/round3.py), run in-process through decide(): at
`suggest` (the default level) every harmful case is denied and the ordinary use of the same tools
allowed; at act-and-report the same, except that an action past the worktree is allowed (and
reported). Plus the cases that need files on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard import round3
from tests.guard.ctxs import agent, bash, on_disk
from tests.guard.test_corpus import _home
from zen.guard.policy.load import load_policy

CASES = [(cls, *case) for cls, cases in round3.CLASSES.items() for case in cases]
IDS = [f"{c[0]}: {c[1][:70]}" for c in CASES]


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory):
    pol, _ = load_policy(_home(tmp_path_factory.mktemp("home")))
    assert pol.invalid is None, pol.invalid
    return pol


def _check(d, expected: str, rule: str | None, command: str, why: str) -> None:
    assert d.decision == expected, f"{command!r}: expected {expected} ({why}), got {d.as_dict()}"
    if rule is not None and expected == "deny":
        assert d.rule.startswith(rule), f"{command!r}: expected rule {rule} ({why}), got {d.as_dict()}"
    assert d.reason and "\n" not in d.reason and "Traceback" not in d.reason, d.as_dict()


def test_every_class_has_its_cases() -> None:
    for cls, cases in round3.CLASSES.items():
        harmful = sum(1 for c in cases if c[1] == round3.D)
        harmless = sum(1 for c in cases if c[1] == round3.A)
        if cls == "false-denies":
            assert harmless >= 10, (cls, harmless)
        else:
            assert harmful >= 30 and harmless >= 20, (cls, harmful, harmless)


@pytest.mark.parametrize("cls,command,expected,rule,why", CASES, ids=IDS)
def test_at_suggest(policy, cls: str, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(bash(policy, command, agent(level="suggest")), expected, rule, command, why)


@pytest.mark.parametrize("cls,command,expected,rule,why", CASES, ids=IDS)
def test_at_act_and_report(policy, cls: str, command: str, expected: str, rule: str | None, why: str) -> None:
    if rule == round3.BEYOND:          # past the worktree: allowed at act-and-report, and reported
        d = bash(policy, command, agent(level="act-and-report"))
        assert d.decision == "allow" and d.rule.startswith("report."), (command, d.as_dict())
        return
    _check(bash(policy, command, agent(level="act-and-report")), expected, rule, command, why)


# -- files on disk: what a client or a batch reads is judged by its text -------------------------

@pytest.fixture
def wt(tmp_path: Path) -> Path:
    w = tmp_path / "home" / "worktrees" / "J"
    (w / ".zen-tmp").mkdir(parents=True)
    (w / "drop.sql").write_text("BEGIN;\nDROP TABLE users;\nCOMMIT;\n")
    (w / "seed.sql").write_text("INSERT INTO users VALUES (1, 'a');\n")
    (w / "gets.txt").write_text("get /srv/a.txt a.txt\nls /srv\n")
    (w / "rms.txt").write_text("get /srv/a.txt a.txt\n-rm /srv/a.txt\n")
    (w / "up.lftp").write_text("open ftp.example\nmirror -R --delete . /www\n")
    (w / "notes.txt").write_text("read only\n")
    (w / "notes.txt").chmod(0o444)           # write-protected, not secret
    (w / "blob.sql").write_bytes(b"\x00\x01DROP TABLE users;\n")    # not text the guardian reads
    return w


@pytest.mark.parametrize("command,expected,rule", [
    ("psql app < drop.sql", "deny", "sql.destructive"),
    ("cat drop.sql | mysql app", "deny", "sql.destructive"),
    ("psql -f drop.sql app", "deny", "sql.destructive"),
    ("psql app < seed.sql", "allow", None),
    ("cat seed.sql | mysql app", "allow", None),
    ("psql app < blob.sql", "deny", "sql.unresolved"),          # a file the guardian cannot read
    ("cat blob.sql | psql app", "deny", "sql.unresolved"),
    ("sftp -b gets.txt host.example", "allow", None),
    ("sftp -b rms.txt host.example", "deny", "remote.destructive"),
    ("sftp -b missing.txt host.example", "deny", "remote.destructive"),
    ("lftp -f up.lftp", "deny", "remote.destructive"),
    ("cp notes.txt $TMPDIR/notes.txt", "allow", None),          # a write-protected file read
    ("cat notes.txt > $TMPDIR/n.txt", "allow", None),
])
def test_what_is_read_from_disk(policy, wt: Path, command: str, expected: str, rule: str | None) -> None:
    _check(bash(policy, command, on_disk(wt, level="suggest")), expected, rule, command, "on disk")


def test_a_policy_protected_file_is_read_and_copied_but_not_written(tmp_path: Path, wt: Path) -> None:
    home = tmp_path / "zh"
    _home(home)
    p = home / "policy" / "guardian.yaml"
    p.write_text(p.read_text().replace("protected_paths: []", 'protected_paths: ["notes.txt", "*.lock"]'))
    pol, _ = load_policy(str(home))
    assert pol.invalid is None, pol.invalid
    (wt / "uv.lock").write_text("x\n")
    ctx = on_disk(wt, level="suggest")
    for command in ("cp notes.txt $TMPDIR/", "cp uv.lock \"$TMPDIR/uv.lock\"", "cp uv.lock $TMPDIR/",
                    "rsync -a uv.lock notes.txt $TMPDIR/", "diff uv.lock $TMPDIR/x"):
        _check(bash(pol, command, ctx), "allow", None, command, "a read of a protected file")
    for command in ("cp $TMPDIR/x uv.lock", "echo x > notes.txt", "rsync -a $TMPDIR/x uv.lock",
                    "cp $TMPDIR/uv.lock sub/uv.lock", "mv $TMPDIR/uv.lock uv.lock"):
        _check(bash(pol, command, ctx), "deny", "policy.protected-path", command, "a write to it")
