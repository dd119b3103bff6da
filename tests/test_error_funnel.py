"""One error funnel (issue 34): the fast entry (zen/cli/fast.py: zen status / show / dispatch) and
the full CLI end a failure the same way, with the exit codes of DESIGN section 9, because they call
the same function (zen/cli/funnel.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT, zen
from tests.test_jobs import claim_all


def test_an_expected_error_reads_and_exits_the_same_through_either_entry(lane: Path, home: Path) -> None:
    fast = zen("show", "no-job-like-this")          # the fast entry takes it
    full = zen("show", "no-job-like-this", "--json")  # --json: the full CLI takes it
    assert (fast.returncode, full.returncode) == (1, 1), (fast.stderr, full.stderr)
    assert fast.stderr == full.stderr and fast.stderr.startswith("zen: ") and fast.stderr.count("\n") == 1
    no_home = zen("status", env={"ZEN_HOME": str(home / "not-a-home")})
    assert no_home.returncode == 1 and no_home.stderr.startswith("zen: ") and "Traceback" not in no_home.stderr


def test_a_bug_met_by_the_fast_entry_exits_3_with_a_crash_log_and_loads_no_cli_framework(
        lane: Path, home: Path) -> None:
    zen("dispatch", "x", "--name", "bug")
    [job_id] = claim_all(home)
    events = home / "jobs" / job_id / "events.jsonl"
    events.unlink()
    events.mkdir()  # a condition no code path expects
    probe = ("import json, sys, runpy; sys.argv = ['zen', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('zen', run_name='__main__')\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "sys.stdout.write(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click'))]))")
    logs = []
    for args in (["show", job_id], ["show", job_id, "--json"]):
        r = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=REPO_ROOT)
        code, framework = json.loads(r.stdout)
        assert code == 3, (args, r.stderr)
        assert "Traceback" not in r.stderr and "zen: unexpected error; the details are in " in r.stderr
        log = Path(r.stderr.strip().split(" in ")[-1])
        assert log.parent == home / "logs" and "Traceback" in log.read_text()
        logs.append(log)
        assert bool(framework) == ("--json" in args), (args, framework)  # the fast entry stays typer-free
    assert logs[0] != logs[1]
