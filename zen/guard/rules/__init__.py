"""The guardian's rules, one module per command family, reached through one table.

    handler(name) -> the function that judges program `name` (table.HANDLERS, else fallback)

Families (each a module of plain functions taking the Analyser first, as git.py does):

    fs          rm, mv, cp/install/ln/rsync/scp, truncate, tee, dd, touch/mkdir/patch, chmod
    archive     tar, zip/7z/cpio, unzip
    text        sed, awk, editors and pagers, sort, uniq, yq, grep
    find        find (-delete, -exec), xargs, parallel
    wrappers    shells (-c, scripts, stdin), env, nice/timeout/nohup/..., flock, watch, script,
                eval, source, trap, alias, coproc
    mux         tmux, screen (what they start, what they type into a terminal)
    interp      python, node/deno, ruby, php, perl, other interpreters
    containers  docker/podman, kubectl
    net         curl/wget/httpie, nc/socat/openssl, ssh, gh, destructive cloud CLIs
    db          SQL clients, mongo, redis-cli, dropdb, mysqladmin, framework DB commands
    env         printing the environment and secrets, credential-printing commands
    system      privilege, power, disks, kill/cron/at, umask, shell builtins
    build       make, package runners (npx, uv run, ...), npm
    pkg         package sources of installs (known registries only), publishing a release
    methods     the HTTP method a client sends, gh's subcommands (for zen/guard/scan/hosted.py)
    git         git (subcommands, pushes, config that smuggles commands)
    zen         zen itself: its state-changing commands are never an agent's
    generic     any other program; glab/hub; pip, pipx, gem, cargo, go (with pkg's checks)

The analyser core (zen/guard/analyse.py) gives the handlers their verbs: `an.deny`, `an.need`
(an approval), `an.beyond` (an action past the worktree), `an.ro` (not read-only), the path
checks (`an.delete_word`, `an.write_word`, `an.read_word`), `an.host_check`, and `an.walk` /
`an.leaf` to judge a command a handler finds inside another.

Lean on purpose: a family module is imported the first time a command of that family is judged,
so a hook call loads only the rules its command needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from zen.guard.rules.table import HANDLERS, fallback

if TYPE_CHECKING:
    from zen.guard.analyse import Handler

_BY_NAME: dict[str, Handler] = {}
_BY_REF: dict[str, Handler] = {}


def resolve(ref: str) -> Handler:
    """The function a "family.function" reference names (its module imported on first use)."""
    fn = _BY_REF.get(ref)
    if fn is None:
        family, _, func = ref.partition(".")
        # lean hook path: the family's module loads only when one of its programs is judged
        module = import_module(f"zen.guard.rules.{family}")
        fn = _BY_REF[ref] = getattr(module, func)
    return fn


def load_all() -> None:
    """Import every family now (zen guard check --batch, before it forks its copies: else each
    copy imports them again for itself)."""
    for ref in (*HANDLERS.values(), fallback("x"), fallback("python3"), fallback("mkfs.x")):
        resolve(ref)


def handler(name: str) -> Handler:
    """The rule handler of program `name`."""
    fn = _BY_NAME.get(name)
    if fn is not None:
        return fn
    ref = HANDLERS.get(name)
    if ref is None:
        return resolve(fallback(name))
    fn = _BY_NAME[name] = resolve(ref)
    return fn
