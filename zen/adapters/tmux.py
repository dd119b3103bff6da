"""zen's private tmux server: the one module that talks to tmux.

A thin wrapper around `tmux -L <socket> -f <conf>` run as subprocesses (dependency-free and
exact about arguments; libtmux adds nothing zen needs here). Every call names zen's own socket
and config, and drops $TMUX from the environment, so the user's default server is never reached
even when zen itself runs inside tmux.

Facts this relies on (measured on tmux 3.3a, reference/agents.md section 6):
- `remain-on-exit on` must be in the -f config: a bare start-server + `set -g` is lost, and an
  agent that exits in its first millisecond must still leave a dead pane with its exit status.
- A pane started with several argv words is exec'd directly (no shell); one word goes via `sh -c`.
- An argument that ends in ';' is a command separator to tmux unless escaped as '\\;'.
- pipe-pane survives respawn-pane, so a session is created holding a placeholder, its output is
  piped to the log, and only then is the agent respawned into it: no early output is lost.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from zen.errors import TmuxError

log = logging.getLogger(__name__)

CONF = """\
# zen's private tmux server (written by zen; edits are overwritten).
# Keep dead panes so an agent's exit status is readable even if it died at once.
set -g remain-on-exit on
# The server must not vanish between sessions while the supervisor restarts.
set -g exit-empty off
set -g history-limit 10000
# Agents are watched by zen, not by tmux alerts; keep the status line quiet.
set -g monitor-activity off
set -g visual-activity off
set -g status-left '[zen] '
set -g status-left-length 20
"""

# Set by tmux in every pane; passing the supervisor's values would confuse the agent's terminal.
_PANE_OWNED = frozenset({"TMUX", "TMUX_PANE", "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION",
                         "COLUMNS", "LINES", "SHLVL", "_", "OLDPWD", "PWD"})
PLACEHOLDER = ["sleep", "2147483647"]
# sh -c EXIT_WRAPPER EXIT_FILE ARGV...: run ARGV, publish its status by rename, pass it on.
# The wrapper outlives HUP/INT/TERM sent to the pane's process group (Ctrl-C in an attached
# pane, zen's own TERM) so it can still write the agent's status; then it re-raises the signal.
EXIT_WRAPPER = ('trap : HUP INT TERM; "$@"; c=$?; echo "$c" > "$0.tmp" && mv -f "$0.tmp" "$0"; '
                'if [ "$c" -gt 128 ] && [ "$c" -lt 193 ]; then trap - HUP INT TERM; kill -$((c - 128)) $$; fi; '
                'exit "$c"')
WIDTH, HEIGHT = 200, 50


@dataclass(frozen=True)
class PaneInfo:
    pane_id: str
    session: str
    dead: bool
    exit_code: int | None
    signal: int | None
    pid: int | None
    cursor: str

    @property
    def settled(self) -> bool:
        """Dead with its exit status known. tmux may report a pane dead (its pty closed) a moment
        before it has reaped the process, with the status still blank: wait for this."""
        return self.dead and (self.exit_code is not None or self.signal is not None)


def _escape_arg(arg: str) -> str:
    # tmux treats a trailing ';' as a command separator; '\;' is its escape for a literal one
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


class Tmux:
    def __init__(self, socket: str, conf: Path) -> None:
        self.socket = socket
        self.conf = conf

    @classmethod
    def for_home(cls, home: object) -> Tmux:
        from zen.store.home import Home

        assert isinstance(home, Home)
        return cls(home.tmux_socket, home.control / "tmux.conf")

    # -- plumbing -------------------------------------------------------------
    def base_argv(self) -> list[str]:
        return ["tmux", "-L", self.socket, "-f", str(self.conf)]

    @staticmethod
    def client_env() -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        return env

    def ensure_conf(self) -> None:
        try:
            if self.conf.read_text() == CONF:
                return
        except OSError:
            pass
        from zen.store.atomic import atomic_write

        self.conf.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.conf, CONF, durable=False)

    def run(self, *args: str, check: bool = True, input: str | None = None,
            timeout: float = 10) -> subprocess.CompletedProcess[str]:
        return self.run_chain(list(args), check=check, input=input, timeout=timeout)

    def run_chain(self, *commands: list[str], check: bool = True, input: str | None = None,
                  timeout: float = 10) -> subprocess.CompletedProcess[str]:
        """One or several tmux commands in one client call (tmux's `;` separator): one process
        instead of one per command, which is most of what starting an agent costs."""
        argv = self.base_argv()
        for i, cmd in enumerate(commands):
            if i:
                argv.append(";")
            argv += [_escape_arg(a) for a in cmd]
        first = commands[0][0] if commands and commands[0] else "tmux"
        try:
            r = subprocess.run(argv, check=False, capture_output=True, text=True, input=input,
                               env=self.client_env(), timeout=timeout)
        except FileNotFoundError:
            raise TmuxError("tmux is not installed or not on PATH (install tmux 3.2 or newer)") from None
        except subprocess.TimeoutExpired:
            raise TmuxError(f"tmux did not answer within {timeout:.0f}s ({first})") from None
        if check and r.returncode != 0:
            msg = (r.stderr.strip() or r.stdout.strip() or f"exit {r.returncode}").splitlines()[0]
            raise TmuxError(f"tmux {first} failed: {msg}")
        return r

    # -- queries ----------------------------------------------------------------
    def server_running(self) -> bool:
        r = self.run("list-sessions", "-F", "#{session_name}", check=False)
        return r.returncode == 0

    def sessions(self) -> list[str]:
        r = self.run("list-sessions", "-F", "#{session_name}", check=False)
        return r.stdout.split() if r.returncode == 0 else []

    def has_session(self, name: str) -> bool:
        # '=' asks for an exact match (tmux would otherwise accept a prefix)
        return self.run("has-session", "-t", f"={name}", check=False).returncode == 0

    def panes(self) -> dict[str, PaneInfo]:
        """Every pane of the server by session name (zen runs one pane per session).

        Raises TmuxError when tmux fails for another reason than "no server": a caller must not
        take a hiccup for every agent having vanished.
        """
        fmt = "\t".join(["#{session_name}", "#{pane_id}", "#{pane_dead}", "#{pane_dead_status}",
                         "#{pane_dead_signal}", "#{pane_pid}", "#{cursor_x},#{cursor_y}"])
        r = self.run("list-panes", "-a", "-F", fmt, check=False)
        out: dict[str, PaneInfo] = {}
        if r.returncode != 0:
            err = r.stderr.lower()
            if any(s in err for s in ("no server running", "error connecting", "no such file", "no current target")):
                return out  # no server: no panes
            raise TmuxError(f"tmux list-panes failed: {r.stderr.strip() or r.returncode}")
        for line in r.stdout.splitlines():
            parts = line.split("\t")
            if len(parts) < 7:
                continue
            session, pane_id, dead, status, sig, pid, cursor = parts[:7]
            out.setdefault(session, PaneInfo(pane_id, session, dead == "1", _int(status) if dead == "1" else None,
                                             _int(sig) if dead == "1" else None, _int(pid), cursor))
        return out

    def pane(self, session: str) -> PaneInfo | None:
        return self.panes().get(session)

    def capture(self, target: str, *, history: bool = False) -> str:
        args = ["capture-pane", "-p", "-J", "-t", target]
        if history:
            args += ["-S", "-"]
        r = self.run(*args, check=False)
        return r.stdout if r.returncode == 0 else ""

    def global_env_names(self) -> set[str]:
        r = self.run("show-environment", "-g", check=False)
        names = set()
        for line in r.stdout.splitlines():
            name = line.lstrip("-").split("=", 1)[0]
            if name:
                names.add(name)
        return names

    # -- actions -----------------------------------------------------------------
    def start_pane(self, session: str, cwd: Path, argv: list[str], env: dict[str, str], log_path: Path,
                   exit_path: Path | None = None) -> PaneInfo:
        """A new session running `argv` in `cwd` with exactly `env`, its output appended to log_path.

        With `exit_path`, a small shell wrapper runs the argv (unchanged) and writes its exit
        status there: belt and braces for tmux's own `#{pane_dead_status}`, which tmux 3.3a can
        leave blank. The wrapper re-raises a signal death on itself so tmux still sees a signal.
        """
        if not argv:
            raise TmuxError("the agent command is empty")
        self.ensure_conf()
        log_path.touch(exist_ok=True)
        # One client call: the session on a placeholder, remain-on-exit made sure again (the server
        # may predate this config, or a user changed it), the pane's output piped to the log
        # before the agent exists, and the server's global environment to filter below.
        r = self.run_chain(
            ["new-session", "-d", "-s", session, "-c", str(cwd), "-x", str(WIDTH), "-y", str(HEIGHT),
             "-P", "-F", "#{pane_id}", *PLACEHOLDER],
            ["set-option", "-g", "remain-on-exit", "on"],
            ["pipe-pane", "-t", f"={session}:", f"exec cat >> {shlex.quote(str(log_path)).replace('#', '##')}"],
            ["show-environment", "-g"],
        )
        out = r.stdout.splitlines()
        pane_id = out[0].strip() if out else ""
        if not pane_id.startswith("%"):
            raise TmuxError(f"tmux did not report the new pane of session {session}")
        global_names = {n for line in out[1:] if (n := line.lstrip("-").split("=", 1)[0])}
        wanted = {k: v for k, v in env.items() if k not in _PANE_OWNED}
        # The server's global environment reaches every pane; drop what this agent must not see.
        unset = sorted(global_names - set(wanted) - _PANE_OWNED)
        cmd = ["env"]
        for name in unset:
            cmd += ["-u", name]
        # `env` execs the agent, so the pane's process is the agent itself, with the exact argv
        cmd.append("--")
        if exit_path is not None:
            cmd += ["sh", "-c", EXIT_WRAPPER, str(exit_path)]
        cmd += argv
        env_args: list[str] = []
        for k, v in sorted(wanted.items()):
            env_args += ["-e", f"{k}={v}"]
        self.run("respawn-pane", "-k", "-t", pane_id, "-c", str(cwd), *env_args, *cmd)
        info = self.pane(session)
        if info is None:
            raise TmuxError(f"tmux session {session} vanished right after it was created")
        return info

    def send_text(self, target: str, text: str) -> None:
        """Type `text` into the pane, then Enter as a separate key. Multi-line text goes as one
        bracketed paste, so its newlines do not submit it line by line."""
        text = text.rstrip("\n")
        if "\n" in text:
            buf = f"zen-{os.getpid()}"
            self.run("load-buffer", "-b", buf, "-", input=text)
            self.run("paste-buffer", "-p", "-d", "-b", buf, "-t", target)
        elif text:
            self.run("send-keys", "-t", target, "-l", "--", text)
        self.run("send-keys", "-t", target, "Enter")

    def send_keys(self, target: str, keys: list[str]) -> None:
        for key in keys:
            self.run("send-keys", "-t", target, key)

    def kill_session(self, session: str) -> None:
        self.run("kill-session", "-t", f"={session}", check=False)

    def kill_server(self) -> None:
        self.run("kill-server", check=False)

    def attach_argv(self, session: str) -> list[str]:
        return [*self.base_argv(), "attach-session", "-t", f"={session}"]


def signal_pane(info: PaneInfo, sig: int) -> bool:
    """Signal the pane's process group (the pane's process leads its own session and group)."""
    if info.dead or not info.pid:
        return False
    try:
        os.killpg(info.pid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(info.pid, sig)
    return True
