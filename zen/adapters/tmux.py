"""zen's private tmux server, through libtmux: the one module that imports it.

A `libtmux.Server(socket_name=..., config_file=...)` names zen's own socket and config in every
call, so the user's default server is never reached. libtmux's object model (sessions, panes and
their methods) costs a tmux client process per call and some calls per object; on the hot paths
(starting an agent, listing every pane each tick) zen chains several tmux commands into one
client process through `Server.cmd` instead: one process instead of four starts an agent.

libtmux runs tmux with this process's environment (it takes no env argument): a $TMUX_PANE
inherited from the user's tmux would name the "current" pane of commands that give no target,
so every command here names its target (`-t`) or is global (`-g`, `-a`). libtmux also waits for
tmux without a timeout.

Facts this relies on (measured on tmux 3.3a, reference/agents.md section 6, fleet.md B.4):
- `remain-on-exit on` must be in the -f config: a bare start-server + `set -g` is lost, and an
  agent that exits in its first millisecond must still leave a dead pane with its exit status.
- `window-size manual` keeps a client that attaches later (zen attach, zen grid) from resizing
  an agent's window, which would redraw its screen under the turn detector. It is set on each
  window as it is created: set globally (config or `set -g`), tmux 3.3a's server segfaults on the
  next `new-session` that no terminal client runs, taking every agent with it.
- A pane started with several argv words is exec'd directly (no shell); one word goes via `sh -c`.
- An argument that ends in ';' is a command separator to tmux unless escaped as '\\;'; a chain
  stops at the first command that fails.
- tmux runs the commands of one client call in one pass of its command queue, before its event
  loop reads any pane's output or reaps any child: a new-session that starts the agent itself,
  followed in the same call by pipe-pane, the pane's mark and remain-on-exit, loses none of an
  agent's early output or its exit status (tests/adapters/test_tmux_fast.py holds it to that
  with agents that print and exit at once).
- pipe-pane survives respawn-pane, so the first start on a server (which must learn the global
  environment's names before the agent can start) creates the session holding a placeholder,
  pipes its output to the log, and only then respawns the agent into it.
- new-session -e sets the SESSION's environment (which every later window in it inherits), not
  only its command's, so start_pane unsets those names there again in the same call; and both
  new-session and respawn-pane give the pane the tmux client's own PATH over their -e PATH.
- A dead pane kept by remain-on-exit keeps its pipe-pane open (the log's writer does not end), so
  a death changes no file by itself; the server's `pane-died` hook touches a file instead
  (`died_file`), which is how the supervisor hears of a death without listing panes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import libtmux
from libtmux import exc as tmux_exc
from libtmux.common import tmux_cmd
from libtmux.pane import Pane

from zen.core.inert import inert_text
from zen.errors import TmuxError
from zen.store.atomic import atomic_write
from zen.store.faults import ENV as CRASH_ENV
from zen.store.faults import crash_point
from zen.store.home import Home

log = logging.getLogger(__name__)

WIDTH, HEIGHT = 200, 50

CONF = """\
# zen's private tmux server (written by zen; edits are overwritten).
# Keep dead panes so an agent's exit status is readable even if it died at once.
set -g remain-on-exit on
# The server must not vanish between sessions while the supervisor restarts.
set -g exit-empty off
# (window-size manual is set on each agent's window, never globally: see zen/adapters/tmux.py)
set -g history-limit 10000
# Agents are watched by zen, not by tmux alerts; keep the status line quiet.
set -g monitor-activity off
set -g visual-activity off
set -g status-left '[zen] '
set -g status-left-length 20
"""

# Set by tmux in every pane; passing the supervisor's values would confuse the agent's terminal.
# SHELL too: tmux gives every pane SHELL=<default-shell>, over any -e value and when none is given.
_PANE_OWNED = frozenset({"TMUX", "TMUX_PANE", "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION",
                         "COLUMNS", "LINES", "SHLVL", "_", "OLDPWD", "PWD", "SHELL"})
PLACEHOLDER = ["sleep", "2147483647"]
# What tmux 3.3a sets in a new pane's environment over the -e of new-session and respawn-pane: the
# PATH of the tmux client that asked (zen itself), so the agent's `env` sets these itself
_CLIENT_OWNED = frozenset({"PATH"})
# What new-session copies from the client into the session's environment (tmux's default
# update-environment), over the server's global values
_SESSION_SET = frozenset({"DISPLAY", "KRB5CCNAME", "SSH_ASKPASS", "SSH_AUTH_SOCK", "SSH_AGENT_PID",
                          "SSH_CONNECTION", "WINDOWID", "XAUTHORITY"})
# the pane option that says which job attempt's agent a pane runs (start_pane's `mark`)
MARK_OPTION = "@zen_attempt"
# the pane option where the exit wrapper leaves the agent's status when it cannot write its file
EXIT_OPTION = "@zen_exit"
# sh -c EXIT_WRAPPER EXIT_FILE ARGV...: run ARGV, publish its status by rename, pass it on.
# The wrapper outlives HUP/INT/TERM sent to the pane's process group (Ctrl-C in an attached
# pane, zen's own TERM) so it can still write the agent's status; then it re-raises the signal.
# A file it cannot write (a full disk) leaves the status in tmux's memory instead, as a pane
# option (the pane's shell reaches zen's server through the $TMUX tmux gives it).
EXIT_WRAPPER = ('trap : HUP INT TERM; "$@"; c=$?; { echo "$c" > "$0.tmp" && mv -f "$0.tmp" "$0"; } 2>/dev/null'
                f' || tmux set-option -p {EXIT_OPTION} "$c" 2>/dev/null; '
                'if [ "$c" -gt 128 ] && [ "$c" -lt 193 ]; then trap - HUP INT TERM; kill -$((c - 128)) $$; fi; '
                'exit "$c"')
# One pane's facts, in the order PaneInfo takes them (tab-separated: no field holds a tab).
PANE_FORMAT = "\t".join(["#{session_name}", "#{pane_id}", "#{pane_dead}", "#{pane_dead_status}",
                         "#{pane_dead_signal}", "#{pane_pid}", "#{cursor_x},#{cursor_y}", f"#{{{EXIT_OPTION}}}"])
# what tmux says when there is no server (or it is exiting, as right after kill-server)
_NO_SERVER = ("no server running", "error connecting", "no such file", "no current target",
              "server exited unexpectedly")


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

    @classmethod
    def parse(cls, line: str) -> PaneInfo | None:
        """One line of PANE_FORMAT, or None when it is not one."""
        parts = line.split("\t")
        if len(parts) < 8:
            return None
        session, pane_id, dead, status, sig, pid, cursor, wrapped = parts[:8]
        is_dead = dead == "1"
        code, signal = (_int(status), _int(sig)) if is_dead else (None, None)
        if is_dead and code is None and signal is None and (told := _int(wrapped)) is not None:
            # tmux has not reaped it yet, but the exit wrapper told its status (EXIT_OPTION)
            code, signal = (None, told - 128) if 128 < told < 128 + 65 else (told, None)
        return cls(pane_id, session, is_dead, code, signal, _int(pid), cursor)


def _escape_arg(arg: str) -> str:
    # tmux treats a trailing ';' as a command separator; '\;' is its escape for a literal one
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _env_values(lines: list[str]) -> dict[str, str | None]:
    """`show-environment -g` output by name: its value, None for a removed one (`-NAME`)."""
    out: dict[str, str | None] = {}
    for line in lines:
        name, eq, value = line.partition("=")
        if name.lstrip("-"):
            out[name.lstrip("-")] = value if eq and not name.startswith("-") else None
    return out


def _first_line(r: tmux_cmd) -> str:
    lines = [*r.stderr, *r.stdout]
    return lines[0].strip() if lines else f"exit {r.returncode}"


def _run_chain(server: libtmux.Server, commands: tuple[list[str], ...], check: bool) -> tmux_cmd:
    """Commands joined with tmux's `;` in one client call on `server`; TmuxError when one fails."""
    args: list[str] = []
    for i, cmd in enumerate(commands):
        if i:
            args.append(";")
        args += [_escape_arg(a) for a in cmd]
    try:
        r = server.cmd(*args)
    except tmux_exc.TmuxCommandNotFound:
        raise TmuxError("tmux is not installed or not on PATH (install tmux 3.2 or newer)") from None
    if check and r.returncode != 0:
        raise TmuxError(f"tmux {args[0] if args else ''} failed: {_first_line(r)}")
    return r


class Tmux:
    def __init__(self, socket: str, conf: Path, died_file: Path | None = None) -> None:
        self.socket = socket
        self.conf = conf
        self.died_file = died_file    # touched by the server whenever a pane dies
        # (socket inode, global environment by name): start_pane
        self._global_env: tuple[int | None, dict[str, str | None]] | None = None
        # resolved once: libtmux would otherwise search $PATH on every call
        self.server = libtmux.Server(socket_name=socket, config_file=str(conf), tmux_bin=shutil.which("tmux"))

    @classmethod
    def for_home(cls, home: Home) -> Tmux:
        return cls(home.tmux_socket, home.control / "tmux.conf", home.pane_died)

    # -- plumbing -------------------------------------------------------------
    def ensure_conf(self) -> None:
        try:
            if self.conf.read_text() == CONF:
                return
        except OSError:
            pass
        self.conf.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.conf, CONF, durable=False)

    def run_chain(self, *commands: list[str], check: bool = True) -> tmux_cmd:
        """One or several tmux commands in one client call (tmux's `;` separator): one process
        instead of one per command, which is most of what starting an agent costs."""
        return _run_chain(self.server, commands, check)

    def run(self, *args: str, check: bool = True) -> tmux_cmd:
        return self.run_chain(list(args), check=check)

    def _pane(self, pane_id: str) -> Pane:
        # a handle only: libtmux's Pane.from_pane_id would ask tmux for every field first
        return Pane(server=self.server, pane_id=pane_id)

    # -- queries ----------------------------------------------------------------
    def has_session(self, name: str) -> bool:
        try:
            return self.server.has_session(name)  # exact: libtmux asks for '=name'
        except tmux_exc.TmuxCommandNotFound:
            raise TmuxError("tmux is not installed or not on PATH (install tmux 3.2 or newer)") from None

    def panes(self) -> dict[str, PaneInfo]:
        """Every pane of the server by session name (zen runs one pane per session).

        One `list-panes -a` with only the fields zen reads (the supervisor calls this every tick;
        libtmux's `server.panes` would ask for all of them and build an object per pane).
        Raises TmuxError when tmux fails for another reason than "no server": a caller must not
        take a hiccup for every agent having vanished.
        """
        r = self.run("list-panes", "-a", "-F", PANE_FORMAT, check=False)
        out: dict[str, PaneInfo] = {}
        if r.returncode != 0:
            err = " ".join(r.stderr).lower()
            if any(s in err for s in _NO_SERVER):
                return out  # no server: no panes
            raise TmuxError(f"tmux list-panes failed: {_first_line(r)}")
        for line in r.stdout:
            info = PaneInfo.parse(line)
            if info is not None:
                out.setdefault(info.session, info)
        return out

    def pane(self, session: str) -> PaneInfo | None:
        return self.panes().get(session)

    def mark(self, session: str) -> tuple[PaneInfo, str] | None:
        """The pane of `session` and the mark start_pane gave it ('' for a pane without one, such
        as a placeholder whose agent never started); None when there is no such session."""
        r = self.run("display-message", "-p", "-t", f"={session}:", f"{PANE_FORMAT}\t#{{{MARK_OPTION}}}",
                     check=False)
        if r.returncode != 0 or not r.stdout:
            return None
        info = PaneInfo.parse(r.stdout[0])
        if info is None or info.session != session:
            return None
        return info, r.stdout[0].split("\t")[8] if r.stdout[0].count("\t") >= 8 else ""

    def capture(self, pane_id: str, *, history: bool = False) -> str:
        """The pane's visible screen (with `history`, its scrollback too), wrapped lines joined;
        trailing blank lines dropped. Empty when the pane is gone."""
        lines = self._pane(pane_id).capture_pane(start="-" if history else None, join_wrapped=True)
        return "\n".join(lines) + "\n" if lines else ""

    # -- actions -----------------------------------------------------------------
    def start_pane(self, session: str, cwd: Path, argv: list[str], env: dict[str, str], log_path: Path,
                   exit_path: Path | None = None, window: str | None = None, mark: str | None = None) -> PaneInfo:
        """A new session running `argv` in `cwd` with exactly `env`, its output appended to log_path.

        A session of that name left by a launch cut short is replaced. With `exit_path`, a small
        shell wrapper runs the argv (unchanged) and writes its exit status there (a file left by
        an earlier attempt is removed first): belt and braces for tmux's own
        `#{pane_dead_status}`, which tmux 3.3a can leave blank. The wrapper re-raises a signal
        death on itself so tmux still sees a signal. With `mark`, the pane carries it (the pane
        option MARK_OPTION, `mark()` reads it) from the instant the agent is in it: the same
        client call starts the agent and sets the mark, so a marked pane is always an agent.

        The agent must not see the server's global environment (the environment of whichever
        process started the server), so its pane unsets those names. That environment is learnt
        with the first start on a server and kept for that server (its socket's inode). The first
        start is two client calls: the session on a placeholder (output piped, environment read),
        then the agent respawned into its pane; so is a start that finds a session of that name
        (left by a launch cut short: it is killed and replaced) and every start with the crash
        point `tmux.session` armed. Later starts are one client call whose new-session runs the
        agent itself (no placeholder), with -e only for what the global environment does not
        already hold, and which reads the global environment again in the same pass of tmux's
        queue: a name that has appeared since, or a value the agent took from there that has
        changed (someone's `set-environment -g`), gets the agent killed and respawned with
        exactly `env` before anything else happens. Either way the session's own environment is
        left as tmux made it: a window a person opens in the session gets none of the agent's.
        """
        if not argv:
            raise TmuxError("the agent command is empty")
        self.ensure_conf()
        log_path.touch(mode=0o600, exist_ok=True)
        wanted = {k: v for k, v in env.items() if k not in _PANE_OWNED}
        known = self._known_env_names()
        if known is not None and (info := self._start_known(session, cwd, argv, wanted, known, log_path,
                                                            exit_path, window, mark)) is not None:
            return info
        # the first start on this server, a session of that name already there (a launch cut
        # short), or another failure: the slow way
        pane_id, global_names = self._new_session(session, cwd, log_path, window)
        self._remember_env(global_names)
        crash_point("tmux.session")
        if exit_path is not None:
            exit_path.unlink(missing_ok=True)  # after any replaced session is gone
        # the agent into the placeholder's pane, and that pane's facts, in one client call
        r = self.run_chain(*self._agent_chain(pane_id, cwd, wanted, set(global_names), argv, exit_path, mark))
        return self._started(session, r.stdout[0] if r.stdout else "")

    def _start_known(self, session: str, cwd: Path, argv: list[str], wanted: dict[str, str],
                     known: dict[str, str | None], log_path: Path, exit_path: Path | None, window: str | None,
                     mark: str | None) -> PaneInfo | None:
        """start_pane in one client call, the server's global environment being known: new-session
        runs the agent itself (no placeholder to fork, then kill). None when the chain failed."""
        if exit_path is not None:
            exit_path.unlink(missing_ok=True)
        target = f"={session}:"
        # a name the server's global environment already holds with the wanted value reaches the
        # agent without -e; the show-environment -g below (same pass of tmux's queue as the
        # agent's start, so exactly what it got) confirms that, or the agent starts again
        inherited = frozenset(k for k, v in wanted.items() if known.get(k) == v) - _CLIENT_OWNED - _SESSION_SET
        env_args, cmd = self._agent_command(wanted, set(known), argv, exit_path, inherited)
        # new-session -e puts the names in the session's environment, not only the agent's: unset
        # them there, so a window a user opens in the session gets the server's environment (as
        # after respawn-pane -e), not the agent's ZEN_JOB_ID and keys; the agent keeps its copy
        unset = [["set-environment", "-t", f"={session}", "-u", k]
                 for k in sorted(set(wanted) - inherited - _CLIENT_OWNED)]
        r = self.run_chain(*self._session_chain(session, cwd, log_path, window, env_args, cmd), *unset,
                           *self._mark_and_facts(target, mark), ["show-environment", "-g"], check=False)
        if r.returncode != 0 or len(r.stdout) < 2 or not r.stdout[0].strip().startswith("%"):
            return None
        now = _env_values(r.stdout[2:])
        self._remember_env(now)
        names = set(now)
        if not (names - set(known) - set(wanted) - _PANE_OWNED) and all(now.get(k) == wanted[k] for k in inherited):
            return self._started(session, r.stdout[1])
        log.warning("tmux server %s has a changed global environment; restarting the agent of %s without it",
                    self.socket, session)
        info = PaneInfo.parse(r.stdout[1])
        if info is not None:
            signal_pane(info, signal.SIGKILL)
        if exit_path is not None:
            exit_path.unlink(missing_ok=True)
        r = self.run_chain(*self._agent_chain(r.stdout[0].strip(), cwd, wanted, names, argv, exit_path, mark))
        return self._started(session, r.stdout[0] if r.stdout else "")

    @staticmethod
    def _started(session: str, line: str) -> PaneInfo:
        info = PaneInfo.parse(line)
        if info is None:
            raise TmuxError(f"tmux session {session} vanished right after it was created")
        return info

    @staticmethod
    def _agent_command(wanted: dict[str, str], global_names: set[str], argv: list[str], exit_path: Path | None,
                       inherited: frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
        """The `-e NAME=VALUE` flags (none for the `inherited` names) and the command line of the
        agent: `env` unsetting the server's global names it must not see and setting the
        _CLIENT_OWNED ones, then the exit wrapper (with `exit_path`), then argv."""
        cmd = ["env"]
        for name in sorted(global_names - set(wanted) - _PANE_OWNED):
            cmd += ["-u", name]
        # `env` execs the agent, so the pane's process is the agent itself, with the exact argv
        cmd.append("--")
        cmd += [f"{k}={v}" for k, v in sorted(wanted.items()) if k in _CLIENT_OWNED]
        if exit_path is not None:
            cmd += ["sh", "-c", EXIT_WRAPPER, str(exit_path)]
        cmd += argv
        env_args: list[str] = []
        for k, v in sorted(wanted.items()):
            if k not in _CLIENT_OWNED and k not in inherited:
                env_args += ["-e", f"{k}={v}"]
        return env_args, cmd

    @staticmethod
    def _mark_and_facts(target: str, mark: str | None) -> list[list[str]]:
        """The pane's mark (when there is one) and a display-message of its facts."""
        marking = [["set-option", "-p", "-t", target, MARK_OPTION, mark]] if mark is not None else []
        return [*marking, ["display-message", "-p", "-t", target, PANE_FORMAT]]

    def _agent_chain(self, target: str, cwd: Path, wanted: dict[str, str], global_names: set[str],
                     argv: list[str], exit_path: Path | None, mark: str | None) -> list[list[str]]:
        """respawn-pane -k of the agent into `target` (over a placeholder, or over an agent that
        must start again without a name), its mark, and a display-message of the pane's facts."""
        env_args, cmd = self._agent_command(wanted, global_names, argv, exit_path)
        return [["respawn-pane", "-k", "-t", target, "-c", str(cwd), *env_args, *cmd],
                *self._mark_and_facts(target, mark)]

    def _socket_key(self) -> int | None:
        try:
            tmpdir = os.environ.get("TMUX_TMPDIR") or "/tmp"
            return os.stat(Path(tmpdir) / f"tmux-{os.getuid()}" / self.socket).st_ino
        except OSError:
            return None

    def _known_env_names(self) -> dict[str, str | None] | None:
        """The server's global environment (by name) learnt at an earlier start on this server,
        or None (none yet, another server since, or a crash test of the two-call path)."""
        if self._global_env is None or os.environ.get(CRASH_ENV) == "tmux.session":
            return None
        key, names = self._global_env
        return names if key is not None and key == self._socket_key() else None

    def _remember_env(self, names: dict[str, str | None]) -> None:
        self._global_env = (self._socket_key(), dict(names))

    def _session_chain(self, session: str, cwd: Path, log_path: Path, window: str | None,
                       env_args: list[str] | None = None, cmd: list[str] | None = None) -> tuple[list[str], ...]:
        """new-session running `cmd` (with `env_args`, the `-e` flags), PLACEHOLDER without one,
        then what must hold before tmux's event loop reads its first byte or reaps it: the
        window's fixed size, remain-on-exit, the died hook and the pipe to the log. tmux runs a
        client's whole command list in one pass of its queue, before that loop runs again."""
        return (
            # a window named after the job (-n also turns automatic-rename off): attached, it
            # reads `fix-login`, not the `sh` of the exit wrapper
            ["new-session", "-d", "-s", session, *(["-n", window] if window else []), "-c", str(cwd),
             "-x", str(WIDTH), "-y", str(HEIGHT), "-P", "-F", "#{pane_id}", *(env_args or []),
             *(cmd or PLACEHOLDER)],
            # sets window-size manual on this window, at this size, whoever attached before
            ["resize-window", "-t", f"={session}:", "-x", str(WIDTH), "-y", str(HEIGHT)],
            ["set-option", "-g", "remain-on-exit", "on"],
            *self._died_hook(),
            ["pipe-pane", "-t", f"={session}:", f"exec cat >> {shlex.quote(str(log_path)).replace('#', '##')}"],
        )

    def _new_session(self, session: str, cwd: Path, log_path: Path,
                     window: str | None = None) -> tuple[str, dict[str, str | None]]:
        """The session on a placeholder, its window's size fixed (window-size manual), remain-on-exit
        made sure again (the server may predate this config, or a user changed it), the pane's
        output piped to the log before the agent exists, and the server's global environment.
        Returns (pane id, that environment by name)."""
        chain = (*self._session_chain(session, cwd, log_path, window), ["show-environment", "-g"])
        r = self.run_chain(*chain, check=False)
        if r.returncode != 0 and "duplicate session" in _first_line(r):
            # a launch cut short by a crash: redo it in place. KILL first, not only the HUP of
            # kill-session, so an old exit wrapper cannot write its status after it is cleared
            old = self.pane(session)
            if old is not None:
                signal_pane(old, signal.SIGKILL)
            self.kill_session(session)
            r = self.run_chain(*chain, check=False)
        if r.returncode != 0:
            raise TmuxError(f"tmux new-session failed: {_first_line(r)}")
        pane_id = r.stdout[0].strip() if r.stdout else ""
        if not pane_id.startswith("%"):
            raise TmuxError(f"tmux did not report the new pane of session {session}")
        return pane_id, _env_values(r.stdout[1:])

    def _died_hook(self) -> list[list[str]]:
        """`set-hook -g pane-died` touching `died_file` (set with every new session, as
        remain-on-exit is: the server may predate this zen)."""
        if self.died_file is None:
            return []
        touch = f"touch {shlex.quote(str(self.died_file))}".replace("#", "##")
        return [["set-hook", "-g", "pane-died", f"run-shell -b {shlex.quote(touch)}"]]

    def send_text(self, pane_id: str, text: str, *, paste: bool = False, enter_delay_s: float = 0.0,
                  inert: bool = False) -> None:
        """Type `text` into the pane, then Enter as a separate key. Multi-line text (and any text
        with `paste`) goes as one bracketed paste, so its newlines do not submit it line by line;
        `enter_delay_s` pauses before the Enter, for agents that take a burst of keys for a paste
        and would swallow an Enter arriving with it. `inert`: text an agent supplied (a message
        from another job) is stripped of what could act as keys (zen.core.inert) and always goes as
        one paste, whose first line the caller has made zen's label."""
        if inert:
            text, paste = inert_text(text), True
        text = text.rstrip("\n")
        if "\n" in text or (paste and text):
            # from a file, not an argument: tmux caps one command's size near 16 KiB
            buf = f"zen-{os.getpid()}"
            fd, path = tempfile.mkstemp(prefix="zen-paste-")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                self.server.load_buffer(path, buffer_name=buf)
                # tmux 3.3a's server crashes on a paste into a dead pane (remain-on-exit keeps it),
                # taking every agent's session with it: the pane is asked first, in the same pass
                # of the server's command queue, and a dead one gets nothing
                self.run("if-shell", "-F", "-t", pane_id, "#{pane_dead}", f"delete-buffer -b {buf}",
                         f"paste-buffer -b {buf} -d -p -t {pane_id}")
            except (tmux_exc.LibTmuxException, TmuxError) as exc:
                raise TmuxError(f"tmux could not paste into {pane_id}: {exc}") from None
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        elif text:
            # not pane.send_keys(literal=True): it passes no `--`, so text starting with '-'
            # would be read as flags (and libtmux does not report the failure)
            self.run("send-keys", "-t", pane_id, "-l", "--", text)
        if enter_delay_s > 0:
            time.sleep(enter_delay_s)
        self.run("send-keys", "-t", pane_id, "Enter")

    def send_keys(self, pane_id: str, keys: list[str], *, pause_s: float = 0.0) -> None:
        """tmux send-keys words one after the other, `pause_s` apart."""
        for i, key in enumerate(keys):
            if i and pause_s > 0:
                time.sleep(pause_s)
            self.run("send-keys", "-t", pane_id, key)

    def kill_session(self, session: str) -> None:
        self.run("kill-session", "-t", f"={session}", check=False)

    def kill_server(self) -> None:
        with contextlib.suppress(tmux_exc.LibTmuxException):
            self.server.kill()  # no server running is not an error

    def attach_argv(self, session: str) -> list[str]:
        """The command that attaches a terminal (the caller execs it: it needs the tty)."""
        return [self.server.tmux_bin or "tmux", "-L", self.socket, "-f", str(self.conf),
                "attach-session", "-t", f"={session}"]


class ViewServer:
    """A tmux server a person looks at: the user's own (their default socket, or `-L socket`).

    `zen grid` builds its session of read-only tiles here. zen never starts agents on it and
    never sets a global option on it; the only commands it sends name their target.
    """

    def __init__(self, socket: str | None = None) -> None:
        self.socket = socket
        self.server = libtmux.Server(socket_name=socket, tmux_bin=shutil.which("tmux"))

    def argv(self, *args: str) -> list[str]:
        """A tmux command line for this server, as a person would type it."""
        return [self.server.tmux_bin or "tmux", *(["-L", self.socket] if self.socket else []), *args]

    def run_chain(self, *commands: list[str], check: bool = True) -> tmux_cmd:
        return _run_chain(self.server, commands, check)

    def run(self, *args: str, check: bool = True) -> tmux_cmd:
        return self.run_chain(list(args), check=check)

    def has_session(self, name: str) -> bool:
        return self.run("has-session", "-t", f"={name}", check=False).returncode == 0


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


# -- the dashboard's terminal tiles (zen serve) ------------------------------------------------------

SCREEN_FORMAT = "#{cursor_x} #{cursor_y} #{pane_width} #{pane_height}"


def screen(tmux: Tmux, pane_id: str) -> tuple[list[str], int, int, int, int] | None:
    """The pane's visible rows with their colours (SGR escapes kept), the cursor and the size, in
    one tmux call; None when the pane is gone."""
    r = tmux.run_chain(["display-message", "-p", "-t", pane_id, SCREEN_FORMAT],
                       ["capture-pane", "-p", "-e", "-t", pane_id], check=False)
    lines = list(r.stdout) if not isinstance(r.stdout, str) else r.stdout.split("\n")
    if r.returncode != 0 or not lines:
        return None
    try:
        cx, cy, w, h = (int(x) for x in lines[0].split())
    except ValueError:
        return None
    return lines[1:], cx, cy, w, h


def type_into(tmux: Tmux, pane_id: str, items: list[tuple[str, str]]) -> None:
    """Type into the pane, in order: ("text", literal characters) or ("key", a tmux key name
    such as Enter, BSpace, C-c). One tmux call."""
    cmds = [["send-keys", "-t", pane_id, "-l", "--", value] if kind == "text" else ["send-keys", "-t", pane_id, value]
            for kind, value in items]
    if cmds:
        tmux.run_chain(*cmds)
