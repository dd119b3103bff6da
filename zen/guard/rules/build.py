"""Build tools and package runners: make, npx/uv run/poetry run/..., npm, yarn, pnpm, bun.

A runner's payload is judged as the command it runs; `make -f -` and --eval are opaque. What
`make GOAL` and `npm run NAME` run is read from the Makefile and package.json (buildfiles.py):
written by this command, their text is judged like inline code; on disk, like a script on disk
(scripts.py); written with text the guardian cannot see, they are denied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.paths.resolve import norm
from zen.guard.policy import defaults
from zen.guard.rules import pkg
from zen.guard.scan.buildfiles import make_recipes, npm_scripts
from zen.guard.shell.options import split_opts, val
from zen.guard.shell.words import UNK, Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

# the scripts a package manager's install runs of the project's own package.json
LIFECYCLE = ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare")

# the scripts other npm commands run (npm docs, "Life Cycle Operation Order")
_OTHER_LIFECYCLE = {
    "pack": ("prepack", "prepare", "postpack"),
    "publish": ("prepublishOnly", "prepack", "prepare", "postpack", "publish", "postpublish"),
    "version": ("preversion", "version", "postversion"),
    "rebuild": ("preinstall", "install", "postinstall", "prepare"),
    "link": ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"),
    "uninstall": ("preuninstall", "uninstall", "postuninstall"),
    "shrinkwrap": ("preshrinkwrap", "shrinkwrap", "postshrinkwrap"),
}


def make(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    # -j"$(nproc)", --jobs=$N, -l$LOAD: a count only known at run time runs nothing else
    args = [lit(a.text[:2]) if not a.known and a.text[:2] in ("-j", "-l") and UNK not in a.text[:2] else
            lit("--jobs") if not a.known and a.text.startswith("--jobs=") else a for a in args]
    opts, _pos = split_opts(args, "fCIjlowW", frozenset({"--file", "--makefile", "--directory",
                                                         "--include-dir", "--jobs", "--eval"}))
    f = val(opts, "-f", "--file", "--makefile")
    if (f is not None and f.text in ("-", "/dev/stdin")) or val(opts, "--eval") is not None:
        an.deny("opaque.exec", "`make -f -` / `--eval` runs rules the guardian cannot see")
    if f is not None and f.procsub:
        an.deny("opaque.exec", "`make -f <(...)` runs generated rules")
    an.ro("`make`")
    cdir = val(opts, "-C", "--directory")
    run_st = st if cdir is None else st.copy(cwds=(norm(cdir.text, st.cwd) if cdir.known else None,))
    if any(not p.known for p in _pos):
        an.deny("opaque.exec", "`make` with a goal only known at run time")
    goals = [p.text for p in _pos if "=" not in p.text]
    for candidate in ([f] if f is not None else [lit(n) for n in ("GNUmakefile", "makefile", "Makefile")]):
        kind, text = an.file_text(candidate, run_st)
        if kind == "none":
            continue
        if kind == "unknown" or text is None:
            an.deny("opaque.exec", f"`make` runs {candidate.raw}, which the guardian cannot see (written "
                    "by this command with unknown text)")
        overrides = {k: v for k, _, v in (p.text.partition("=") for p in _pos if "=" in p.text)}
        recipes = make_recipes(text, goals, an.env, overrides)
        if recipes is None:
            if kind == "written":
                an.deny("opaque.exec", f"`make`: {candidate.raw} includes other files the guardian cannot see")
            an.unjudged(f"`make`: {candidate.raw} includes other files the guardian cannot see")
            return
        if kind == "disk" and any(UNK in r for r in recipes):   # $(wildcard ...), $(patsubst ...)
            an.unjudged(f"`make`: {candidate.raw} has recipes with make functions the guardian does not expand")
            recipes = [r for r in recipes if UNK not in r]
        an.run_lines(recipes, run_st, f"`make` ({candidate.raw})")
        return


def package_scripts(an: Analyser, tool: str, names: list[str], st: State) -> None:
    """`npm run NAME` and friends: the scripts package.json gives NAME (with pre and post)."""
    kind, text = an.file_text(lit("package.json"), st)
    if kind == "none":
        return
    if kind == "unknown" or text is None:
        an.deny("opaque.exec", f"`{tool}` runs scripts of a package.json the guardian cannot see")
    for name in names:
        scripts = npm_scripts(text, name)
        if scripts:
            an.run_lines(scripts, st, f"`{tool}` (package.json {name})")


def runner(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    pkg.sources(an, name, args)
    if name in ("npx", "pnpx"):
        opts, pos = split_opts(args, "pc", frozenset({"--package", "--call"}), stop_first=True)
        call = next((v for o, v in opts if o in ("-c", "--call")), None)
        if any(o in ("-c", "--call") for o, _ in opts):   # npx -c 'CMD' runs CMD in a shell
            if call is None or not call.known:
                an.deny("opaque.exec", f"`{name} -c` runs a command only known at run time")
            else:
                an.walk(call.text, st.copy(vars={}), depth + 1)
            return
    _opts, pos = split_opts(args, "p" if name in ("npx",) else "", frozenset({"--package"}), stop_first=True)
    if name in ("yarn", "pnpm", "bun") and pos and pos[0].text in ("run", "test", "build", "lint", "start",
                                                                   "dev", "install", "add", "remove",
                                                                   "why", "list", "ls", "outdated"):
        an.ro(f"`{name} {pos[0].text}`")
        script = pos[1].text if pos[0].text == "run" and len(pos) > 1 else pos[0].text
        package_scripts(an, name, list(LIFECYCLE) if script in ("install", "add") else [script], st)
        if pos[0].text in ("install", "add"):
            an.need("network_requests", "approval.network", f"`{name} {pos[0].text}`")
        return
    if name in ("yarn", "pnpm", "bun") and pos and pos[0].text in ("dlx", "exec", "x"):
        pos = pos[1:]
    elif name in ("yarn", "pnpm", "bun") and pos:
        # `yarn NAME` runs package.json's script NAME when there is one (else a bin of that name)
        package_scripts(an, name, [pos[0].text], st)
    elif name == "direnv" and pos and pos[0].text in ("allow", "permit", "grant", "exec", "reload", "export"):
        direnv(an, pos, st, cmd, depth)
        return
    elif name in ("poetry", "pipenv", "pdm", "hatch", "rye", "uv", "conda", "mamba", "pixi",
                  "bundle", "direnv"):
        if not pos or pos[0].text not in ("run", "exec"):
            an.ro(f"`{name}`")
            if pos and pos[0].text in ("add", "install", "sync", "update", "lock", "pip"):
                an.need("network_requests", "approval.network", f"`{name} {pos[0].text}`")
            return
        pos = pos[1:]
        _o2, pos = split_opts(pos, "np" if name in ("conda", "mamba") else "", frozenset({"--with", "--python", "--env", "--name", "--prefix"}), stop_first=True)
    elif name == "dotenv":
        an.deny("creds.read", "`dotenv` loads a .env file into a command")
    if not pos:
        return
    an.leaf(pos, st, cmd, depth + 1)


def npm(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    pkg.sources(an, name, args)
    texts = [a.text for a in args]
    if texts[:1] in (["exec"], ["x"]):
        _, pos = split_opts(args[1:], "c", frozenset({"--package", "--call"}), stop_first=True)
        c = next((args[k + 2] for k, t in enumerate(texts[1:]) if t in ("-c", "--call") and k + 2 < len(args)), None)
        if c is not None:
            an.walk(c.text, st.copy(vars={}), depth + 1)
        elif pos:
            an.leaf(pos, st, cmd, depth + 1)
        return
    if (texts[:1] in (["config"],) and texts[1:2] in (["get"], ["list"], ["ls"]) and any(
            "token" in t.lower() or "auth" in t.lower() for t in texts)) or (texts[:2] == ["config", "list"] and "-l" in texts):
        an.deny("creds.command", "`npm config get` of an auth token prints credentials")
    if texts[:2] in (["token", "list"], ["token", "create"]):
        an.deny("creds.command", "`npm token` prints credentials")
    if texts[:1] not in (["ls"], ["list"], ["view"], ["info"], ["outdated"], ["why"], ["explain"],
                         ["help"], ["search"], ["--version"], ["-v"]):
        an.ro("`npm`")
    words = [t for t in texts if not t.startswith("-")]
    if words[:1] in (["run"], ["run-script"], ["rum"], ["urn"]) and len(words) > 1:
        package_scripts(an, "npm", [words[1]], st)
    elif words[:1] in (["test"], ["t"], ["tst"], ["start"], ["stop"], ["restart"]):
        package_scripts(an, "npm", [{"t": "test", "tst": "test"}.get(words[0], words[0])], st)
    elif words[:1] in (["install"], ["i"], ["ci"], ["add"]):
        package_scripts(an, "npm", list(LIFECYCLE), st)
    elif words[:1] and words[0] in _OTHER_LIFECYCLE:   # npm pack, publish, version, ... run their own
        package_scripts(an, "npm", list(_OTHER_LIFECYCLE[words[0]]), st)
    if texts[:1] and texts[0] in defaults.NETWORK_SUBCOMMANDS["npm"]:
        an.need("network_requests", "approval.network", f"`npm {texts[0]}`")


def direnv(an: Analyser, pos: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """`direnv allow|exec|reload|export`: the .envrc it loads is a bash script, judged as strictly as
    inline code (then `exec DIR CMD` runs CMD)."""
    an.ro(f"`direnv {pos[0].text}`")
    sub = pos[0].text
    folder = pos[1] if len(pos) > 1 and sub in ("allow", "permit", "grant", "exec") else lit(".")
    if not folder.known:
        an.deny("opaque.exec", "`direnv` loads an .envrc from a folder only known at run time")
    envrc = lit(folder.text if folder.text.endswith(".envrc") else folder.text.rstrip("/") + "/.envrc")
    kind, text = an.file_text(envrc, st)
    if kind == "unknown" or text is None:
        if kind != "none":
            an.unjudged("`direnv` loads an .envrc the guardian cannot read")
    else:
        an.judge_text(text, "sh", st, "`direnv` (.envrc)")
    if sub == "exec" and len(pos) > 2:
        an.leaf(pos[2:], st, cmd, depth + 1)
