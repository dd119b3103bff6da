"""Containers and clusters: docker/podman/nerdctl, kubectl.

Writable mounts are writes of their source, --privileged and the docker socket hand over the
host, `exec` payloads are judged as commands, volume and image prunes are denied.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.paths.resolve import under
from zen.guard.rules import env, net, pkg, secrets
from zen.guard.shell.options import has, split_opts
from zen.guard.shell.words import UNK, Cmd, State, Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def docker(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    pkg.publish_check(an, name, args)       # docker push: an image released for others
    _gopts, pos = split_opts(args, "cHl", frozenset({"--context", "--host", "--config", "--log-level"}),
                            stop_first=True)
    if not pos:
        return
    sub = pos[0].text
    rest = pos[1:]
    if sub == "container" and rest:
        sub, rest = rest[0].text, rest[1:]
    if sub in ("exec", "run", "create"):
        vshort = "eiuvwlpcmhd" if sub != "exec" else "euwd"
        opts, p2 = split_opts(rest, vshort.replace("d", ""), frozenset({
            "--env", "--user", "--volume", "--workdir", "--label", "--publish", "--cpus", "--memory",
            "--hostname", "--name", "--network", "--mount", "--entrypoint", "--env-file", "--platform",
            "--detach-keys", "--add-host", "--cap-add", "--cap-drop", "--device", "--pull", "--restart",
            "--security-opt", "--ulimit", "--shm-size", "--ipc", "--pid", "--runtime", "--gpus",
            "--tmpfs", "--volumes-from", "--log-driver", "--log-opt", "--stop-signal"}), stop_first=True)
        for o, v in opts:
            if o in ("-v", "--volume") and v is not None:
                volume(an, v.text, st)
            elif o == "--mount" and v is not None:
                m = re.search(r"(?:source|src)=([^,]+)", v.text)
                if m:
                    volume(an, m.group(1) + (":x:ro" if "readonly" in v.text or "ro=true" in v.text else ":x"), st)
            elif o == "--privileged" or (o == "--cap-add" and v is not None and v.text.upper() in ("ALL", "SYS_ADMIN")):
                an.deny("priv.escalation", f"`{name} {sub} {o}` gives the container the host")
            elif o in ("--pid", "--ipc", "--network", "--userns", "--uts") and v is not None and v.text == "host" and o == "--pid":
                an.deny("priv.escalation", f"`{name} {sub} --pid=host` reaches host processes")
            elif o == "--device":
                an.deny("disk.device-write", f"`{name} {sub} --device` hands a device to the container")
            elif o == "--env-file" and v is not None:
                an.read_word(v, st)
        if has(opts, "--privileged"):
            an.deny("priv.escalation", f"`{name} {sub} --privileged` gives the container the host")
        if sub == "exec" and len(p2) >= 2:
            an.leaf(p2[1:], State((None,)), cmd, depth + 1)     # cmd: its stdin reaches the program
        return
    if sub == "compose":
        compose(an, "docker compose", rest, st, cmd, depth)
        return
    if sub == "cp" and len(rest) >= 2:
        dst = rest[-1]
        if ":" not in dst.text.split("/")[0]:
            an.write_word(dst, st, f"`{name} cp` writes")
        for s in rest[:-1]:
            if ":" not in s.text.split("/")[0]:
                an.read_word(s, st, recursive=True)
        return
    if sub in ("build",):
        opts, p2 = split_opts(rest, "ft", frozenset({"--file", "--tag", "--build-arg", "--secret",
                                                     "--target", "--platform"}))
        for p in p2:
            an.read_word(p, st, recursive=True)
        return
    if sub in ("system", "volume", "image", "container", "network", "builder") and rest and \
            rest[0].text in ("prune", "rm") and (sub == "volume" or any(
                a.text in ("--volumes", "-a", "--all", "-af", "-fa") for a in rest)):
        an.deny("remote.destructive", f"`{name} {sub} {rest[0].text}` deletes volumes or images "
                  "outside the worktree")
    if sub in ("login",):
        an.need("network_requests", "approval.network", f"`{name} login`")
    if (sub in ("system", "volume", "image", "container", "network", "builder") and rest and rest[0].text == "prune") or sub in {"rmi", "rm"}:
        pass
    if sub in ("pull", "push", "login"):
        an.need("network_requests", "approval.network", f"`{name} {sub}` reaches a registry")


_COMPOSE_GLOBAL = frozenset({"-f", "--file", "-p", "--project-name", "--project-directory", "--profile",
                             "--env-file", "--ansi", "--parallel", "--progress"})
_COMPOSE_EXEC = frozenset({"-u", "--user", "-e", "--env", "-w", "--workdir", "--index", "--name", "-v", "--volume",
                           "-p", "--publish", "-l", "--label", "--entrypoint", "--pull", "--cap-add", "--cap-drop"})


def compose(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """docker compose / docker-compose: `exec SERVICE CMD` and `run SERVICE CMD` run CMD in a
    container, judged as a command (its stdin included: SQL fed to a database there)."""
    an.ro(f"`{name}`")
    i = _skip(args, 0, _COMPOSE_GLOBAL)
    if i >= len(args) or args[i].text not in ("exec", "run"):
        return
    j = _skip(args, i + 1, _COMPOSE_EXEC)
    if j + 1 < len(args):
        an.leaf(args[j + 1:], State((None,)), cmd, depth + 1)


def _skip(args: list[Word], i: int, takes_value: frozenset[str]) -> int:
    """The index of the first positional word from `i` (options, with their values, skipped)."""
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in takes_value else 1
    return i


def volume(an: Analyser, spec: str, st: State) -> None:
    parts = spec.split(":")
    src = parts[0]
    if not src.startswith(("/", ".", "~")) and UNK not in src:
        return   # a named volume
    ro = len(parts) >= 3 and "ro" in parts[2].split(",")
    w = Word(src)
    if src == "/var/run/docker.sock" or src.endswith("/docker.sock"):
        an.deny("priv.escalation", "mounting the docker socket hands over the host")
    if not ro:
        t = an.target(w, st, True)
        if t is None:
            an.deny("fs.unresolved-target", f"mounts a path only known at run time ({src})")
        an.check(t, "write", "mounts writable", w)
        for p in (an.home, an.user_home):
            if p and under(p, t.path) and not any(under(t.path, r) for r in an.roots):
                an.deny("fs.outside-worktree", f"mounts {src} writable into a container")
    an.read_word(w, st, recursive=True)


def kubectl(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    env.cred_command(an, name, args)
    secrets.check(an, name, args)
    net.remote_destructive(an, name, args)
    texts = [a.text for a in args]
    posw = [t for t in texts if not t.startswith("-")]
    if posw[:1] in (["get"], ["describe"], ["logs"], ["top"], ["explain"], ["version"], ["api-resources"]) \
            or posw[:2] == ["config", "view"] or posw[:2] == ["config", "get-contexts"]:
        if posw[:2] == ["get", "secret"] or posw[:2] == ["get", "secrets"]:
            if any(t in ("-o", "--output") or t.startswith(("-o", "--output")) for t in texts):
                an.deny("creds.command", "`kubectl get secret -o ...` prints secrets")
        return
    an.ro("`kubectl`")
    if "--" in texts and posw[:1] == ["exec"]:
        k = texts.index("--")
        an.leaf(args[k + 1:], State((None,)), cmd, depth + 1)
    if posw[:1] in (["delete"],) or posw[:2] == ["drain", ]:
        pass
    an.need("network_requests", "approval.network", "`kubectl` changes a cluster")
