"""The HTTP method a client's command line sends (for the hosted API rule, zen/guard/scan/hosted.py).

Each returns the method in capitals, or None when it is only known at run time (then the call
counts as mutating: fail closed). Option spellings follow the tools: curl's -XDELETE and
--request, data options that make a POST; wget's --method and --post-data; httpie's METHOD word
or data items; gh/glab/hub api's -X/--method and fields. A long option that is only a prefix
of a method or body option (curl and wget take unique prefixes) counts as one with an unknown
value.

Lean on purpose: imported by the hook with the network rules (stdlib + zen.guard).
"""

from __future__ import annotations

import re

from zen.guard.shell.options import split_opts
from zen.guard.shell.words import UNK, Word

HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT"})
HTTPIE = frozenset({"http", "https", "httpie", "xh", "xhs", "curlie"})
Opts = list[tuple[str, Word | None]]

_CURL_BODY = frozenset({"-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii",
                        "--json", "-F", "--form", "--form-string"})
_CURL_LONG = ("--request", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii",
              "--json", "--form", "--form-string", "--upload-file", "--get", "--head")
_WGET_LONG = ("--method", "--post-data", "--post-file", "--body-data", "--body-file")
# httpie request items: name=value (data), name:=json, name=@file, @file, name@file (a form file),
# name==value (a query parameter), Header:value
_HTTPIE_ITEM = re.compile(r"^(?:\\.|[^:=@\\])*(:=@|:=|==|=@|=|@|:)")


def _value(v: Word | None) -> str | None:
    if v is None or not v.known or UNK in v.text:
        return None
    return v.text.upper()


def _prefix_of(opt: str, names: tuple[str, ...]) -> bool:
    """`opt` is an abbreviation (not the full name) of one of `names`."""
    return opt.startswith("--") and len(opt) > 3 and opt not in names and any(n.startswith(opt) for n in names)


def curl_method(opts: Opts) -> str | None:
    method = "GET"
    names = [o for o, _ in opts]
    if any(_prefix_of(o, _CURL_LONG) for o in names):
        return None
    if any(o in _CURL_BODY for o in names):
        method = "GET" if any(o in ("-G", "--get") for o in names) else "POST"
    elif any(o in ("-T", "--upload-file") for o in names):
        method = "PUT"
    elif any(o in ("-I", "--head") for o in names):
        method = "HEAD"
    for o, v in opts:
        if o in ("-X", "--request"):
            method = _value(v) or ""
    return method or None


def wget_method(opts: Opts) -> str | None:
    method = "GET"
    for o, _v in opts:
        if _prefix_of(o, _WGET_LONG):
            return None
        if o in ("--post-data", "--post-file", "--body-data", "--body-file") and method == "GET":
            method = "POST"
    for o, v in opts:
        if o == "--method":
            return _value(v)
    return method


def httpie_method(opts: Opts, items: list[Word], piped: bool = False) -> str | None:
    """The method httpie (and xh) infer when none is named: POST when data is sent."""
    if any(o in ("-f", "--form", "--multipart", "--raw") for o, _ in opts):
        return "POST"
    for item in items:
        if not item.known:
            return None
        m = _HTTPIE_ITEM.match(item.text)
        if m and m.group(1) not in ("==", ":"):
            return "POST"
    if piped and not any(o in ("-I", "--ignore-stdin") for o, _ in opts):
        return "POST"
    return "GET"


def request_bodies(opts: Opts) -> list[str] | None:
    """The bodies curl/wget options send, when all can be seen (None: one comes from a file)."""
    bodies: list[str] = []
    for o, v in opts:
        if o in _CURL_BODY or o in ("--post-data", "--body-data"):
            if v is None or not v.known or (v.text.startswith("@") and o not in ("--data-raw", "--form-string")):
                return None
            bodies.append(v.text)
        elif o in ("-T", "--upload-file", "--post-file", "--body-file"):
            return None
    return bodies


_API_VALUES = "XfFHqtp"
_API_LONG = frozenset({"--method", "--field", "--raw-field", "--input", "--header", "--jq", "--template",
                       "--hostname", "--preview", "--cache"})


def forge_api(name: str, args: list[Word]) -> tuple[str, str | None, list[str] | None]:
    """(url, method, bodies) of `gh api` / `glab api` / `hub api` ARGS (after `api`)."""
    opts, pos = split_opts(args, _API_VALUES, _API_LONG)
    method: str | None = "GET"
    bodies: list[str] | None = []
    for o, v in opts:
        if o in ("-f", "-F", "--field", "--raw-field", "--input"):
            method = "POST"
            if o == "--input" or v is None or not v.known or (o in ("-F", "--field") and "=@" in v.text):
                bodies = None
            elif bodies is not None:
                bodies.append(v.text.split("=", 1)[-1])
    for o, v in opts:
        if o in ("-X", "--method"):
            method = _value(v)
    host = next((v.text for o, v in opts if o == "--hostname" and v is not None), None)
    endpoint = pos[0].text if pos else ""
    if "://" in endpoint:
        return endpoint, method, bodies
    if name == "glab":
        base = f"https://{host or 'gitlab.com'}/api/v4"
    else:
        base = "https://api.github.com" if host in (None, "github.com") else f"https://{host}/api/v3"
    return f"{base}/{endpoint.lstrip('/')}", method, bodies


# gh subcommands that only read, or only act on this machine (a clone, a checkout, a download):
# every other one changes something on GitHub (gh pr create, gh repo edit --visibility, gh secret
# set, gh workflow run, ...)
_GH_LOCAL_GROUPS = frozenset({"auth", "config", "alias", "completion", "help", "browse", "status", "version",
                              "search", "--version", "--help", "-h", "api"})
_GH_LOCAL = frozenset({
    ("pr", "view"), ("pr", "list"), ("pr", "diff"), ("pr", "checks"), ("pr", "status"), ("pr", "checkout"),
    ("issue", "view"), ("issue", "list"), ("issue", "status"), ("repo", "view"), ("repo", "list"),
    ("repo", "clone"), ("run", "list"), ("run", "view"), ("run", "watch"), ("run", "download"),
    ("release", "list"), ("release", "view"), ("release", "download"), ("gist", "view"), ("gist", "list"),
    ("gist", "clone"), ("label", "list"), ("workflow", "list"), ("workflow", "view"), ("secret", "list"),
    ("variable", "list"), ("variable", "get"), ("cache", "list"), ("ruleset", "list"), ("ruleset", "view"),
    ("ruleset", "check"), ("project", "list"), ("project", "view"), ("project", "field-list"),
    ("project", "item-list"), ("org", "list"), ("extension", "list"), ("extension", "search"),
    ("extension", "browse"), ("codespace", "list"), ("codespace", "view"), ("attestation", "verify"),
    ("attestation", "download"), ("ssh-key", "list"), ("gpg-key", "list"), ("repo", "deploy-key"), ("repo", "set-default"),
})


def gh_kind(texts: list[str]) -> str:
    """"read" (reads GitHub or acts locally), "human-only" (merges or approves a pull request),
    "install" (an extension: code from a repository), or "change"."""
    words = [t for t in texts if not t.startswith("-")]
    if not words or words[0] in _GH_LOCAL_GROUPS:
        return "read"
    pair = tuple(words[:2])
    if pair == ("pr", "merge") or (pair == ("pr", "review") and any(
            t in ("--approve", "-a") or (t.startswith("-") and not t.startswith("--") and "a" in t) for t in texts)):
        return "human-only"
    if pair in (("extension", "install"), ("extension", "upgrade"), ("ext", "install")):
        return "install"
    if pair in _GH_LOCAL or (pair == ("repo", "deploy-key") and words[2:3] == ["list"]):
        return "read"
    return "change"
