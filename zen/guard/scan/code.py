"""What code handed to JS/Ruby/Perl/PHP would do, and the commands inside sed scripts.

The languages other than Python are scanned with patterns: a dangerous call (a shell or argv
call, a delete, a write) with a plain string literal argument is judged like the command or
path it names; one whose argument is not a plain literal is denied. Every finding goes through
the analyser's callbacks (`an`). Python has its own parser-based scanner (scan/python.py), databases
theirs (scan/sql.py).

Lean on purpose: imported by the hook (stdlib only).
"""

from __future__ import annotations

import re
from typing import Any

from zen.guard.scan.hosted import mutating_call
from zen.guard.scan.sql import destructive_orm, destructive_sql
from zen.guard.shell.urls import URL_IN_TEXT, looks_host
from zen.guard.shell.words import is_secret_name

_STR = r"""(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|`((?:[^`\\$]|\\.|\$(?!\{))*)`)"""
_LITERAL_ARG = re.compile(r"\s*\(?\s*" + _STR)
_ANY_STR = re.compile(_STR)

_LANG_PATTERNS: dict[str, dict[str, tuple[str, ...]]] = {
    "js": {
        "shell": (r"\bexecSync", r"\bexec", r"\bspawnSync\s*\(\s*['\"`](?:sh|bash)['\"`]", r"\$\s*`"),
        "argv": (r"\bspawnSync", r"\bspawn", r"\bexecFileSync", r"\bexecFile", r"\bfork", r"Bun\.spawn", r"Deno\.Command", r"Deno\.run"),
        "delete": (r"\brmSync", r"\brmdirSync", r"\bunlinkSync", r"\bfs\.rm", r"\bfs\.rmdir", r"\bfs\.unlink",
                   r"\bfsp?\.promises\.rm", r"\brimraf(?:\.sync)?", r"\bremoveSync", r"\bemptyDirSync", r"\bDeno\.remove"),
        "write": (r"\bwriteFileSync", r"\bwriteFile", r"\bappendFileSync", r"\bappendFile", r"\bcreateWriteStream",
                  r"\brenameSync", r"\bchmodSync", r"\bchmod", r"\bcopyFileSync", r"\bcpSync", r"\bsymlinkSync",
                  r"\btruncateSync", r"\blinkSync", r"\bDeno\.link", r"\bDeno\.symlink", r"\bDeno\.writeTextFile", r"\bBun\.write", r"\bmkdirSync"),
        "read": (r"\breadFileSync", r"\breadFile", r"\bcreateReadStream", r"\breaddirSync", r"\bDeno\.readTextFile", r"\bBun\.file"),
        "eval": (r"\beval\s*\(", r"\bnew\s+Function\b", r"\bvm\.run", r"\bFunction\s*\("),
        "decode": (r"base64", r"\batob\s*\(", r"fromCharCode"),
        # 'X' in process.env asks whether it is set: presence only
        "env": (r"(?<!\bin )process\.env(?!\s*(?:\.|\[))", r"Deno\.env\.toObject", r"Bun\.env(?!\s*(?:\.|\[))"),
        "net": (r"\bfetch\s*\(", r"\bhttps?\.(?:get|request)\s*\(", r"\baxios", r"\bgot\s*\(", r"\bXMLHttpRequest", r"\bWebSocket"),
    },
    "ruby": {
        "shell": (r"\bsystem", r"\bexec", r"%x", r"\bIO\.popen", r"\bOpen3\.\w+", r"\bspawn", r"`",
                  r"\bsh(?=[ \t]*\(?[ \t]*['\"])"),     # rake's sh 'cmd'

        "argv": (),
        "delete": (r"\bFileUtils\.rm\w*", r"\bFileUtils\.remove\w*", r"\bFile\.delete", r"\bFile\.unlink", r"\bDir\.rmdir", r"\bDir\.delete", r"\bPathname\.new\([^)]*\)\.(?:rmtree|unlink|delete)"),
        "write": (r"\bFile\.write", r"\bIO\.write", r"\bFile\.open\s*\([^)]*['\"][wa]", r"\bFileUtils\.(?:mv|cp\w*|chmod\w*|ln\w*|touch|mkdir\w*)", r"\bFile\.rename", r"\bFile\.chmod", r"\bFile\.symlink", r"\bFile\.link"),
        "read": (r"\bFile\.read", r"\bIO\.read", r"\bFile\.readlines", r"\bFile\.open"),
        "eval": (r"\beval\b", r"\binstance_eval\b", r"\bclass_eval\b", r"\bBinding\b"),
        "decode": (r"Base64", r"\.unpack\(\s*['\"]m"),
        "env": (r"\bENV\.(?:to_h|to_a|inspect|each|map|select|keys|values)\b", r"\b(?:p|pp|puts|print)\s*\(?\s*ENV\b(?!\s*\[)"),
        "net": (r"\bNet::HTTP", r"\bURI\.open", r"\bopen-uri", r"\bHTTParty", r"\bFaraday", r"\bRestClient"),
    },
    "perl": {
        "shell": (r"\bsystem", r"\bexec", r"`", r"\bqx", r"\bopen\s*\(?\s*\w*\s*,?\s*['\"]\s*\|", r"\bopen\s*\([^)]*\|\s*['\"]"),
        "argv": (),
        "delete": (r"\bunlink", r"\brmtree", r"\bremove_tree", r"\brmdir"),
        "write": (r"\bopen\s*\([^)]*['\"]\s*(?:>|\+<)", r"\bopen\s*\(\s*\w+\s*,\s*['\"](?:>|>>|\+<)", r"\brename", r"\bchmod", r"\bsymlink", r"\blink\b", r"\btruncate", r"\bmkdir", r"\bmake_path", r"\bcopy", r"\bmove"),
        "read": (r"\bopen",),
        "eval": (r"\beval\b",),
        "decode": (r"decode_base64", r"MIME::Base64", r"\bpack\s*\(", r"\bunpack\s*\("),
        "env": (r"%ENV\b", r"\bkeys\s+%ENV"),
        "net": (r"LWP::", r"HTTP::Tiny", r"IO::Socket", r"Net::HTTP", r"\bcurl\b"),
    },
    "php": {
        "shell": (r"\bsystem", r"\bexec", r"\bshell_exec", r"\bpassthru", r"\bpopen", r"\bproc_open", r"`", r"\bpcntl_exec"),
        "argv": (),
        "delete": (r"\bunlink", r"\brmdir"),
        "write": (r"\bfile_put_contents", r"\bfopen\s*\([^)]*['\"][wax+]", r"\brename", r"\bchmod", r"\bsymlink", r"\blink\s*\(", r"\bcopy", r"\bmkdir", r"\btouch"),
        "read": (r"\bfile_get_contents", r"\bfopen", r"\breadfile", r"\bfile\s*\("),
        "eval": (r"\beval\s*\(", r"\bcreate_function", r"\bassert\s*\(", r"\bpreg_replace\s*\([^)]*/e"),
        "decode": (r"base64_decode", r"\bstr_rot13", r"\bgzinflate", r"\bhex2bin"),
        "env": (r"\bgetenv\s*\(\s*\)", r"\$_ENV\b", r"\$_SERVER\b", r"\bphpinfo\s*\("),
        "net": (r"\bcurl_init", r"\bfsockopen", r"\bstream_socket_client", r"\bfile_get_contents\s*\(\s*['\"]https?:"),
    },
}
# a request that may change what it reaches (the hosted API rule, zen/guard/scan/hosted.py): a
# method that is not a plain GET, a client's post/put/patch/delete, a body
_MUTATING = {
    "js": re.compile(r"""(?i)\bmethod\s*:\s*(?!['"`](?:get|head|options)['"`])|\.(?:post|put|patch|delete|del)\s*\("""
                     r"""|\bbody\s*:"""),
    "ruby": re.compile(r"(?i)Net::HTTP::(?:Post|Put|Patch|Delete)|\.(?:post|put|patch|delete|send_request)\b"
                       r"|\bmethod:\s*(?!:get\b|:head\b|['\"]get['\"])"),
    "perl": re.compile(r"""(?i)->\s*(?:post|put|patch|delete|request)\b|HTTP::Request->new\s*\(\s*(?!['"]?(?:GET|HEAD)\b)"""
                       r"""|\b(?:POST|PUT|PATCH|DELETE)\s*\("""),
    "php": re.compile(r"""(?i)CURLOPT_(?:POST|CUSTOMREQUEST|PUT|UPLOAD|POSTFIELDS)|['"]method['"]\s*=>\s*(?!['"](?:GET|HEAD)['"])"""),
}
# code loaded or called by a name only known at run time (the module, method or function is
# computed): opaque, as eval is
_DYNAMIC = {
    "js": re.compile(r"""\brequire\s*\(\s*(?!['"][^'"]*['"]\s*\)|`[^`$]*`\s*\))|\bimport\s*\(\s*(?!['"][^'"]*['"]\s*\))"""
                     r"|\bprocess\s*\.\s*(?:binding|_linkedBinding|dlopen|mainModule)\b|\bmodule\s*\.\s*constructor\b"
                     r"|\bModule\s*\.\s*_load\b|\brequire\s*\.\s*cache\b|\b(?:globalThis|global|window|self)\s*\["
                     r"|\bconstructor\s*\.\s*constructor\b|\bReflect\s*\.\s*(?:apply|get)\b"),
    "ruby": re.compile(r"""\b(?:send|public_send|__send__|const_get|instance_variable_get|method|define_method)"""
                       r"""(?:\s*\(\s*|[ \t]+)(?!(?::\w+[?!=]?|'[\w?!=]+'|"[\w?!=]+")\s*(?:[,)\n;]|$))"""
                       r"""|\b(?:require|require_relative|load)(?:\s*\(\s*|[ \t]+)(?!['"])"""
                       r"|\bFiddle\b|\bObjectSpace\b"),
    "perl": re.compile(r"&\s*\$|&\s*\{|->\s*\$\w+|\brequire\s+\$|\bdo\s*\(?\s*\$|\bUNIVERSAL::can\b|->\s*can\s*\("
                       r"|\bno\s+strict\b|\*\{|\bDynaLoader\b|\bXSLoader\b"),
    "php": re.compile(r"(?<![\w>:])\$\w+\s*\(|\bcall_user_func(?:_array)?\b|\$\{|\bdl\s*\(|\bFFI::"),
}
# the user's home inside a string: a path below it is read for its credentials
_HOME_IN = {
    "js": re.compile(r"\bhomedir\s*\(\s*\)|process\.env\.HOME\b|process\.env\[\s*['\"]HOME['\"]\s*\]"),
    "ruby": re.compile(r"\bDir\.home\b|\bENV\[\s*['\"]HOME['\"]\s*\]|\bDir\.home\b"),
    "perl": re.compile(r"\$ENV\{\s*['\"]?HOME['\"]?\s*\}|\bFile::HomeDir\b|\bgetpwuid\b"),
    "php": re.compile(r"getenv\s*\(\s*['\"]HOME['\"]|\$_SERVER\s*\[\s*['\"]HOME['\"]|posix_getpwuid"),
}
_COMPILED: dict[str, dict[str, list[re.Pattern[str]]]] = {}
# reads of one environment variable: group 1 (or 2) is its name when it is a literal, else the
# read names its variable at run time
_ENV_READ = {
    "js": re.compile(r"process\.env\s*(?:\.\s*(\w+)|\[\s*(?:['\"`](\w+)['\"`])?)|Deno\.env\.get\(\s*(?:['\"](\w+))?"
                     r"|Bun\.env\s*(?:\.\s*(\w+)|\[\s*(?:['\"`](\w+)['\"`])?)"),
    "ruby": re.compile(r"\bENV\s*(?:\[\s*(?:['\"](\w+)['\"])?|\.fetch\s*\(\s*(?:['\"](\w+))?)"),
    "perl": re.compile(r"\$ENV\s*\{\s*(?:['\"]?(\w+)['\"]?\s*\})?"),
    "php": re.compile(r"\bgetenv\s*\(\s*(?:['\"](\w+)|(?=[^)\s]))|\$_(?:ENV|SERVER)\s*\[\s*(?:['\"](\w+))?"),
}


# the modules code loads: require("x"), import ... from "x", import("x"); require "x"; use X;
# PHP's \\Vendor\\ namespaces
_IMPORTS = {
    "js": re.compile(r"""\brequire\s*\(\s*['"`]([^'"`]+)['"`]|\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"`]([^'"`]+)"""
                     r"""|\bimport\s+['"]([^'"]+)['"]"""),
    "ruby": re.compile(r"""\brequire(?:_relative)?\s*\(?\s*['"]([^'"]+)['"]|\b(Stripe|Twilio|SendGrid|Braintree|Mailgun|"""
                       r"""Postmark|Vonage|Plivo|Telnyx|Razorpay|Mollie|Intercom|ZendeskAPI|Aws::SES|Aws::SNS)::"""),
    "perl": re.compile(r"\buse\s+([\w:]+)"),
    "php": re.compile(r"\\?\b([A-Z]\w+)\\\w"),
}


def env_names(an: Any, lang: str, code: str, where: str) -> None:
    """Code that reads a secret-looking environment variable, or one named at run time, is denied
    (reading HOME or PATH is fine)."""
    pattern = _ENV_READ.get(lang)
    if pattern is None:
        return
    for m in pattern.finditer(code):
        name = next((g for g in m.groups() if g), None)
        if name is None:
            an.deny("creds.env-dump", f"{where}: reads an environment variable named at run time")
        elif is_secret_name(name):
            an.deny("creds.secret-echo", f"{where}: reads the secret-looking variable {name}")
_SCRIPT_SQL = re.compile(r"\.(?:query|execute|exec|raw|run|all|prepare|unsafe|sql|executeQuery|"
                         r"executeUpdate|queryRaw|executeRaw|\$queryRawUnsafe|\$executeRawUnsafe|"
                         r"\$executeRaw|\$queryRaw)\b")


def _patterns(lang: str) -> dict[str, list[re.Pattern[str]]]:
    got = _COMPILED.get(lang)
    if got is None:
        # a name must end where the pattern does: \bwriteFile is not the start of writeFileSync
        got = {k: [re.compile(p + r"(?![\w$])" if p[-1:].isalnum() else p) for p in v]
               for k, v in _LANG_PATTERNS[lang].items()}
        _COMPILED[lang] = got
    return got


def _literal_after(code: str, end: int) -> str | None:
    m = _LITERAL_ARG.match(code, end)
    if not m:
        return None
    return next((g for g in m.groups() if g is not None), None)


def scan_script(an: Any, lang: str, code: str, where: str) -> None:
    """Pattern scan of JS/Ruby/Perl/PHP code; deny when a dangerous call's argument is not a
    plain literal the guardian can check."""
    pats = _patterns(lang)
    mutating = _MUTATING[lang].search(code) is not None
    for m in _ANY_STR.finditer(code):
        text = next((g for g in m.groups() if g is not None), "")
        an.literal(text, where)
        if mutating and "://" in text:
            for u in URL_IN_TEXT.finditer(text):
                mutating_call(an, u.group(0), None, where)
        elif mutating and looks_host(text):       # {hostname: 'api.github.com', method: ...}
            mutating_call(an, "https://" + text, None, where)
    if any(p.search(code) for p in pats["eval"]):
        an.deny("opaque.exec", f"{where}: eval of generated code cannot be checked")
        return
    dyn = _DYNAMIC[lang].search(code)
    if dyn:
        an.deny("opaque.exec", f"{where}: {dyn.group(0).strip()}... loads or calls code by a name only known "
                "at run time")
    _home_paths(an, lang, code, where)
    for p in pats["env"]:
        if p.search(code):
            an.deny("creds.env-dump", f"{where}: dumps the environment")
            return
    env_names(an, lang, code, where)
    for m in _IMPORTS[lang].finditer(code):
        an.sdk(lang, next(g for g in m.groups() if g), where)
    orm = destructive_orm(code)
    if orm:
        an.deny("sql.destructive", f"{where}: {orm} empties or drops tables")
    for m in _SCRIPT_SQL.finditer(code):
        value = _literal_after(code, m.end())
        if value is not None:
            bad = destructive_sql(value)
            if bad:
                an.deny("sql.destructive", f"{where}: destructive SQL ({bad})")
    for kind in ("shell", "argv", "delete", "write", "read"):
        for p in pats[kind]:
            for m in p.finditer(code):
                if kind == "shell" and m.group(0) in ("`", "%x"):
                    body = _backtick_body(code, m.start(), m.group(0))
                    if body is None:
                        an.deny("shell.unresolved", f"{where}: runs a command the guardian cannot resolve")
                    else:
                        an.shell_string(body, where)
                    continue
                if kind == "shell" and m.group(0).startswith("$"):
                    body = _backtick_body(code, m.end() - 1, "`")
                    if body is None:
                        an.deny("shell.unresolved", f"{where}: runs a command the guardian cannot resolve")
                    else:
                        an.shell_string(body, where)
                    continue
                value = _literal_after(code, m.end())
                if value is None and lang == "perl" and kind == "delete":   # unlink glob "build/*.tmp"
                    g = re.compile(r"\s*\(?\s*glob\s*").match(code, m.end())
                    value = _literal_after(code, g.end()) if g else None
                if kind == "read":
                    if value is not None:
                        an.py_path(value, "read", where)
                    continue
                if value is None or "#{" in value or ("$" in value and lang in ("perl", "php")):
                    an.deny("shell.unresolved" if kind in ("shell", "argv") else "fs.unresolved-target",
                            f"{where}: {m.group(0).strip()}(...) takes an argument the guardian cannot resolve")
                    continue
                if kind == "shell":
                    rest = _string_args(code, m.end())
                    an.shell_string(" ".join(rest) if len(rest) > 1 else value, where)
                elif kind == "argv":
                    an.argv([value, *_array_after(code, m.end())], where)
                else:
                    an.py_path(value, kind, where)


def _home_paths(an: Any, lang: str, code: str, where: str) -> None:
    """Code that builds paths from the user's home (os.homedir() + '/.aws/credentials',
    "$ENV{HOME}/.netrc", path.join(homedir(), '.aws', 'credentials')): every string, and every two
    strings in a row, read as a path below the home (the credential store rules)."""
    home = getattr(an, "user_home", None)
    if not home or not _HOME_IN[lang].search(code):
        return
    texts = [next((g for g in m.groups() if g is not None), "") for m in _ANY_STR.finditer(code)]
    texts += re.findall(r"`([^`]*)`", code) if lang == "js" else []       # template literals, ${...} and all
    texts = [re.sub(r"\$ENV\{\s*['\"]?HOME['\"]?\s*\}|\$\{[^}]*homedir[^}]*\}|#\{[^}]*(?:Dir\.home|HOME)[^}]*\}", "",
                    t) for t in texts]
    for i, t in enumerate(texts):
        for cand in (t, t.rstrip("/") + "/" + texts[i + 1].lstrip("/") if i + 1 < len(texts) else ""):
            cand = cand.strip()
            if (cand and not cand.startswith(("/", "~")) and re.fullmatch(r"[\w./-]+", cand)) or cand.startswith("/."):
                an.py_path(home + "/" + cand.lstrip("/"), "read", where)


def _string_args(code: str, start: int) -> list[str]:
    """Literal arguments of a call like system("rm", "-rf", "x") (stops at the first non-literal)."""
    out = []
    m = re.compile(r"\s*\(?\s*").match(code, start)
    pos = m.end() if m else start
    while True:
        m2 = _ANY_STR.match(code, pos)
        if not m2:
            break
        out.append(next((g for g in m2.groups() if g is not None), ""))
        m3 = re.compile(r"\s*,\s*").match(code, m2.end())
        if not m3:
            break
        pos = m3.end()
    return out


def _array_after(code: str, start: int) -> list[str]:
    m = re.compile(r"\s*\(?\s*" + _STR + r"\s*,\s*\[([^\]]*)\]").match(code, start)
    if not m:
        return []
    return [next((g for g in s.groups() if g is not None), "") for s in _ANY_STR.finditer(m.group(4))]


def _backtick_body(code: str, start: int, opener: str) -> str | None:
    if opener == "%x":
        if start + 2 >= len(code):
            return None
        o = code[start + 2]
        c = {"(": ")", "{": "}", "[": "]", "<": ">"}.get(o, o)
        end = code.find(c, start + 3)
        body = code[start + 3:end] if end > 0 else None
    else:
        end = code.find("`", start + 1)
        body = code[start + 1:end] if end > 0 else None
    if body is None or "#{" in body or "${" in body:
        return None
    return body


# ---------------------------------------------------------------------------------------------
# sed and awk programs

def sed_commands(script: str) -> list[tuple[str, str]]:
    """(command letter, argument) of each command in a sed script, addresses skipped."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        if c.isdigit() or c in "$,~+":   # addresses
            i += 1
            continue
        if c in "/\\":                  # /regex/ address (\cREGEXc too)
            delim = script[i + 1] if c == "\\" and i + 1 < n else "/"
            j = i + (2 if c == "\\" else 1)
            while j < n and script[j] != delim:
                j += 2 if script[j] == "\\" else 1
            i = j + 1
            while i < n and script[i] in "IM":
                i += 1
            continue
        if c in "sy":
            if i + 1 >= n:
                out.append((c, ""))
                break
            delim = script[i + 1]
            j, parts = i + 2, 0
            while j < n and parts < 2:
                if script[j] == "\\":
                    j += 2
                    continue
                if script[j] == delim:
                    parts += 1
                j += 1
            k = j
            while k < n and script[k] not in ";\n}":
                k += 1
            out.append((c, script[j:k]))   # the flags (and a w FILE) of s///
            i = k
            continue
        if c in "aicrRwWe:bTtlqQvF=dDgGhHnNpPxz#":
            k = i + 1
            while k < n and script[k] != "\n" and (c in "aicrRwWe:bTtv#" or script[k] not in ";}"):
                k += 1
            out.append((c, script[i + 1:k].strip()))
            i = k
            continue
        i += 1
    return out
