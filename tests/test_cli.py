"""What the command line promises beyond each command's own data: one JSON document per --json,
help that helps, a note when the simulated agent stands in, agent text that cannot drive the
terminal, and the lazy loading that keeps a command's start small."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT, zen
from tests.test_jobs import claim_all
from zen.cli.main import COMMANDS, command_name, modules_for
from zen.cli.render import Table, clean, table_lines
from zen.store.home import Home
from zen.store.jobs import JobStore


def test_leaving_out_agent_says_that_the_simulated_agent_runs(lane: Path, home: Path) -> None:
    r = zen("dispatch", "fix the login bug")
    assert r.returncode == 0, r.stderr
    assert "no --agent given" in r.stderr and "simulated agent" in r.stderr and "--agent claude" in r.stderr
    assert "-fix-the-login-bug-" in r.stdout and r.stdout.count("\n") == 1
    r = zen("dispatch", "fix the login bug", "--json")
    assert json.loads(r.stdout)["agent"] == "sim" and "simulated agent" in r.stderr
    # a chosen agent, even sim itself, needs no note
    for args in (["--agent", "sim"], ["--cmd", "true"]):
        r = zen("dispatch", "again", *args)
        assert r.returncode == 0 and r.stderr == "", r.stderr


def test_dispatch_help_names_the_default_agent() -> None:
    out = zen("dispatch", "--help").stdout
    assert "defaults.agent" in out and "sim" in out


def test_guard_hook_help_explains_instead_of_blocking(home: Path) -> None:
    r = zen("guard", "hook", "--help")
    assert r.returncode == 0, r.stderr
    assert "Usage: zen guard hook" in r.stdout and "PreToolUse" in r.stdout
    assert "block" not in r.stderr.lower() and "blocked" not in r.stdout.lower()
    # the hook itself still answers in the agent's protocol, fail-closed
    worktree = home / "worktrees" / "x"
    payload = {"session_id": "t", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "rm -rf ~/.ssh"}, "cwd": str(worktree)}
    r = zen("guard", "hook", input=json.dumps(payload), env={"ZEN_WORKTREE": str(worktree)})
    assert r.returncode == 2, (r.stdout, r.stderr)
    r = zen("guard", "hook", input="")
    assert r.returncode == 2


def test_turn_hook_help_goes_through_the_cli() -> None:
    r = zen("hook", "Stop", "--help")
    assert r.returncode == 0 and "Usage: zen hook" in r.stdout


def _job_with_output(home: Path, text: bytes) -> str:
    zen("dispatch", "print things", "--name", "printer", "--agent", "sim")
    [job_id] = claim_all(home)
    (home / "jobs" / job_id / "pane.log").write_bytes(text)
    return job_id


def test_output_json_is_one_document(lane: Path, home: Path) -> None:
    job_id = _job_with_output(home, b"\x1b[1mbold\x1b[0m line one\nline two\n")
    doc = json.loads(zen("output", "printer", "--json").stdout)
    assert doc == {"job": job_id, "source": "log", "text": "bold line one\nline two\n"}
    doc = json.loads(zen("output", "printer", "--json", "--lines", "1").stdout)
    assert doc["text"] == "line two\n"
    raw = json.loads(zen("output", "printer", "--json", "--raw").stdout)
    assert raw["text"].startswith("\x1b[1mbold")
    assert zen("output", "printer").stdout == "bold line one\nline two\n"


def test_output_follow_json_is_one_document_per_line(lane: Path, home: Path) -> None:
    job_id = _job_with_output(home, b"first\n")
    JobStore(Home(home)).append(job_id, "job.cancelled", reason="test")  # not live: follow ends at once
    r = zen("output", job_id, "--follow", "--json")
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.returncode == 0 and docs == [{"job": job_id, "source": "log", "text": "first\n"}]


def test_agent_text_cannot_drive_the_terminal(lane: Path, home: Path) -> None:
    zen("dispatch", "x", "--name", "evil", "--agent", "sim")
    [job_id] = claim_all(home)
    JobStore(Home(home)).append(job_id, "job.failed", reason="boom \x1b]0;owned\x07 \x1b[2J")
    for args in (["status"], ["show", job_id], ["log", job_id]):
        out = zen(*args).stdout
        assert "\x1b" not in out and "\x07" not in out, args
        assert "\\x1b[2J" in out, (args, out)
    # --json keeps the data as it is
    doc = json.loads(zen("show", job_id, "--json").stdout)
    assert doc["state"]["reason"] == "boom \x1b]0;owned\x07 \x1b[2J"


def test_status_table_columns_line_up(lane: Path, home: Path) -> None:
    zen("dispatch", "a", "--name", "short", "--agent", "sim")
    zen("dispatch", "b", "--name", "a-much-longer-name", "--agent", "sim")
    claim_all(home)
    lines = zen("status").stdout.splitlines()
    table = lines[lines.index(next(x for x in lines if x.startswith("id "))):]
    assert len(table) == 3
    starts = {line.index("queued") if "queued" in line else line.index("state") for line in table}
    assert len(starts) == 1


def _table(out: str) -> list[str]:
    lines = out.splitlines()
    return lines[lines.index(next(x for x in lines if x.startswith("id "))):]


def test_status_text_shows_each_worker_under_the_job_that_spawned_it(lane: Path, home: Path, tmp_path: Path) -> None:
    lead = zen("dispatch", "lead the work", "--name", "lead", "--agent", "sim").stdout.strip()
    loner = zen("dispatch", "on its own", "--name", "loner", "--agent", "sim").stdout.strip()
    workers = []
    for name in ("w-a", "w-b"):
        f = tmp_path / f"{name}.yaml"
        f.write_text(f"prompt: part {name}\nname: {name}\nagent: sim\nlane: app\nparent: {lead}\n"
                     f"created_by: job:{lead}\n")
        r = zen("dispatch", "--file", str(f), "--json")
        assert r.returncode == 0, r.stderr
        workers.append(json.loads(r.stdout)["id"])
    for when in ("pending", "queued"):
        table = _table(zen("status").stdout)
        ids = [line.split()[0] if not line.startswith(("├", "└")) else line.split()[1] for line in table[1:]]
        # the workers right below their parent, drawn as its branches; the lone job a root
        assert ids == [lead, *workers, loner], table
        assert table[2].startswith(f"├─ {workers[0]} ") and table[3].startswith(f"└─ {workers[1]} "), table
        assert table[1].startswith(f"{lead} ") and table[4].startswith(f"{loner} "), table
        assert all(f" {when} " in line for line in table[1:]), table
        if when == "pending":
            claim_all(home)
    shown = zen("show", lead).stdout
    assert "parent   " not in shown
    assert f"parent   {lead}" in zen("show", workers[0]).stdout


def test_table_lines_pad_every_column_and_count_wide_characters() -> None:
    t = Table(["id", "why"], [["a", "longer text here"], ["bbbbbb", "x"], ["日本", "é"]])
    assert list(table_lines(t)) == ["id      why             ", "a       longer text here",
                                    "bbbbbb  x               ", "日本    é               "]
    assert list(table_lines(Table(["x"], [["two\nlines"]]))) == ["x        ", "two lines"]


def test_clean_shows_control_characters_and_keeps_text() -> None:
    assert clean("a\x1b[31mb\x00c\x9bd") == "a\\x1b[31mb\\x00c\\x9bd"
    assert clean("tab\tand\nnewline, ünïcödé") == "tab\tand\nnewline, ünïcödé"


def test_the_chosen_command_alone_is_loaded() -> None:
    assert command_name(["--home", "status", "show", "x"]) == "show"
    assert command_name(["--home=/h", "status"]) == "status"
    assert modules_for(["status", "--json"]) == ["zen.cli.status"]
    assert modules_for(["lane", "add", "x", "y"]) == ["zen.cli.lane"]
    assert modules_for(["--version"]) == []
    everything = set(COMMANDS.values())
    assert set(modules_for([])) == everything and set(modules_for(["--help"])) == everything
    assert set(modules_for(["no-such-command"])) == everything


def test_status_show_and_dispatch_import_neither_rich_nor_typer_nor_the_models(lane: Path, home: Path) -> None:
    zen("dispatch", "x", "--name", "one", "--agent", "sim")
    [job_id] = claim_all(home)
    probe = ("import json, sys, runpy; sys.argv = ['zen', *sys.argv[1:]];\n"
             "try:\n    runpy.run_module('zen', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "mods = sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'zen', 'watchdog', 'tree_sitter', 'libtmux',"
             " 'typer', 'pydantic', 'ruamel'))\n"
             "sys.stderr.write(json.dumps(mods))")
    for args in (["status"], ["show", job_id], ["dispatch", "y", "--agent", "sim"]):
        r = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=REPO_ROOT)
        mods = json.loads(r.stderr.splitlines()[-1])
        heavy = [m for m in mods if m.split(".")[0] in ("rich", "watchdog", "tree_sitter", "libtmux")]
        assert not heavy, (args, heavy)
        cli = {m for m in mods if m.startswith("zen.cli.")}
        # the typer-free entry (zen/cli/fast.py), the error funnel it shares with the full CLI, and
        # what its command prints through
        own = {"status": "zen.cli.views", "show": "zen.cli.views", "dispatch": "zen.cli.submit"}[args[0]]
        assert cli == {"zen.cli.fast", "zen.cli.funnel", "zen.cli.render", own}, (args, cli)
        models = [m for m in mods if m.split(".")[0] in ("typer", "pydantic", "ruamel")]
        assert not models, (args, models)


def test_promote_and_demote_take_json(home: Path) -> None:
    doc = json.loads(zen("autonomy", "demote", "code", "--json").stdout)
    assert doc == {"domain": "code", "level": "observe", "override": False}
    r = zen("autonomy", "promote", "code", "--override", "--reason", "trusted team", "--json")
    assert json.loads(r.stdout) == {"domain": "code", "level": "suggest", "override": True}, r.stderr
    assert zen("autonomy", "demote", "code").stdout == "code is now observe\n"
