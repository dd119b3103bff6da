"""`zen guard check --batch` skips the CLI framework (like the hook) and answers exactly what the
CLI's own --batch path answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT


def test_fast_batch_matches_the_cli_and_stays_lean(home: Path, tmp_path: Path) -> None:
    wt = home / "worktrees" / "j"
    wt.mkdir(parents=True)
    lines = [{"command": c, "cwd": str(wt)} for c in
             ("git status", "rm -rf ~", "cat .env", "rm -rf build", "curl https://api.stripe.com/v1/x")]
    lines.append({"tool": "Write", "file_path": str(home / "policy" / "guardian.yaml"), "cwd": str(wt)})
    f = tmp_path / "b.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    probe = ("import runpy, sys\n"
             "sys.argv = ['zen', 'guard', 'check', '--batch', sys.argv[1]]\n"
             "try:\n    runpy.run_module('zen', run_name='__main__')\n"
             "except SystemExit as e:\n    code = e.code\n"
             "sys.stderr.write('HEAVY %s %s' % (sorted(m for m in ('typer', 'pydantic', 'rich', 'ruamel') "
             "if m in sys.modules), code))\n")
    # the first run compiles the policy cache (that alone reads YAML); the next ones only read JSON
    for _ in range(2):
        fast = subprocess.run([sys.executable, "-c", probe, str(f)], capture_output=True, text=True, cwd=REPO_ROOT)
    assert "HEAVY [] 4" in fast.stderr, fast.stderr
    # what the CLI's --batch calls
    full = subprocess.run([sys.executable, "-c",
                           "import sys; from zen.guard.batch import run; sys.exit(run(sys.argv[1], None, sys.argv[2]))",
                           str(f), str(home)], capture_output=True, text=True, cwd=REPO_ROOT)
    assert fast.stdout == full.stdout
    answers = [json.loads(x) for x in fast.stdout.splitlines()]
    assert [a["decision"] for a in answers] == ["allow", "deny", "deny", "allow", "deny", "deny", "deny"]
    assert answers[-1]["rule"] == "guard.input"


def test_a_parallel_batch_answers_as_one_process_in_order(home: Path, tmp_path: Path) -> None:
    """A block big enough to share between forked copies gives exactly the answers, in the same
    order, as one process judging it alone; the part of a copy that dies is judged again."""
    wt = home / "worktrees" / "j"
    wt.mkdir(parents=True)
    commands = ["git status", "rm -rf ~", "cat .env", "rm -rf build", "curl https://api.stripe.com/v1/x",
                "bash -c 'rm -rf /'", "ls src", "git push --force origin main"]
    lines = [json.dumps({"command": f"{commands[i % len(commands)]} # {i}", "cwd": str(wt)}) for i in range(1400)]
    lines[700] = "not json"
    f = tmp_path / "b.jsonl"
    f.write_text("\n".join(lines) + "\n")
    probe = ("import io, sys\nfrom zen.guard import batch\n"
             "batch.WORKERS = int(sys.argv[3])\n"
             "if sys.argv[4] == 'crash':\n"
             "    import os\n    parent, real = os.getpid(), batch.judge\n"
             "    def judge(*a):\n"
             "        if os.getpid() != parent:\n            raise RuntimeError('a copy dies')\n"
             "        return real(*a)\n"
             "    batch.judge = judge\n"
             "out = io.StringIO()\nrc = batch.run(sys.argv[1], None, sys.argv[2], out)\n"
             "sys.stdout.write(out.getvalue())\nsys.exit(rc)\n")

    def answers(workers: int, how: str = "") -> list[str]:
        r = subprocess.run([sys.executable, "-c", probe, str(f), str(home), str(workers), how or "-"],
                           capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
        assert r.returncode == 4, r.stderr
        return r.stdout.splitlines()

    alone = answers(1)
    assert len(alone) == 1400 and json.loads(alone[700])["rule"] == "guard.input"
    assert [json.loads(a)["decision"] for a in alone[:8]] == ["allow", "deny", "deny", "allow", "deny", "deny",
                                                              "allow", "deny"]
    assert answers(3) == alone
    assert answers(3, "crash") == alone


def test_a_copys_short_or_failed_answer_is_not_taken(tmp_path: Path) -> None:
    import os

    from zen.guard.batch import _collect

    for payload, code in [(b"3\na\nb\n", 0), (b"2\na\nb\n", 0), (b"2\na\nb\n", 1)]:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.write(w, payload)
            os._exit(code)
        os.close(w)
        got = _collect(pid, r, 2)
        assert got == (["a", "b"] if (payload, code) == (b"2\na\nb\n", 0) else None)
