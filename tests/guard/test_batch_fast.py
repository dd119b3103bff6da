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
