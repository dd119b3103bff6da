"""git's own commands and the long options of each, as git 2.39 lists them (`git --list-cmds=main`,
`git SUB -h`), and how git reads an abbreviated option: any unique prefix of an option (or of its --no- form) is that option, so
`git reset --har` is --hard and `git push --forc` is --force. (Revision and diff options, e.g.
log's --output=, are read exactly: no prefixes there.) Data and one pure function.
"""

from __future__ import annotations

# every long option of git 2.39's parse-options subcommands (`git SUB -h`), without the leading --:
# git takes any unique prefix of them (and of their --no- forms), so `--har` is --hard
GIT_LONG_OPTIONS: dict[str, tuple[str, ...]] = {
    "reset": ("hard", "intent-to-add", "keep", "merge", "mixed", "no-refresh", "patch",
        "pathspec-file-nul", "pathspec-from-file", "quiet", "recurse-submodules", "soft"),
    "checkout": ("conflict", "detach", "force", "guess", "ignore-other-worktrees",
        "ignore-skip-worktree-bits", "merge", "orphan", "ours", "overlay", "overwrite-ignore", "patch",
        "pathspec-file-nul", "pathspec-from-file", "progress", "quiet", "recurse-submodules", "theirs",
        "track"),
    "restore": ("conflict", "ignore-skip-worktree-bits", "ignore-unmerged", "merge", "ours", "overlay",
        "patch", "pathspec-file-nul", "pathspec-from-file", "progress", "quiet", "recurse-submodules",
        "source", "staged", "theirs", "worktree"),
    "switch": ("conflict", "create", "detach", "discard-changes", "force", "force-create", "guess",
        "ignore-other-worktrees", "merge", "orphan", "overwrite-ignore", "progress", "quiet",
        "recurse-submodules", "track"),
    "clean": ("dry-run", "exclude", "force", "interactive", "quiet"),
    "branch": ("abbrev", "all", "color", "column", "contains", "copy", "create-reflog", "delete",
        "edit-description", "force", "format", "ignore-case", "list", "merged", "move", "no-contains",
        "no-merged", "points-at", "quiet", "recurse-submodules", "remotes", "set-upstream-to",
        "show-current", "sort", "track", "unset-upstream", "verbose"),
    "push": ("all", "atomic", "delete", "dry-run", "exec", "follow-tags", "force", "force-if-includes",
        "force-with-lease", "ipv4", "ipv6", "mirror", "no-verify", "porcelain", "progress", "prune",
        "push-option", "quiet", "receive-pack", "recurse-submodules", "repo", "set-upstream", "signed",
        "tags", "thin", "verbose"),
    "tag": ("annotate", "cleanup", "color", "column", "contains", "create-reflog", "delete", "edit",
        "file", "force", "format", "ignore-case", "list", "local-user", "merged", "message",
        "no-column", "no-contains", "no-merged", "points-at", "sign", "sort", "verify"),
    "gc": ("aggressive", "auto", "cruft", "force", "keep-largest-pack", "prune", "quiet"),
    "worktree": ("checkout", "detach", "expire", "lock", "porcelain", "reason"),
    "rebase": ("abort", "apply", "autosquash", "autostash", "committer-date-is-author-date",
        "continue", "edit-todo", "empty", "exec", "force-rebase", "fork-point", "gpg-sign",
        "ignore-whitespace", "interactive", "keep-base", "merge", "no-ff", "no-stat", "no-verify",
        "onto", "quiet", "quit", "reapply-cherry-picks", "rebase-merges", "rerere-autoupdate",
        "reschedule-failed-exec", "reset-author-date", "root", "show-current-patch", "signoff", "skip",
        "strategy", "strategy-option", "update-refs", "verbose", "whitespace"),
    "clone": ("also-filter-submodules", "bare", "branch", "bundle-uri", "config", "depth",
        "dissociate", "filter", "ipv4", "ipv6", "jobs", "local", "mirror", "no-checkout",
        "no-hardlinks", "no-tags", "origin", "progress", "quiet", "recurse-submodules", "recursive",
        "reference", "reference-if-able", "reject-shallow", "remote-submodules", "separate-git-dir",
        "server-option", "shallow-exclude", "shallow-since", "shallow-submodules", "shared",
        "single-branch", "sparse", "template", "upload-pack", "verbose"),
    "fetch": ("all", "append", "atomic", "auto", "auto-gc", "auto-maintenance", "deepen", "depth",
        "dry-run", "filter", "force", "ipv4", "ipv6", "jobs", "keep", "multiple", "negotiate-only",
        "negotiation-tip", "no-tags", "prefetch", "progress", "prune", "prune-tags", "quiet",
        "recurse-submodules", "refetch", "refmap", "server-option", "set-upstream", "shallow-exclude",
        "shallow-since", "show-forced-updates", "stdin", "tags", "unshallow", "update-head-ok",
        "update-shallow", "upload-pack", "verbose", "write-commit-graph", "write-fetch-head"),
    "pull": ("all", "allow-unrelated-histories", "append", "autostash", "cleanup", "commit", "deepen",
        "depth", "dry-run", "edit", "ff", "ff-only", "force", "gpg-sign", "ipv4", "ipv6", "jobs",
        "keep", "log", "negotiation-tip", "progress", "prune", "quiet", "rebase", "recurse-submodules",
        "refmap", "server-option", "set-upstream", "shallow-exclude", "shallow-since",
        "show-forced-updates", "signoff", "squash", "stat", "strategy", "strategy-option", "tags",
        "unshallow", "update-shallow", "upload-pack", "verbose", "verify", "verify-signatures"),
    "config": ("add", "blob", "bool", "bool-or-int", "bool-or-str", "default", "edit", "expiry-date",
        "file", "fixed-value", "get", "get-all", "get-color", "get-colorbool", "get-regexp",
        "get-urlmatch", "global", "includes", "int", "list", "local", "name-only", "null", "path",
        "remove-section", "rename-section", "replace-all", "show-origin", "show-scope", "system",
        "type", "unset", "unset-all", "worktree"),
    "archive": ("add-file", "add-virtual-file", "exec", "format", "list", "output", "prefix", "remote",
        "verbose", "worktree-attributes"),
    "format-patch": ("add-header", "attach", "base", "cc", "cover-from-description", "cover-letter",
        "creation-factor", "filename-max-length", "force-in-body-from", "from",
        "ignore-if-in-upstream", "in-reply-to", "inline", "interdiff", "keep-subject", "no-binary",
        "no-numbered", "no-stat", "numbered", "numbered-files", "output-directory", "progress",
        "quiet", "range-diff", "reroll-count", "rfc", "signature", "signature-file", "signoff",
        "start-number", "stdout", "subject-prefix", "suffix", "thread", "to", "zero-commit"),
    "difftool": ("dir-diff", "extcmd", "gui", "no-index", "no-prompt", "symlinks", "tool", "tool-help",
        "trust-exit-code"),
    "mergetool": ("gui", "no-gui", "no-prompt", "prompt", "tool", "tool-help"),
    "grep": ("after-context", "all-match", "and", "basic-regexp", "before-context", "break", "cached",
        "color", "column", "context", "count", "exclude-standard", "ext-grep", "extended-regexp",
        "files-with-matches", "files-without-match", "fixed-strings", "full-name", "function-context",
        "heading", "ignore-case", "invert-match", "line-number", "max-count", "max-depth", "name-only",
        "no-index", "not", "null", "only-matching", "open-files-in-pager", "or", "perl-regexp",
        "quiet", "recurse-submodules", "recursive", "show-function", "text", "textconv", "threads",
        "untracked", "word-regexp"),
    "init": ("bare", "initial-branch", "object-format", "quiet", "separate-git-dir", "shared",
        "template"),
    "send-pack": ("all", "atomic", "dry-run", "exec", "force", "force-if-includes", "force-with-lease",
        "helper-status", "mirror", "progress", "push-option", "quiet", "receive-pack", "remote",
        "signed", "stateless-rpc", "stdin", "thin", "verbose"),
    "remote": ("add", "all", "auto", "delete", "dry-run", "mirror", "no-tags", "progress", "prune",
        "push", "tags", "verbose"),
    "stash": ("all", "include-untracked", "index", "keep-index", "message", "only-untracked", "patch",
        "pathspec-file-nul", "pathspec-from-file", "quiet", "staged"),
    "rm": ("cached", "dry-run", "force", "ignore-unmatch", "pathspec-file-nul", "pathspec-from-file",
        "quiet", "sparse"),
    "mv": ("dry-run", "force", "sparse", "verbose"),
    "reflog": ("all", "dry-run", "expire", "expire-unreachable", "rewrite", "single-worktree",
        "stale-fix", "updateref", "verbose"),
    "submodule": ("all", "branch", "cached", "checkout", "default", "files", "filter", "force", "init",
        "merge", "name", "no-fetch", "quiet", "rebase", "recommend-shallow", "recursive", "reference",
        "remote", "single-branch", "summary-limit"),
}

# git 2.39's own commands (`git --list-cmds=main`): an alias of one of these names is ignored by
# git, an alias of any other name runs
GIT_COMMANDS = frozenset({
    "add", "add--interactive", "am", "annotate", "apply", "archive",
    "bisect", "bisect--helper", "blame", "branch", "bugreport", "bundle", "cat-file", "check-attr",
    "check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout--worker",
    "checkout-index", "cherry", "cherry-pick", "clean", "clone", "column", "commit", "commit-graph",
    "commit-tree", "config", "count-objects", "credential", "credential-cache",
    "credential-cache--daemon", "credential-store", "daemon", "describe", "diagnose", "diff",
    "diff-files", "diff-index", "diff-tree", "difftool", "difftool--helper", "env--helper",
    "fast-export", "fast-import", "fetch", "fetch-pack", "filter-branch", "fmt-merge-msg",
    "for-each-ref", "for-each-repo", "format-patch", "fsck", "fsck-objects", "fsmonitor--daemon", "gc",
    "get-tar-commit-id", "grep", "hash-object", "help", "hook", "http-backend", "http-fetch",
    "http-push", "imap-send", "index-pack", "init", "init-db", "instaweb", "interpret-trailers", "log",
    "ls-files", "ls-remote", "ls-tree", "mailinfo", "mailsplit", "maintenance", "merge", "merge-base",
    "merge-file", "merge-index", "merge-octopus", "merge-one-file", "merge-ours", "merge-recursive",
    "merge-recursive-ours", "merge-recursive-theirs", "merge-resolve", "merge-subtree", "merge-tree",
    "mergetool", "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes", "pack-objects",
    "pack-redundant", "pack-refs", "patch-id", "pickaxe", "prune", "prune-packed", "pull", "push",
    "quiltimport", "range-diff", "read-tree", "rebase", "receive-pack", "reflog", "remote",
    "remote-ext", "remote-fd", "remote-ftp", "remote-ftps", "remote-http", "remote-https", "repack",
    "replace", "request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse", "revert", "rm",
    "send-pack", "sh-i18n--envsubst", "shell", "shortlog", "show", "show-branch", "show-index",
    "show-ref", "sparse-checkout", "stage", "stash", "status", "stripspace", "submodule",
    "submodule--helper", "subtree", "switch", "symbolic-ref", "tag", "unpack-file", "unpack-objects",
    "update-index", "update-ref", "update-server-info", "upload-archive", "upload-archive--writer",
    "upload-pack", "var", "verify-commit", "verify-pack", "verify-tag", "version", "web--browse",
    "whatchanged", "worktree", "write-tree"})


def expand(sub: str, flag: str) -> str:
    """`flag` (--name or --name=value) with name completed as git completes it for `sub`."""
    if not flag.startswith("--") or len(flag) <= 2:
        return flag
    name, eq, value = flag[2:].partition("=")
    options = GIT_LONG_OPTIONS.get(sub)
    if not options or name in options:
        return flag
    found = [o for o in options if o.startswith(name)]
    if name.startswith("no-"):
        found += ["no-" + o for o in options if o.startswith(name[3:]) and "no-" + o not in found]
    if len(found) != 1:
        return flag             # ambiguous or unknown: git refuses it
    return f"--{found[0]}{eq}{value}"
