"""bubblewrap (Debian's `bubblewrap`): the OS wall zen builds around an agent that has no sandbox
of its own (Gemini CLI, aider, a `cmd`), and around the simulated agent's commands.

    Wall(worktree=..., hide=(zen home, user home), read_only=(install, git dir, handoff), ...)
    argv(wall, ["aider", ...]) -> the command line that runs it inside the wall

What a wall is, by construction (not by what a parser saw):
- the whole file system read-only, the worktree the only writable place, and inside the worktree its
  `.git` pointer read-only (an agent that rewrote it would point zen's own git at a repository it
  made, hooks and all);
- zen's home and the user's home hidden behind empty folders (no policy, spool, approvals, control,
  timelines, logs or credentials), /tmp private; what the agent needs to run is bound back read-only
  (its own install, the lane's git metadata, the job's handoff);
- no capabilities (`--cap-drop ALL`) in a user namespace of its own (`--unshare-user`), which may not
  make another (`--disable-userns`): uid 0 inside is no root outside, and zen running as root gives
  the agent nothing more;
- its own pid namespace (`--unshare-pid`, a fresh /proc): no process outside, the supervisor or a
  sibling agent, is visible or signalable; its own IPC and host name; a new session
  (`--new-session`: no TIOCSTI into a terminal outside); it dies with its parent;
- its own network namespace (`--unshare-net`) unless the wall says `network="host"`: nothing leaves
  but the endpoints it forwards, each `host:port` reached through a unix socket and socat
  (`Wall.forwards`), so the model's API works and a second loopback address or any other host does
  not exist in there.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NETWORKS = ("none", "host")
# names and addresses inside the wall for forwarded hosts that are not loopback addresses already
_ALIAS_NET = "127.0.1."
INNER_DIR = "/tmp/.zen-wall"       # the forwards' sockets inside (the wall's private /tmp)


@dataclass(frozen=True)
class Forward:
    host: str
    port: int


@dataclass(frozen=True)
class Wall:
    worktree: Path                              # read-write, the cwd
    hide: tuple[Path, ...] = ()                 # empty folders over these (zen's home, the user's home)
    writable: tuple[Path, ...] = ()             # bound back read-write (an agent's own home in its job)
    read_only: tuple[Path, ...] = ()            # bound back read-only (inside what is hidden, or not)
    binds: tuple[tuple[Path, Path], ...] = ()   # (outside, inside) bound read-only at another path
    network: str = "none"                       # "none": own namespace + forwards; "host": the host's
    forwards: tuple[Forward, ...] = ()          # host:port reachable from inside (network "none")
    run_dir: Path | None = None                 # where the forwards' sockets live (private, outside)
    home: Path | None = None                    # $HOME inside


def bwrap() -> str | None:
    return shutil.which("bwrap")


def socat() -> str | None:
    return shutil.which("socat")


@functools.lru_cache(maxsize=1)
def _has(flag: str) -> bool:
    """Whether this bubblewrap knows `flag` (0.8 has --disable-userns)."""
    found = bwrap()
    if not found:
        return False
    r = subprocess.run([found, "--help"], capture_output=True, text=True, timeout=10)
    return flag in (r.stdout + r.stderr)


BASE_FLAGS = ("--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc",
              "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL")


def _flags(network: str) -> list[str]:
    out = list(BASE_FLAGS)
    if _has("--disable-userns"):
        out.append("--disable-userns")
    if network != "host":
        out.append("--unshare-net")
    return out


@functools.lru_cache(maxsize=1)
def works() -> tuple[bool, str]:
    """(usable, why not): bubblewrap is installed and can build the whole wall here."""
    found = bwrap()
    if found is None:
        return False, "bubblewrap is not installed (apt-get install bubblewrap)"
    r = subprocess.run([found, *_flags("none"), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                        "true"], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        return False, f"bubblewrap cannot make a sandbox here: {(r.stderr or r.stdout).strip()[:160]}"
    return True, ""


def forwards_work() -> tuple[bool, str]:
    if socat() is None:
        return False, "socat is not installed (apt-get install socat): the sandbox reaches its model API through it"
    return True, ""


def ready() -> tuple[bool, str]:
    """(usable, why not): the whole wall can stand here, the forwarding of its endpoints too."""
    ok, why = works()
    return (ok, why) if not ok else forwards_work()


def _alias(forwards: tuple[Forward, ...]) -> dict[str, str]:
    """host -> the loopback address it has inside the wall (loopback addresses keep their own)."""
    out: dict[str, str] = {}
    named = 0
    for f in forwards:
        if f.host in out:
            continue
        if f.host == "localhost" or f.host.startswith("127."):
            out[f.host] = "127.0.0.1" if f.host == "localhost" else f.host
        else:
            named += 1
            out[f.host] = f"{_ALIAS_NET}{named}"
    return out


def hosts_text(forwards: tuple[Forward, ...]) -> str:
    lines = ["127.0.0.1 localhost", "::1 localhost"]
    lines += [f"{addr} {host}" for host, addr in _alias(forwards).items() if host not in (addr, "localhost")]
    return "\n".join(lines) + "\n"


def socket_for(run_dir: Path, index: int) -> Path:
    """The unix socket of a wall's forward number `index` (short: a unix socket's path is at most
    107 bytes)."""
    return run_dir / f"f{index}.sock"


def run_dir_for(key: str) -> Path:
    """A private directory for a wall's sockets, short enough for them: /tmp/zen-wall-<uid>/<key>,
    made 0700 and refused when someone else owns it or it is a symbolic link."""
    top = Path(f"/tmp/zen-wall-{os.getuid()}")
    for d in (top, top / hashlib.sha256(key.encode()).hexdigest()[:16]):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            pass
        st = d.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise PermissionError(f"{d} is not a private directory of this user; remove it")
    return d


def argv(wall: Wall, command: list[str]) -> list[str]:
    """`command` run inside the wall (through the launcher when it forwards endpoints)."""
    found = bwrap()
    if found is None:
        raise FileNotFoundError("bwrap")
    forwards = wall.forwards if wall.network != "host" else ()
    out = [found, *_flags(wall.network)]
    if any(f.port < 1024 for f in forwards):
        # the one capability a forward to a provider's port 443 needs: binding a low port, which in
        # the wall's own user and network namespaces reaches nothing outside them
        out += ["--cap-add", "CAP_NET_BIND_SERVICE"]
    out += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in wall.hide:
        out += ["--tmpfs", str(path)]
    for path in wall.writable:
        out += ["--bind", str(path), str(path)]
    for path in wall.read_only:   # after the writable ones: a file of theirs may be bound read-only
        if path.exists():
            out += ["--ro-bind", str(path), str(path)]
    for outside, inside in wall.binds:
        out += ["--ro-bind", str(outside), str(inside)]
    out += ["--bind", str(wall.worktree), str(wall.worktree)]
    pointer = wall.worktree / ".git"
    if pointer.is_file():   # a linked worktree's pointer to its git dir: zen's own git trusts it
        out += ["--ro-bind", str(pointer), str(pointer)]
    inner: str | None = None
    if forwards:
        if wall.run_dir is None:
            raise ValueError("a wall with forwards needs a run_dir for their sockets")
        out += ["--ro-bind", str(wall.run_dir / "hosts"), "/etc/hosts"]
        for i in range(len(forwards)):   # a socket bound read-only still takes connections
            out += ["--ro-bind", str(socket_for(wall.run_dir, i)), f"{INNER_DIR}/{socket_for(wall.run_dir, i).name}"]
        inner = _inner_script(forwards)
    out += ["--chdir", str(wall.worktree)]
    if wall.home is not None:
        out += ["--setenv", "HOME", str(wall.home)]
    out.append("--")
    if inner is not None:
        out += ["/bin/sh", "-c", inner, "zen-wall"]
    out += command
    if forwards:
        assert wall.run_dir is not None
        spec = {"run_dir": str(wall.run_dir), "socat": socat() or "socat", "hosts": hosts_text(forwards),
                "forwards": [[f.host, f.port, str(socket_for(wall.run_dir, i))] for i, f in enumerate(forwards)]}
        return [sys.executable, "-I", "-S", str(Path(__file__).with_name("walllaunch.py")), json.dumps(spec), *out]
    return out


def _inner_script(forwards: tuple[Forward, ...]) -> str:
    """Inside the wall: a listener per forward on its loopback address, then the command."""
    alias = _alias(forwards)
    parts = []
    for i, f in enumerate(forwards):
        sock = f"{INNER_DIR}/{socket_for(Path('.'), i).name}"
        parts.append(f"socat TCP-LISTEN:{f.port},bind={alias[f.host]},fork,reuseaddr UNIX-CONNECT:{sock} "
                     f"</dev/null >/dev/null 2>&1 &")
    # wait (briefly) until every listener is up, so the agent's first connection finds it
    ready = " && ".join(f"[ -e /proc/net/tcp ] && grep -qi ':{f.port:04X} ' /proc/net/tcp" for f in forwards)
    parts.append(f"i=0; while [ $i -lt 50 ] && ! {{ {ready}; }}; do i=$((i+1)); sleep 0.02; done")
    parts.append('exec "$@"')
    return "\n".join(parts)
