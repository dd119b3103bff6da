"""The file editor against an agent that swaps a folder and a symlink while a human saves (security
findings M13, L19): no save and no read ever lands outside the worktree, and no answer is a 500."""

from __future__ import annotations

import ctypes
import os
import threading
import time
from pathlib import Path

from tests.server.served import Served

ROUNDS = 300


_libc = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _exchange(a: Path, b: Path) -> None:
    """renameat2(RENAME_EXCHANGE): `a` and `b` trade places in one step, as the probe's agent did."""
    if _libc.renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")


def _swapper(wt: Path, stop: threading.Event) -> None:
    """The agent's side: `sub` is a real folder one moment, a symlink out of the worktree the next."""
    while not stop.is_set():
        _exchange(wt / "sub", wt / "sub.l")


def test_a_symlink_swapped_mid_save_never_redirects_it_and_never_answers_500(served: Served, tmp_path: Path) -> None:
    job = served.dispatch_sim("raced", [{"write": {"path": "sub/keep.txt", "content": "mine\n"}}, {"wait": True}])
    served.wait_state(job, "waiting")
    wt = served.home / "worktrees" / job
    outside = tmp_path / "racetarget"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the worktree's\n")
    os.symlink(outside, wt / "sub.l")
    stop = threading.Event()
    agent = threading.Thread(target=_swapper, args=(wt, stop), daemon=True)
    agent.start()
    statuses: dict[int, int] = {}
    deadline = time.monotonic() + 90
    try:
        with served.client() as c:
            for i in range(ROUNDS):
                if time.monotonic() > deadline:
                    break
                r = c.put(f"/api/v1/agent/sessions/{job}/file", json={"path": f"sub/pwn{i % 7}.txt", "content": "pwned\n"})
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                assert r.status_code != 500, r.text
                if r.status_code != 200:
                    assert set(r.json()) == {"error"} and "\n" not in r.json()["error"], r.text  # one sentence
                g = c.get(f"/api/v1/agent/sessions/{job}/file", params={"path": "sub/secret.txt"})
                statuses[g.status_code] = statuses.get(g.status_code, 0) + 1
                assert g.status_code != 500, g.text
                assert "not the worktree's" not in g.text  # a read never reaches outside either
    finally:
        stop.set()
        agent.join(timeout=10)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"], statuses
    assert statuses.get(200, 0) > 0, statuses  # saves went through while the folder was real
    assert statuses.get(422, 0) > 0, statuses  # and were refused while it was the symlink
    assert set(statuses) <= {200, 404, 409, 422}, statuses
    # the saves went into the worktree's own folder, whichever of the two names it had then
    folder = next(p for p in (wt / "sub", wt / "sub.l") if not p.is_symlink())
    assert {"keep.txt", "pwn0.txt"} <= {p.name for p in folder.iterdir()}
    served.zen_ok("cancel", job)
