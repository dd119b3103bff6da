"""Cloud, cluster and infrastructure CLIs: what destroys resources outside the worktree (denied:
a human does that) and what changes them (an action beyond the worktree: denied at suggest,
reported at act-and-report). Reading and planning stay allowed.

    destructive(an, name, args)   for every program of CLOUD_CLIS (net.remote_destructive)

Infrastructure as code is read by its subcommand (`terraform plan -destroy` is a plan, `terraform
apply -destroy` a destroy; terragrunt's `run-all` / `run --all` first); the others by their
subcommand words past global options (`kubectl -n prod delete ns app`), and the flags that make
a sync delete (`aws s3 sync --delete`, `gsutil rsync -d`, `kubectl apply --prune`, `azcopy
--delete-destination`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.rules.secrets import words
from zen.guard.shell.words import Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

CLOUD_CLIS = frozenset({"kubectl", "helm", "terraform", "tofu", "terragrunt", "pulumi", "cdk", "cdktf", "aws",
                        "gcloud", "gsutil", "az", "azcopy", "gh", "glab", "doctl", "flyctl", "fly", "heroku",
                        "vercel", "netlify", "firebase", "supabase", "wrangler", "eksctl", "oc", "linode-cli",
                        "hcloud", "railway", "serverless", "sls"})
DESTROY_WORDS = frozenset({"delete", "destroy", "rm", "rb", "uninstall", "drain", "prune", "purge",
                           "apps:destroy", "remove", "terminate", "deprovision", "teardown"})
_IAC = frozenset({"terraform", "tofu", "terragrunt", "pulumi", "cdk", "cdktf"})
# subcommands of infrastructure as code that change nothing outside the worktree
_IAC_READS = frozenset({"plan", "validate", "init", "fmt", "show", "output", "graph", "providers", "version",
                        "console", "preview", "synth", "diff", "ls", "list", "get", "login", "whoami",
                        "render-json", "hclfmt", "about", "config", "help", "test", "doctor", "metadata",
                        "context", "acknowledge", "notices", "docs"})
_IAC_CHANGES = frozenset({"apply", "up", "update", "deploy", "import", "taint", "untaint", "force-unlock",
                          "refresh", "cancel", "bootstrap", "watch"})


def destructive(an: Analyser, name: str, args: list[Word]) -> None:
    """Deny what destroys cloud, cluster or hosted resources; mark what changes them."""
    if name not in CLOUD_CLIS:
        return
    texts = [a.text for a in args]
    if "--" in texts:
        cut = texts.index("--")
        texts, args = texts[:cut], args[:cut]
    if name in _IAC:
        _iac(an, name, texts, words(name, args))
        return
    posw = words(name, args)
    if posw[:1] in (["exec"], ["run"], ["ssh"], ["logs"], ["api"]):
        return
    for w in posw[:4]:
        if w in DESTROY_WORDS or w.startswith(("delete-", "remove-", "terminate-", "destroy")):
            an.deny("remote.destructive", f"`{name} ... {w}` destroys resources outside the "
                    "worktree; a human does that")
    if _deleting_sync(name, posw, texts):
        an.deny("remote.destructive", f"`{name} {' '.join(posw[:2])}` with its delete flag removes what the "
                "source lacks from the destination, outside the worktree; a human does that")


def _deleting_sync(name: str, posw: list[str], texts: list[str]) -> bool:
    if name == "aws" and posw[:2] == ["s3", "sync"] and "--delete" in texts:
        return any(p.startswith("s3://") for p in posw[-1:])
    if name == "gsutil" and "rsync" in posw[:1] and any(t == "-d" or (t.startswith("-") and not t.startswith("--")
                                                                     and "d" in t) for t in texts):
        return any(p.startswith("gs://") for p in posw[-1:])
    if name == "gcloud" and posw[:2] == ["storage", "rsync"] and "--delete-unmatched-destination-objects" in texts:
        return True
    if name in ("kubectl", "oc") and posw[:1] == ["apply"]:
        return any(t == "--prune" or (t.startswith("--prune=") and t != "--prune=false") for t in texts)
    if name == "azcopy" and posw[:1] == ["sync"]:
        return any(t == "--delete-destination" or (t.startswith("--delete-destination=")
                                                   and t.split("=", 1)[1].lower() != "false") for t in texts)
    return False


def _iac(an: Analyser, name: str, texts: list[str], posw: list[str]) -> None:
    if name == "terragrunt" and posw[:1] in (["run-all"], ["run"]):
        posw = posw[1:]
    sub = posw[0] if posw else ""
    if sub in _IAC_READS:
        return
    if sub == "destroy" or (sub in ("apply", "up") and any(t in ("-destroy", "--destroy") for t in texts)):
        what = f"{name} ... destroy" if sub == "destroy" else f"{name} {sub} -destroy"
        an.deny("remote.destructive", f"`{what}` destroys resources outside the worktree; a human does that")
    if (sub == "state" and posw[1:2] in (["rm"], ["delete"])) or (sub in ("workspace", "stack")
                                                                 and posw[1:2] in (["delete"], ["rm"])):
        an.deny("remote.destructive", f"`{name} {sub} {posw[1]}` removes infrastructure state outside the "
                "worktree; a human does that")
    for w in posw[:4]:
        if w in DESTROY_WORDS:
            an.deny("remote.destructive", f"`{name} ... {w}` destroys resources outside the worktree; a human "
                    "does that")
    if sub in _IAC_CHANGES or (sub == "state" and posw[1:2] in (["mv"], ["push"], ["replace-provider"])):
        an.beyond("report.cloud", f"`{name} {sub}` changes infrastructure outside the worktree")
