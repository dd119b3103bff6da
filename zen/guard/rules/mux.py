"""Terminal multiplexers and terminals: tmux, screen, dtach, abduco, zellij and terminal emulators
run commands, and type into terminals that do.

What they start (`tmux new-session CMD`, `run-shell`, `split-window`, `respawn-pane`, `pipe-pane`,
`display-popup`, `if-shell`, `screen -dm CMD`, `screen -X exec`) is judged as a command, and so
are the keys they type into a shell (`tmux send-keys`, `screen -X stuff`): literal text whose
lines are judged as commands, anything else (key names, hex, formats) denied. tmux accepts
unique prefixes and aliases of its command names (`neww`, `new-w`, `run`), and several commands
separated by `;`: all of them are read.

An agent's tmux commands may reach only a server of its own naming (`-L NAME` / `-S PATH`): zen's
private servers (zen-<hash>, where every agent runs, so $TMUX names one inside a job) and the
default server (a human's) are denied, as are screen commands sent to sessions that already
exist (-X, -x, -r, -R): they type into other agents' or a human's terminals.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.paths.resolve import norm
from zen.guard.shell.words import Cmd, State, Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

ZEN_SOCKET = re.compile(r"^zen-[0-9a-f]{10}$")

TMUX_COMMANDS = (
    "attach-session", "bind-key", "break-pane", "capture-pane", "choose-buffer", "choose-client",
    "choose-tree", "clear-history", "clear-prompt-history", "clock-mode", "command-prompt",
    "confirm-before", "copy-mode", "customize-mode", "delete-buffer", "detach-client", "display-menu",
    "display-message", "display-popup", "display-panes", "find-window", "has-session", "if-shell",
    "join-pane", "kill-pane", "kill-server", "kill-session", "kill-window", "last-pane", "last-window",
    "link-window", "list-buffers", "list-clients", "list-commands", "list-keys", "list-panes",
    "list-sessions", "list-windows", "load-buffer", "lock-client", "lock-server", "lock-session",
    "move-pane", "move-window", "new-session", "new-window", "next-layout", "next-window",
    "paste-buffer", "pipe-pane", "previous-layout", "previous-window", "refresh-client",
    "rename-session", "rename-window", "resize-pane", "resize-window", "respawn-pane",
    "respawn-window", "rotate-window", "run-shell", "save-buffer", "select-layout", "select-pane",
    "select-window", "send-keys", "send-prefix", "server-access", "set-buffer", "set-environment",
    "set-hook", "set-option", "set-window-option", "show-buffer", "show-environment", "show-hooks",
    "show-messages", "show-options", "show-prompt-history", "show-window-options", "source-file",
    "split-window", "start-server", "suspend-client", "swap-pane", "swap-window", "switch-client",
    "unbind-key", "unlink-window", "wait-for",
)
TMUX_ALIASES = {
    "attach": "attach-session", "bind": "bind-key", "breakp": "break-pane", "capturep": "capture-pane",
    "clearhist": "clear-history", "clearphist": "clear-prompt-history", "confirm": "confirm-before",
    "deleteb": "delete-buffer", "detach": "detach-client", "menu": "display-menu",
    "display": "display-message", "popup": "display-popup", "displayp": "display-panes",
    "findw": "find-window", "has": "has-session", "if": "if-shell", "joinp": "join-pane",
    "killp": "kill-pane", "killw": "kill-window", "lastp": "last-pane", "last": "last-window",
    "linkw": "link-window", "lsb": "list-buffers", "lsc": "list-clients", "lscm": "list-commands",
    "lsk": "list-keys", "lsp": "list-panes", "ls": "list-sessions", "lsw": "list-windows",
    "loadb": "load-buffer", "lockc": "lock-client", "lock": "lock-server", "locks": "lock-session",
    "movep": "move-pane", "movew": "move-window", "new": "new-session", "neww": "new-window",
    "nextl": "next-layout", "next": "next-window", "pasteb": "paste-buffer", "pipep": "pipe-pane",
    "prevl": "previous-layout", "prev": "previous-window", "refresh": "refresh-client",
    "rename": "rename-session", "renamew": "rename-window", "resizep": "resize-pane",
    "resizew": "resize-window", "respawnp": "respawn-pane", "respawnw": "respawn-window",
    "rotatew": "rotate-window", "run": "run-shell", "saveb": "save-buffer", "selectl": "select-layout",
    "selectp": "select-pane", "selectw": "select-window", "send": "send-keys", "setb": "set-buffer",
    "setenv": "set-environment", "set": "set-option", "setw": "set-window-option",
    "showb": "show-buffer", "showenv": "show-environment", "showmsgs": "show-messages",
    "show": "show-options", "showphist": "show-prompt-history", "showw": "show-window-options",
    "source": "source-file", "splitw": "split-window", "start": "start-server",
    "suspendc": "suspend-client", "swapp": "swap-pane", "swapw": "swap-window",
    "switchc": "switch-client", "unbind": "unbind-key", "unlinkw": "unlink-window", "wait": "wait-for",
}
# per command: option letters that take a value (the rest of its options are flags)
_TMUX_VALUES = {
    "new-session": "cefFnstxy", "new-window": "ceFnt", "split-window": "ceFlpt",
    "respawn-pane": "cet", "respawn-window": "cet", "run-shell": "cdt", "if-shell": "t",
    "pipe-pane": "t", "display-popup": "bcdehsStTwxy", "send-keys": "cNt", "set-option": "t",
    "set-window-option": "t", "set-hook": "t", "bind-key": "NT", "command-prompt": "ItpT",
    "confirm-before": "cpt",
}
# commands whose last words are a shell command (run by tmux through the shell when one word)
_RUNS_SHELL = frozenset({"new-session", "new-window", "split-window", "respawn-pane", "respawn-window",
                         "run-shell", "pipe-pane", "display-popup"})
# options whose value tmux later runs as a command (`set -g default-command 'rm ...'`)
_COMMAND_OPTIONS = frozenset({"default-command", "default-shell", "lock-command", "editor"})
_KEYS_NEWLINE = frozenset({"Enter", "C-m", "C-j", "KPEnter"})
# key names tmux sends as keys, not text (every one of them can change what a typed line becomes)
_KEY_NAMES = frozenset({
    "Up", "Down", "Left", "Right", "BSpace", "BTab", "DC", "Delete", "End", "Escape", "Home", "IC",
    "Insert", "NPage", "PageDown", "PgDn", "PPage", "PageUp", "PgUp", "Tab", "Any",
    *(f"F{n}" for n in range(1, 25)),
    *(f"KP{k}" for k in ("/", "*", "-", "+", ".", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")),
})


def tmux(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    i, server, control = _tmux_globals(an, args, st, depth)
    if an.ctx.agent and server is not None:
        an.deny("self.zen-tmux", f"tmux on {server}: an agent's tmux commands may reach only a server "
                "it names itself (-L NAME), never zen's (where the other agents run) or a human's")
    an.ro("`tmux`")
    if control and cmd is not None and cmd.stdin in ("pipe", "heredoc", "herestring"):
        an.deny("opaque.exec", "tmux -C reads tmux commands from its input")
    for command in _split_commands(args[i:]):
        tmux_command(an, command, st, depth)


def _tmux_globals(an: Analyser, args: list[Word], st: State, depth: int) -> tuple[int, str | None, bool]:
    """(index of the first command word, the server when it is one an agent may not use,
    control mode)."""
    socket: str | None = None
    named = control = False
    i = 0
    while i < len(args):
        t = args[i].text
        if not args[i].known:
            an.deny("shell.unresolved", "tmux with an option only known at run time")
        if not t.startswith("-") or t == "-":
            break
        if t == "--":
            i += 1
            break
        letters = t[1:]
        for k, c in enumerate(letters):
            if c == "C":
                control = True
            if c in "cfLST":
                value = letters[k + 1:] or (args[i + 1].text if i + 1 < len(args) else "")
                if not letters[k + 1:]:
                    i += 1
                if c == "c":
                    an.walk(value, st.copy(vars={}), depth + 1)
                elif c == "f" and value != "/dev/null":
                    an.deny("opaque.exec", "tmux -f reads a configuration that can run any command")
                elif c in "LS":
                    named, socket = True, value.rsplit("/", 1)[-1]
                break
        i += 1
    if named:
        zen_server = f"zen's private server ({socket})" if socket and ZEN_SOCKET.match(socket) else None
        return i, zen_server, control
    inside = (an.env.get("TMUX") or "").split(",", 1)[0].rsplit("/", 1)[-1]
    if inside and ZEN_SOCKET.match(inside):
        return i, f"zen's private server ({inside}, from $TMUX)", control
    return i, f"the server of $TMUX ({inside})" if inside else "the default server (a human's)", control


def _split_commands(words: list[Word]) -> list[list[Word]]:
    """tmux commands separated by `;` words (or a trailing `;` on a word)."""
    out: list[list[Word]] = [[]]
    for w in words:
        if w.text == ";":
            out.append([])
        elif len(w.text) > 1 and w.text.endswith(";") and not w.text.endswith("\\;"):
            out[-1].append(Word(w.text[:-1], w.raw))
            out.append([])
        else:
            out[-1].append(w)
    return [c for c in out if c]


def command_name(word: str) -> str | None:
    """The tmux command `word` names: itself, an alias, or a unique prefix (as tmux reads it)."""
    if word in TMUX_ALIASES:
        return TMUX_ALIASES[word]
    if word in TMUX_COMMANDS:
        return word
    found = [c for c in TMUX_COMMANDS if c.startswith(word)]
    return found[0] if len(found) == 1 else None


def tmux_command(an: Analyser, words: list[Word], st: State, depth: int) -> None:
    """One tmux command (its name, options, arguments), on a server the caller may use."""
    head = words[0]
    if not head.known:
        an.deny("shell.unresolved", "a tmux command only known at run time")
    name = command_name(head.text)
    if name is None:
        return      # tmux refuses an unknown or ambiguous command
    flags, values, pos = _tmux_args(an, name, words[1:])
    if name in _RUNS_SHELL:
        _tmux_runs(an, name, flags, values, pos, st, depth)
    elif name == "if-shell" and pos:
        if "F" not in flags:
            an.walk(pos[0].text, st.copy(cwds=(None,), vars={}), depth + 1)
        for text in pos[1:3]:
            _tmux_text(an, text, st, depth)
    elif name == "send-keys":
        _send_keys(an, flags, pos, st, depth)
    elif name == "paste-buffer":
        an.deny("opaque.exec", "tmux paste-buffer types a buffer's text into a terminal")
    elif name in ("bind-key", "set-hook", "command-prompt", "confirm-before", "display-menu"):
        rest = pos[1:] if name in ("bind-key", "set-hook") else pos
        if len(rest) == 1 or name in ("command-prompt", "display-menu"):
            for text in rest:
                _tmux_text(an, text, st, depth)
        elif rest:
            tmux_command(an, rest, st, depth + 1)
    elif name in ("set-option", "set-window-option") and len(pos) >= 2 and pos[0].text in _COMMAND_OPTIONS:
        an.walk(pos[1].text, st.copy(cwds=(None,), vars={}), depth + 1)
    elif name == "source-file" and any(p.text != "/dev/null" for p in pos):
        an.deny("opaque.exec", "tmux source-file runs the commands of a file")


def _tmux_runs(an: Analyser, name: str, flags: str, values: dict[str, Word], pos: list[Word], st: State,
               depth: int) -> None:
    """The shell command a new session, window, pane, popup, pipe or run-shell runs."""
    if not pos:
        return
    if name == "run-shell" and "C" in flags:        # -C: tmux commands, not a shell command
        for command in _split_commands(pos):
            tmux_command(an, command, st, depth + 1)
        return
    start = values.get("c")
    if start is not None:
        cwd = norm(start.text, st.cwd) if start.known else None
        run_st = st.copy(cwds=(cwd,))
    else:   # a new session starts in the client's directory; the rest in the session's
        run_st = st if name == "new-session" else st.copy(cwds=(None,))
    if len(pos) == 1:
        an.walk(pos[0].text, run_st.copy(vars={}), depth + 1)
    else:       # several words: tmux runs them as an argv, without a shell
        an.leaf(pos, run_st, None, depth + 1)


def _tmux_args(an: Analyser, name: str, args: list[Word]) -> tuple[str, dict[str, Word], list[Word]]:
    """(flag letters, options with values, positional words) of one tmux command."""
    takes = _TMUX_VALUES.get(name, "")
    flags = ""
    values: dict[str, Word] = {}
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("shell.unresolved", f"tmux {name} with an argument only known at run time")
        if t == "--":
            i += 1
            break
        if not t.startswith("-") or t == "-":
            break
        for k, c in enumerate(t[1:]):
            if c in takes:
                rest = t[k + 2:]
                if rest:
                    values[c] = Word(rest, a.raw)
                elif i + 1 < len(args):
                    values[c] = args[i + 1]
                    i += 1
                break
            flags += c
        i += 1
    return flags, values, args[i:]


def _tmux_text(an: Analyser, text: Word, st: State, depth: int) -> None:
    """A tmux command given as one string (if-shell's commands, bind-key's, ...): tmux parses it
    with quoting rules like the shell's, so it is read as tmux's own arguments."""
    if not text.known:
        an.deny("shell.unresolved", "a tmux command only known at run time")
    if text.text.strip():
        an.walk("tmux -L _ " + text.text, st.copy(vars={}), depth + 1)


def _send_keys(an: Analyser, flags: str, pos: list[Word], st: State, depth: int) -> None:
    """Keys typed into a terminal: a shell there runs each line, so the text is judged as commands.
    Keys that edit, complete or recall a line (arrows, Tab, C-r, ...) make the text unknowable."""
    if "X" in flags:
        return      # a copy-mode command, not keys
    if any(f in flags for f in "HKM"):
        an.deny("opaque.exec", "tmux send-keys -H/-K/-M sends input the guardian does not decode")
    lines = [""]
    for w in pos:
        t = w.text
        if "F" in flags and "#{" in t:
            an.deny("opaque.exec", "tmux send-keys -F expands formats the guardian cannot know")
        if "l" not in flags and t in _KEYS_NEWLINE:
            lines.append("")
        elif "l" not in flags and t == "Space":
            lines[-1] += " "
        elif "l" not in flags and t == "C-c":
            lines[-1] = ""              # interrupts: the line typed so far is dropped
        elif "l" not in flags and (t in _KEY_NAMES or re.fullmatch(r"(?:[CMS]-)+.+|\^.", t)):
            an.deny("opaque.exec", f"tmux send-keys {t}: a key that edits or recalls the line, so the "
                    "guardian cannot know what runs")
        else:
            lines[-1] += t
    typed = "\n".join(lines)
    if typed.strip():
        an.walk(typed, st.copy(cwds=(None,), vars={}), depth + 1)


def screen(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    i, remote = _screen_options(an, args, st, depth)
    if remote and an.ctx.agent:
        an.deny("self.zen-tmux", "screen -X/-x/-r/-R reaches a session that already exists (another "
                "agent's or a human's terminal)")
    an.ro("`screen`")
    rest = args[i:]
    if remote:
        _screen_command(an, rest, st, depth)
    elif rest:
        an.leaf(rest, st, None, depth + 1)


def _screen_options(an: Analyser, args: list[Word], st: State, depth: int) -> tuple[int, bool]:
    remote = False
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("shell.unresolved", "screen with an argument only known at run time")
        if not t.startswith("-") or t == "-":
            break
        if t in ("-ls", "-list", "-wipe", "-ln", "-dm", "-Dm"):
            i += 1
            continue
        if t == "-Logfile":
            i += 2
            continue
        letters = t[1:]
        for k, c in enumerate(letters):
            if c in "XxrR":
                remote = True
            if c in "cehpsStT":
                value = letters[k + 1:] or (args[i + 1].text if i + 1 < len(args) else "")
                if not letters[k + 1:]:
                    i += 1
                if c == "c" and value != "/dev/null":
                    an.deny("opaque.exec", "screen -c reads a configuration that can run any command")
                if c == "s":
                    an.leaf([Word(value)], st, None, depth + 1)
                break
        i += 1
    return i, remote


def _screen_command(an: Analyser, words: list[Word], st: State, depth: int) -> None:
    """A command sent to a running screen (-X)."""
    if not words:
        return
    head = words[0].text
    if head == "stuff" and len(words) > 1:
        text = " ".join(w.text for w in words[1:]).replace("^M", "\n").replace("\\n", "\n")
        an.walk(text, st.copy(cwds=(None,), vars={}), depth + 1)
    elif head in ("exec", "screen"):
        argv = [w for w in words[1:] if not w.text.startswith(("-", "!", ":", "."))]
        if argv:
            an.leaf(argv, st.copy(cwds=(None,)), None, depth + 1)
    elif head in ("eval", "source", "bindkey", "bind", "shell", "register", "paste", "readreg"):
        an.deny("opaque.exec", f"screen {head} runs or types what the guardian cannot see")


def dtach(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """dtach -c|-n|-A SOCKET [opts] CMD...; -a SOCKET attaches, -p SOCKET types stdin into it;
    abduco -c|-n|-A NAME CMD...; -a NAME attaches."""
    if not args or not args[0].known:
        an.deny("shell.unresolved", f"`{name}` with a mode only known at run time")
    mode = args[0].text
    if mode in ("-a", "-p", "-A") and an.ctx.agent:
        an.deny("self.zen-tmux", f"`{name} {mode}` reaches a session that may exist already (another "
                "agent's or a human's terminal)")
    an.ro(f"`{name}`")
    i = 2
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in ("-e", "-r") else 1
    if mode in ("-c", "-n", "-A") and i < len(args):
        an.leaf(args[i:], st, None, depth + 1)


# terminal emulators: the options that introduce the command to run
_TERMINAL_COMMAND = frozenset({"-e", "-x", "--command", "--execute", "--"})
# terminals whose command is their first positional word, and their options that take a value
_POSITIONAL_TERMINALS = {
    "kitty": frozenset({"-c", "--config", "-o", "--override", "--class", "--name", "-T", "--title",
                        "--session", "-d", "--directory", "--working-directory", "--listen-on",
                        "--start-as", "--watcher", "--instance-group", "--window-layout", "--os-window-tag"}),
    "foot": frozenset({"-c", "--config", "-o", "--override", "-f", "--font", "-t", "--term", "-T", "--title",
                       "-a", "--app-id", "-D", "--working-directory", "-w", "--window-size-pixels",
                       "-W", "--window-size-chars", "-s", "--server", "-d", "--log-level", "-l", "--log-colorize"}),
}
_REMOTE_CONTROL = {"kitty": ("@", "+kitten"), "wezterm": ("cli",), "zellij": ("action", "attach", "a", "run",
                                                                           "edit", "pipe", "plugin")}


def terminal(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """A terminal emulator (or zellij) runs a command in a new window: judged as a command. Their
    remote controls (kitty @, wezterm cli, zellij action/run/attach) type into or run in windows
    that already exist, which an agent never reaches."""
    texts = [a.text for a in args]
    remote = _REMOTE_CONTROL.get(name, ())
    if an.ctx.agent and any(t in remote or any(t.startswith(r + " ") for r in remote) for t in texts[:2]):
        an.deny("self.zen-tmux", f"`{name} {texts[0]}` controls terminals that exist already (another "
                "agent's or a human's)")
    an.ro(f"`{name}`")
    for k, t in enumerate(texts):
        if t in _TERMINAL_COMMAND or (t.startswith("--command=") and name != "zellij"):
            rest = args[k + 1:] if "=" not in t else [Word(t.split("=", 1)[1], args[k].raw), *args[k + 1:]]
            _run_words(an, rest, st, depth)
            return
    values = _POSITIONAL_TERMINALS.get(name)
    if values is None:
        return
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        opt = args[i].text.split("=", 1)[0]
        if opt in values and "=" not in args[i].text:
            i += 1
        i += 1
    _run_words(an, args[i:], st, depth)


def _run_words(an: Analyser, words: list[Word], st: State, depth: int) -> None:
    """What a terminal or multiplexer runs: one word is a shell command line, several an argv."""
    if not words:
        return
    if any(not w.known for w in words):
        an.deny("shell.unresolved", "a terminal runs a command only known at run time")
    if len(words) == 1:
        an.walk(words[0].text, st.copy(vars={}), depth + 1)
    else:
        an.leaf(words, st, None, depth + 1)
