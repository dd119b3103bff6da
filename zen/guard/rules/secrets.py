"""Tools that print credentials: secret managers, password stores, vaults, and the token and
secret commands of cloud and forge CLIs (the guardian's own list, on top of the policy's
`credential_commands`, which env.cred_command checks).

    check(an, name, args)   denies (creds.command) when `name args` prints a stored secret

The subcommand is read past the program's global options and their values (`aws --profile prod
secretsmanager get-secret-value`, `kubectl -n prod get secret db -o yaml`).

Lean on purpose (the hook imports it with the families that call it): stdlib only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.shell.words import Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

# global options that take a value, by program (they may come before the subcommand)
_VALUE_OPTS: dict[str, frozenset[str]] = {
    "aws": frozenset({"--profile", "--region", "--output", "--endpoint-url", "--query", "--ca-bundle",
                      "--cli-read-timeout", "--cli-connect-timeout", "--color", "--cli-binary-format"}),
    "gcloud": frozenset({"--project", "--account", "--configuration", "--format", "--verbosity",
                         "--impersonate-service-account", "--billing-project", "--flags-file", "--trace-token"}),
    "az": frozenset({"--subscription", "--output", "-o", "--query"}),
    "kubectl": frozenset({"-n", "--namespace", "--context", "--cluster", "--kubeconfig", "--user", "-s",
                          "--server", "--token", "-l", "--selector", "-o", "--output", "--as", "--as-group",
                          "--request-timeout", "--field-selector", "--template"}),
    "oc": frozenset({"-n", "--namespace", "--context", "--cluster", "--kubeconfig", "--user", "-s",
                     "--server", "--token", "-l", "--selector", "-o", "--output"}),
    "gh": frozenset({"-R", "--repo"}),
    "glab": frozenset({"-R", "--repo"}),
    "heroku": frozenset({"-a", "--app", "-r", "--remote"}),
    "vault": frozenset({"-address", "-namespace", "-mount", "-field", "-format"}),
    "op": frozenset({"--account", "--session", "--config", "--encoding", "--format", "--cache"}),
    "doppler": frozenset({"-p", "--project", "-c", "--config", "--token", "--scope"}),
    "infisical": frozenset({"--env", "--projectId", "--token", "--domain", "--path"}),
    "bw": frozenset({"--session"}),
}

# program -> (subcommand words, flags of which one must be present; none = always)
_PRINTS: dict[str, tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = {
    "aws": (
        (("secretsmanager", "get-secret-value"), ()), (("secretsmanager", "batch-get-secret-value"), ()),
        (("ssm", "get-parameter"), ("--with-decryption",)), (("ssm", "get-parameters"), ("--with-decryption",)),
        (("ssm", "get-parameters-by-path"), ("--with-decryption",)),
        (("ssm", "get-parameter-history"), ("--with-decryption",)),
        (("sts", "assume-role"), ()), (("sts", "assume-role-with-web-identity"), ()),
        (("sts", "assume-role-with-saml"), ()), (("sts", "get-federation-token"), ()),
        (("sts", "get-session-token"), ()), (("configure", "get"), ()), (("configure", "export-credentials"), ()),
        (("ecr", "get-login-password"), ()), (("ecr", "get-authorization-token"), ()),
        (("ecr-public", "get-login-password"), ()), (("codeartifact", "get-authorization-token"), ()),
        (("iam", "create-access-key"), ()), (("rds", "generate-db-auth-token"), ()), (("eks", "get-token"), ()),
        (("ec2", "get-password-data"), ()), (("lightsail", "get-instance-access-details"), ()),
        (("kms", "decrypt"), ()),
    ),
    "gcloud": (
        (("auth", "print-access-token"), ()), (("auth", "print-identity-token"), ()),
        (("auth", "application-default", "print-access-token"), ()), (("secrets", "versions", "access"), ()),
        (("sql", "generate-login-token"), ()), (("iam", "service-accounts", "keys", "create"), ()),
        (("kms", "decrypt"), ()),
    ),
    "az": (
        (("account", "get-access-token"), ()), (("keyvault", "secret", "show"), ()),
        (("keyvault", "secret", "download"), ()), (("keyvault", "key", "download"), ()),
        (("keyvault", "certificate", "download"), ()), (("storage", "account", "keys", "list"), ()),
        (("storage", "account", "show-connection-string"), ()), (("acr", "login"), ("--expose-token", "-t")),
        (("acr", "credential", "show"), ()), (("ad", "sp", "credential", "reset"), ()),
        (("cosmosdb", "keys", "list"), ()), (("redis", "list-keys"), ()),
        (("aks", "get-credentials"), ("--file",)),
    ),
    "gh": ((("auth", "token"), ()), (("auth", "status"), ("-t", "--show-token"))),
    "glab": ((("auth", "status"), ("-t", "--show-token")), (("auth", "token"), ()), (("config", "get", "token"), ())),
    "bw": ((("get",), ()), (("list", "items"), ()), (("export",), ()), (("serve",), ())),
    "lpass": ((("show",), ()), (("export",), ())),
    "op": ((("read",), ()), (("item", "get"), ()), (("inject",), ()), (("document", "get"), ()),
           (("signin",), ("--raw",))),
    "vault": ((("kv", "get"), ()), (("read",), ()), (("token", "lookup"), ()), (("print", "token"), ()),
              (("token", "create"), ()), (("login",), ()), (("kv", "export"), ())),
    "heroku": ((("auth:token",), ()), (("config",), ()), (("config:get",), ()), (("pg:credentials:url",), ()),
               (("redis:credentials",), ())),
    "doppler": ((("secrets",), ()), (("run",), ("--command",))),
    "infisical": ((("secrets",), ()), (("export",), ())),
    "chamber": ((("read",), ()), (("export",), ()), (("env",), ())),
    "sops": ((("decrypt",), ()), ((), ("-d", "--decrypt"))),
    "keepassxc-cli": ((("show",), ()), (("export",), ()), (("clip",), ())),
    "netlify": ((("env:get",), ()), (("env:list",), ())),
    "railway": ((("variables",), ()),),
    "firebase": ((("functions:config:get",), ()),),
    "rclone": ((("config", "show"), ()), (("config", "dump"), ()), (("config", "reveal"), ())),
    "npm": ((("token", "list"), ()), (("token", "create"), ())),
}
# password stores whose bare `NAME` shows the entry: only these words list or search names
_STORES = {"pass": frozenset({"ls", "list", "find", "search", "init", "help", "version", "git"}),
           "gopass": frozenset({"ls", "list", "find", "search", "init", "help", "version", "git", "setup",
                                "mounts", "recipients", "templates", "config", "sync", "audit", "fsck"})}
_SECRET_KINDS = frozenset({"secret", "secrets"})


def words(name: str, args: list[Word]) -> list[str]:
    """The positional words of `name args`: options and the values of known value options left out."""
    value_opts = _VALUE_OPTS.get(name, frozenset())
    out: list[str] = []
    skip = False
    for a in args:
        t = a.text
        if skip:
            skip = False
            continue
        if t.startswith("-") and len(t) > 1:
            skip = t in value_opts
            continue
        out.append(t)
    return out


def _flag(texts: list[str], flag: str) -> bool:
    return any(t == flag or t.startswith(flag + "=") or (
        len(flag) == 2 and len(t) > 2 and t[0] == "-" and t[1] != "-" and flag[1] in t[1:]) for t in texts)


def check(an: Analyser, name: str, args: list[Word]) -> None:
    """Deny `name args` when it prints a stored credential."""
    if name in ("kubectl", "oc"):
        _kube_secret(an, name, args)
    entries = _PRINTS.get(name)
    stores = _STORES.get(name)
    if entries is None and stores is None:
        return
    posw = words(name, args)
    texts = [a.text for a in args]
    if stores is not None and posw and posw[0] not in stores:
        an.deny("creds.command", f"`{name} {posw[0]}` prints a stored password; credentials never pass "
                "through an agent")
    for prefix, flags in entries or ():
        if tuple(posw[:len(prefix)]) != prefix:
            continue
        if flags and not any(_flag(texts, f) for f in flags):
            continue
        shown = " ".join(prefix) or " ".join(f for f in flags if _flag(texts, f))
        an.deny("creds.command", f"`{name} {shown}` prints credentials; credentials never pass through an "
                "agent (a gate holds them: zen gate)")


def _kube_secret(an: Analyser, name: str, args: list[Word]) -> None:
    """kubectl get secret(s) with an output format that shows the data (yaml, json, jsonpath,
    go-template, ...); `-o name` and `-o wide` show none."""
    posw = words(name, args)
    if posw[:1] != ["get"] or len(posw) < 2:
        return
    kinds = {k.split("/", 1)[0].split(".", 1)[0] for k in posw[1].split(",")}
    if not kinds & _SECRET_KINDS and posw[1] != "all":
        return
    texts = [a.text for a in args]
    fmt: str | None = None
    for k, t in enumerate(texts):
        if t in ("-o", "--output"):
            fmt = texts[k + 1] if k + 1 < len(texts) else ""
        elif t.startswith("--output="):
            fmt = t.split("=", 1)[1]
        elif t.startswith("-o") and not t.startswith("--"):
            fmt = t[2:].lstrip("=")
    if fmt is not None and fmt not in ("name", "wide") and (kinds & _SECRET_KINDS):
        an.deny("creds.command", f"`{name} get secret -o {fmt}` prints secrets' data")
