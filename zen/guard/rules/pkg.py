"""Package installs: the index, registry or URL they fetch code from must be one the policy knows.

An install from an index, a tarball URL or a VCS source the policy does not list
(`package_registries`, on top of PyPI, npmjs and the other official registries in defaults.py)
is denied, whatever the spelling: pip's -i/--index-url/--extra-index-url/-f and their
abbreviations, `pip install git+https://...` or `https://host/x.tar.gz`, `pip config set
global.index-url`, uv's --index/--default-index, pipx, poetry (`source add`, `config
repositories.*`), npm/pnpm/yarn/bun (--registry, `config set registry`, tarball and git specs,
GitHub shorthand), npx of a URL, gem --source, cargo --git/--index, conda -c URL, and the
environment variables that point a tool at another index (PIP_INDEX_URL=..., npm_config_registry,
GOPROXY, ...). Local paths, file:// and this machine's own servers are fine; a source only known
at run time is denied (fail closed).

Publishing (npm publish, twine upload, cargo publish, docker push, gh release create, ...) is a
release, never an agent's (`publish_check`).

Lean on purpose: imported by the rule families of the tools that install or publish (stdlib +
zen.guard only).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.policy import defaults
from zen.guard.shell.urls import is_loopback, url_host
from zen.guard.shell.words import UNK, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

# a URL anywhere in a word: a scheme (with a VCS prefix), or git's scp form (git@host:path)
_URL = re.compile(r"(?i)(?:\b(?:git|hg|svn|bzr)\+)?\b([a-z][a-z0-9+.-]*)://[^\s,;'\"|]+")
_SCP = re.compile(r"^(?:[\w.-]+@)?([\w-]+(?:\.[\w-]+)+):(?!//)[\w~./-]")
# npm-style specs of another source: github:u/r, gitlab:..., bitbucket:..., gist:..., or u/r
_NPM_HOSTED = re.compile(r"^(?:[\w.-]+@)?(github|gitlab|bitbucket|gist|git|sourcehut):")
_NPM_SHORTHAND = re.compile(r"^(?:[\w.-]+@)?[A-Za-z0-9][\w.-]*/[\w.-]+(?:#.*)?$")

# options whose value names an index or source (long names; any unique abbreviation counts)
_SOURCE_OPTS = ("--index-url", "--extra-index-url", "--find-links", "--index", "--default-index",
                "--registry", "--source", "--channel", "--git", "--from", "--with", "--pip-args", "--repository")
_SHORT_SOURCE = {"pip": "if", "pip3": "if", "uv": "if", "uvx": "if", "pipx": "", "gem": "s",
                 "conda": "c", "mamba": "c", "micromamba": "c"}

# options whose value is not a package source (skipped: a proxy URL, a folder that looks like u/r)
_DATA_OPTS = frozenset({"--proxy", "--https-proxy", "--noproxy", "--prefix", "-w", "--workspace", "--tag",
                        "--omit", "--include", "--cache", "--install-strategy", "--loglevel", "--filter", "-F",
                        "--dir", "-C", "--cwd", "--modules-folder", "--target", "-t", "--python", "--group",
                        "-G", "--root", "--cert", "--client-cert", "--trusted-host", "--userconfig",
                        "--globalconfig", "--log", "--src", "--python-version", "--platform"})

_PIP_VERBS = frozenset({"install", "download", "wheel", "lock", "index"})
_NPM_VERBS = frozenset({"install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal",
                        "isntall", "add", "ci", "clean-install", "ic", "install-clean", "update", "up",
                        "upgrade", "udpate", "exec", "x", "create", "init", "innit", "install-test", "it",
                        "cit", "install-ci-test", "dlx"})

_FILE_VARS = frozenset({"PIP_CONFIG_FILE", "UV_CONFIG_FILE", "NPM_CONFIG_USERCONFIG", "npm_config_userconfig",
                        "NPM_CONFIG_GLOBALCONFIG", "npm_config_globalconfig", "CONDARC"})


def _reason(where: str, what: str) -> str:
    return (f"{where} installs from {what}, a package source the policy does not know: use the default "
            "registry (PyPI, npmjs, ...), or ask a human to add the host to policy/guardian.yaml "
            "package_registries")


def source_url(an: Analyser, text: str, where: str) -> None:
    """Deny `text` (a URL or host:path) unless it is a known registry, this machine or a local file."""
    if UNK in text:
        an.deny("pkg.unknown-index", f"{where} installs from a source only known at run time")
    for m in _URL.finditer(text):
        scheme = m.group(1).lower()
        if scheme == "file":
            continue
        host, port, sch = url_host(m.group(0).split("+", 1)[-1] if "+" in m.group(0).split("://", 1)[0]
                                   else m.group(0))
        if not host or host == UNK:
            an.deny("pkg.unknown-index", f"{where} installs from a source only known at run time")
        if is_loopback(host) or an.policy.known_registry(host, port, sch):
            continue
        an.deny("pkg.unknown-index", _reason(where, host))
    scp = _SCP.match(text)
    if scp and "://" not in text and not an.policy.known_registry(scp.group(1), None, None):
        an.deny("pkg.unknown-index", _reason(where, scp.group(1)))


def _abbrev(opt: str) -> str | None:
    """The source option `opt` names (exactly or as a unique-enough abbreviation)."""
    if not opt.startswith("--") or len(opt) < 5:
        return None
    name = opt.split("=", 1)[0]
    for full in _SOURCE_OPTS:
        if full == name or full.startswith(name):
            return full
    return None


def check_words(an: Analyser, name: str, words: list[Word], where: str, specs: str = "",
                payload: int | None = None) -> None:
    """Every source a package command line names: option values (and the word after a source
    option), URLs anywhere, and for `specs` ("npm") the spec forms that mean another source.
    `payload`: a runner's command starts after that many positional words (its URLs are data)."""
    short = _SHORT_SOURCE.get(name, "")
    expect = False
    skip = ""
    seen = 0
    for w in words:
        t = w.text
        if expect:
            expect = False
            if not w.known:
                an.deny("pkg.unknown-index", f"{where} installs from a source only known at run time")
            source_url(an, t, where)
            continue
        opt, eq, value = t.partition("=")
        if skip:            # the value of an option that names no source (--proxy URL, -w DIR)
            opt, value, skip = skip, t, ""
        elif opt in _DATA_OPTS:
            skip = "" if eq else opt
            if skip:
                continue
        else:
            opt = ""
        if opt:
            if opt in ("--userconfig", "--globalconfig") and value != "/dev/null":
                an.deny("pkg.unknown-index", f"{where} {opt} reads a configuration file whose registry the "
                        "guardian cannot see; pass a known --registry instead")
            continue
        if t.startswith("--") and (_abbrev(t) or t.endswith(":registry") or ":registry=" in t):
            if "=" in t:
                source_url(an, t.split("=", 1)[1], where)
            else:
                expect = True
            continue
        if short and len(t) >= 2 and t[0] == "-" and t[1] in short:
            if len(t) > 2:
                source_url(an, t[2:], where)
            else:
                expect = True
            continue
        if not t.startswith("-"):
            seen += 1
            if payload is not None and seen > payload:
                continue
        if not w.known and ("://" in w.raw or w.raw.startswith(("git+", "http"))):
            an.deny("pkg.unknown-index", f"{where} installs from a source only known at run time")
        if "://" in t or _SCP.match(t):
            source_url(an, t, where)
        elif specs == "npm" and not t.startswith("-") and _npm_other_source(t):
            an.deny("pkg.unknown-index", _reason(where, f"`{t}` (a git repository, not the registry)"))


def _npm_other_source(spec: str) -> bool:
    if spec.startswith(("@", ".", "/", "~", "file:", "npm:", "link:", "workspace:")):
        return False
    return bool(_NPM_HOSTED.match(spec) or _NPM_SHORTHAND.match(spec))


def _config_set(an: Analyser, words: list[str], where: str, keys: tuple[str, ...], verb: bool = True) -> None:
    """`TOOL config set KEY VALUE` (or KEY=VALUE): a key naming an index needs a known value
    (`verb`: the words start with the subcommand, and only `set` / `add` changes anything)."""
    if verb:
        if words[:1] not in (["set"], ["add"]):
            return
        words = words[1:]
    for k, t in enumerate(words):
        key, eq, value = t.partition("=")
        if any(key.lower().endswith(s) for s in keys):
            if not eq:
                value = words[k + 1] if k + 1 < len(words) else ""
            source_url(an, value or UNK, where)


def pip(an: Analyser, name: str, args: list[Word], where: str) -> None:
    """pip / pip3 / python -m pip / uv pip ARGS."""
    pos = [a.text for a in args if not a.text.startswith("-")]
    if pos[:1] == ["config"]:
        _config_set(an, pos[1:], f"{where} config set", ("index-url", "extra-index-url", "find-links", "index"))
    elif pos[:1] and pos[0] in _PIP_VERBS:
        check_words(an, "pip", args[1:], f"{where} {pos[0]}")
        requirement_files(an, args, f"{where} {pos[0]}")


def sources(an: Analyser, name: str, args: list[Word]) -> None:
    """The package sources of a package manager's command line (the rule handlers call this), then
    whether it publishes."""
    _sources(an, name, args)
    publish_check(an, name, args)


def _sources(an: Analyser, name: str, args: list[Word]) -> None:
    """Which spellings a tool names its sources with, by tool."""
    texts = [a.text for a in args]
    pos = [t for t in texts if not t.startswith("-")]
    where = f"`{name}`"
    if name in ("pip", "pip3") or re.fullmatch(r"pip3?\.\d+", name):
        pip(an, name, args, where)
    elif name == "uv":
        if pos[:1] == ["pip"]:
            pip(an, name, args[texts.index("pip") + 1:], "`uv pip`")
        else:
            check_words(an, "uv", args, where, payload={"run": 2, "tool": 3}.get(pos[0]) if pos else None)
    elif name in ("uvx", "pipx"):
        check_words(an, name, args, where, payload=1 if name == "uvx" else 2 if pos[:1] == ["run"] else None)
    elif name == "poetry":
        if pos[:2] == ["source", "add"]:
            for t in pos[3:4] or [UNK]:
                source_url(an, t, "`poetry source add`")
        elif pos[:1] == ["config"]:
            for k, p in enumerate(pos):
                if p.startswith("repositories.") and k + 1 < len(pos):
                    source_url(an, pos[k + 1], "`poetry config`")
        else:
            check_words(an, name, args, where, payload=0 if pos[:1] in _RUN_VERBS else None)
    elif name in ("npm", "pnpm", "yarn", "bun", "npx", "pnpx", "bunx"):
        npm_like(an, name, args, pos)
    elif name in ("gem", "bundle", "cargo", "conda", "mamba", "micromamba", "go", "composer"):
        other(an, name, args, pos)


def _positionals(args: list[Word]) -> list[str]:
    """The words that are not options nor the values of _DATA_OPTS (`pnpm --filter web add x`)."""
    out: list[str] = []
    skip = False
    for a in args:
        t = a.text
        if skip:
            skip = False
        elif t.startswith("-"):
            skip = t in _DATA_OPTS
        else:
            out.append(t)
    return out


def npm_like(an: Analyser, name: str, args: list[Word], pos: list[str]) -> None:
    where = f"`{name}`"
    pos = _positionals(args)
    if pos[:1] == ["set"]:
        _config_set(an, pos, f"{where} set", ("registry", "npmregistryserver"))
        return
    if pos[:1] == ["config"]:
        _config_set(an, pos[1:], f"{where} config set", ("registry", "npmregistryserver"))
        return
    # --registry on any command (publish to another registry too), specs on installs
    verb = pos[0] if pos else ""
    if name in ("npx", "pnpx", "bunx") or verb in ("exec", "x", "dlx", "create", "init", "innit"):
        check_words(an, name, args, where, specs="npm", payload=1 if name in ("npx", "pnpx", "bunx") else 2)
    elif verb in _NPM_VERBS:
        check_words(an, name, args, where, specs="npm")
    else:
        check_words(an, name, args, where, payload=0)     # --registry on any command (publish too)


def other(an: Analyser, name: str, args: list[Word], pos: list[str]) -> None:
    where = f"`{name}`"
    if name == "gem" and pos[:1] == ["sources"]:
        texts = [a.text for a in args]
        for k, t in enumerate(texts):
            if t in ("-a", "--add") or t.startswith("--add="):
                source_url(an, t.split("=", 1)[1] if "=" in t else (texts[k + 1] if k + 1 < len(texts) else UNK),
                           "`gem sources --add`")
        return
    if name == "go":
        if pos[:1] == ["env"]:
            for t in pos[1:]:
                key, _, value = t.partition("=")
                if key in defaults.PACKAGE_SOURCE_VARS:
                    env_source(an, key, Word(value), "`go env -w`")
        return
    if name == "conda" and pos[:1] == ["config"]:
        check_words(an, name, [a for a in args if "://" in a.text], "`conda config`")
        return
    # the URLs a run's payload takes are data (cargo run -- URL); its options before it still count
    check_words(an, name, args, where, payload=0 if pos[:1] in _RUN_VERBS else None)


# package managers' verbs that run a command or the project (their payload's URLs are data)
_RUN_VERBS = (["run"], ["exec"], ["test"], ["bench"], ["build"], ["shell"], ["x"], ["r"], ["check"], ["doc"],
              ["clippy"], ["fmt"])


def env_source(an: Analyser, var: str, value: Word, where: str | None = None) -> None:
    """An environment variable that points installers at an index: a known registry, or denied."""
    where = where or f"setting {var}"
    text = value.text
    if not value.known or UNK in text:
        an.deny("pkg.unknown-index", f"{where} to a value only known at run time points installers at an "
                "unknown package source")
    if var in _FILE_VARS:
        if text not in ("", "/dev/null"):
            an.deny("pkg.unknown-index", f"{where} makes installers read a configuration file (its index "
                    "the guardian cannot see); pass a known --index-url instead")
        return
    if var == "GOPROXY":
        for part in re.split(r"[,|]", text):
            if part.strip() not in ("", "direct", "off"):
                source_url(an, part if "://" in part else "https://" + part, where)
        return
    if var in ("GONOSUMDB", "GONOSUMCHECK", "GOINSECURE") or (var == "GOSUMDB" and text == "off") or (
            var == "GOFLAGS" and "-insecure" in text):
        if text:
            an.deny("pkg.unverified", f"{where} turns off checksum verification of downloaded modules")
        return
    if var in ("GOFLAGS", "GOSUMDB", "CARGO_REGISTRIES_CRATES_IO_PROTOCOL"):
        return
    for part in text.split():
        source_url(an, part if "://" in part else "https://" + part, where)



def config_file(an: Analyser, path: str, content: str | None) -> None:
    """A package manager's configuration file written: every URL in it must be a known source."""
    name = path.rsplit("/", 1)[-1]
    if name == "config.toml" and "/.cargo/" not in path:
        return      # only cargo's config.toml names registries
    where = f"writing {name}"
    if content is None:
        an.deny("pkg.unknown-index", f"{where} with text the guardian cannot see may point installers at an "
                "unknown package source")
    for line in content.splitlines():
        if not line.lstrip().startswith(("#", ";")) and ("://" in line or UNK in line):
            source_url(an, line, where)


def requirement_files(an: Analyser, args: list[Word], where: str) -> None:
    """pip -r / -c FILE: the options and URLs inside the file count as given on the command line."""
    for k, a in enumerate(args):
        t = a.text
        if t in ("-r", "--requirement", "-c", "--constraint") and k + 1 < len(args):
            f = args[k + 1]
        elif t.startswith(("--requirement=", "--constraint=")):
            f = Word(t.split("=", 1)[1], a.raw)
        elif t.startswith(("-r", "-c")) and len(t) > 2 and not t.startswith("--"):
            f = Word(t[2:], a.raw)
        else:
            continue
        kind, text = an.file_text(f, an.st)
        if kind == "unknown" and f.known and kind != "none":
            an.deny("pkg.unknown-index", f"{where} -r {f.raw}: a requirements file written with text the "
                    "guardian cannot see may name an unknown index")
        if text:
            words = [lit(w) for line in text.splitlines() if not line.lstrip().startswith("#")
                     for w in line.split()]
            check_words(an, "pip", words, f"{where} ({f.raw})")


# publishing a release: (program, leading words) that upload a package or an image for others
_PUBLISH: dict[str, tuple[tuple[str, ...], ...]] = {
    "npm": (("publish",), ("unpublish",), ("deprecate",), ("dist-tag", "add"), ("dist-tag", "rm"),
            ("owner", "add"), ("owner", "rm")),
    "pnpm": (("publish",), ("unpublish",), ("deprecate",), ("dist-tag", "add"), ("dist-tag", "rm")),
    "bun": (("publish",),), "yarn": (("publish",), ("npm", "publish")),
    "twine": (("upload",), ("register",)), "cargo": (("publish",), ("yank",), ("owner",)),
    "gem": (("push",), ("yank",), ("owner",)), "poetry": (("publish",),), "uv": (("publish",),),
    "pdm": (("publish",),), "hatch": (("publish",),), "flit": (("publish",),), "rye": (("publish",),),
    "docker": (("push",), ("image", "push")), "podman": (("push",), ("image", "push")),
    "nerdctl": (("push",), ("image", "push")),
    "gh": (("release", "create"), ("release", "upload"), ("release", "edit")),
    "glab": (("release", "create"), ("release", "upload")), "hub": (("release", "create"),),
}


def publish_check(an: Analyser, name: str, args: list[Word]) -> None:
    """Publishing a package, an image or a release is a person's call (DESIGN section 5: an agent
    never releases); from a shell with no job it is an action beyond the worktree."""
    forms = _PUBLISH.get(name)
    if forms is None:
        return
    words = _positionals(args)
    texts = [a.text for a in args]
    hit = next((f for f in forms if tuple(words[:len(f)]) == f), None)
    if hit is None and name in ("docker", "podman") and "buildx" in words[:1] and "--push" in texts:
        hit = ("buildx", "build", "--push")
    if hit is None or (hit == ("owner",) and not any(t.startswith(("-a", "--add", "-r", "--remove"))
                                                     for t in texts)):
        return      # `cargo owner --list`, `gem owner NAME` only read
    what = f"`{name} {' '.join(hit)}`"
    if an.ctx.agent:
        an.deny("remote.human-only", f"{what} publishes a release for others, and an agent is never a human: "
                "zen harvests the work for a person to review and release")
    an.beyond("report.publish", f"{what} publishes a release beyond the worktree")
