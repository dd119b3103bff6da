"""The layout of DESIGN section 15, checked from the real imports (top level and inside functions).

- Layers: a package may import only packages that come before it in the table below (or itself).
- No import cycles between zen's modules, counting imports inside functions too: a cycle hidden
  behind a function-level import is still a cycle.
- The guard hook's import path stays lean: nothing it can reach at import time pulls in the CLI
  framework, rich, pydantic or the tmux/git libraries.
- Size: no module over 600 lines (over 450 in the two crowded halls); no function over 80 lines
  except data tables.
- The two crowded halls (orchestration, guard) have sub-layers of their own (HALLS below): at most
  15 entries at their top, and inside them, too, every import points down the table.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "zen"

# DESIGN section 15, lowest first. `zen.errors` is the error tree every layer shares.
LAYERS = ("core", "store", "adapters", "agents", "guard", "coord", "observe", "orchestration",
          "server", "mcp", "tui", "cli")
SHARED = {"zen", "zen.errors"}
# Side rooms of one level: the API, the team tools and the terminal view never import each other.
PEERS = {"server", "mcp", "tui"}
HOOK_ENTRY = "zen.guard.hook"
HOOK_FORBIDDEN = ("typer", "click", "rich", "pydantic", "libtmux", "git", "watchdog", "fastapi",
                  "uvicorn", "textual", "httpx", "mcp", "ray")
MAX_MODULE_LINES = 600
# Inside the two crowded halls, lowest first: a unit (a room of the hall, or one of its top-level
# modules) may import only the units before it, or itself.
HALLS = {
    "orchestration": ("lanes", "context", "safety", "read", "intake", "remote", "job", "teams", "attach",
                      "alerts", "insight", "loop", "home"),
    "guard": ("api", "shell", "policy", "paths", "scan", "rules", "analyse", "decide", "audit",
              "approvals", "context", "gate", "batch", "resident", "hook"),
}
MAX_HALL_ENTRIES = 15
# and their modules are split by responsibility well before the general cap (issue 34)
MAX_HALL_MODULE_LINES = 450
MAX_FUNCTION_LINES = 80
# Issue 12 found ~220 imports inside functions; at most a quarter of that may stay, each saying why.
MAX_INNER_IMPORTS = 55


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    top: set[str] = field(default_factory=set)        # zen modules imported at module level
    inner: set[str] = field(default_factory=set)      # zen modules imported inside functions
    third_party_top: set[str] = field(default_factory=set)


def _name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, names: list[str], known: set[str]) -> set[str]:
    """`from a.b import c` imports a.b, and a.b.c too when that is a module."""
    out = {module} if module in known else set()
    out |= {f"{module}.{n}" for n in names if f"{module}.{n}" in known}
    if not out:  # a name inside a module we do not know by that exact path: its nearest parent
        parts = module.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        if parts:
            out.add(".".join(parts))
    return out


def _imports(node: ast.AST, mod: Module, known: set[str]) -> Iterator[tuple[str, str, bool]]:
    """(target, kind, is_zen) for every import under `node`; kind is 'top' or 'inner'."""

    def visit(n: ast.AST, inside: bool) -> Iterator[tuple[str, str, bool]]:
        for child in ast.iter_child_nodes(n):
            nested = inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield from _one(alias.name, [], nested)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    pkg = mod.name.split(".")
                    if mod.path.name != "__init__.py":
                        pkg = pkg[:-1]
                    pkg = pkg[: len(pkg) - (child.level - 1)]
                    base = ".".join([*pkg, base] if base else pkg)
                yield from _one(base, [a.name for a in child.names], nested)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                continue  # typing-only imports are not run
            else:
                yield from visit(child, nested)

    def _one(target: str, names: list[str], inside: bool) -> Iterator[tuple[str, str, bool]]:
        kind = "inner" if inside else "top"
        if target == "zen" or target.startswith("zen."):
            for t in _resolve(target, names, known):
                yield t, kind, True
        elif target:
            yield target.split(".", maxsplit=1)[0], kind, False

    yield from visit(node, False)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def load() -> dict[str, Module]:
    paths = sorted(PKG.rglob("*.py"))
    known = {_name(p) for p in paths}
    mods: dict[str, Module] = {}
    for p in paths:
        m = Module(_name(p), p, ast.parse(p.read_text(), filename=str(p)))
        for target, kind, is_zen in _imports(m.tree, m, known):
            if is_zen:
                if target != m.name:
                    (m.top if kind == "top" else m.inner).add(target)
            elif kind == "top":
                m.third_party_top.add(target)
        mods[m.name] = m
    return mods


MODULES = load()


def layer(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_package_of_zen_is_a_room_of_the_layer_table() -> None:
    rooms = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms <= set(LAYERS), sorted(rooms - set(LAYERS))
    assert set(LAYERS) <= rooms, f"rooms missing: {sorted(set(LAYERS) - rooms)}"


def test_dependencies_point_down_the_layer_table() -> None:
    wrong = []
    for m in MODULES.values():
        mine = layer(m.name)
        if mine is None:
            continue
        for target in m.top | m.inner:
            theirs = layer(target)
            if theirs is None or theirs == mine:
                if theirs is None and target not in SHARED and mine != "cli":
                    wrong.append(f"{m.name} -> {target} (a top-level module)")
                continue
            if LAYERS.index(theirs) > LAYERS.index(mine) or (mine in PEERS and theirs in PEERS):
                wrong.append(f"{m.name} ({mine}) -> {target} ({theirs})")
    assert not wrong, "imports against the layer table:\n" + "\n".join(sorted(wrong))


def _unit(hall: str, name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["zen", hall] else None


@pytest.mark.parametrize("hall", sorted(HALLS))
def test_every_entry_of_a_crowded_hall_is_in_its_table(hall: str) -> None:
    here = PKG / hall
    entries = {p.stem for p in here.iterdir()
               if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()}
    assert len(entries) <= MAX_HALL_ENTRIES, f"{hall}/ has {len(entries)} entries at its top: {sorted(entries)}"
    assert entries == set(HALLS[hall]), (sorted(entries - set(HALLS[hall])), sorted(set(HALLS[hall]) - entries))


@pytest.mark.parametrize("hall", sorted(HALLS))
def test_imports_inside_a_crowded_hall_point_down_its_table(hall: str) -> None:
    order = HALLS[hall]
    wrong = []
    for m in MODULES.values():
        mine = _unit(hall, m.name)
        if mine is None:
            continue
        for target in m.top | m.inner:
            theirs = _unit(hall, target)
            if theirs is not None and order.index(theirs) > order.index(mine):
                wrong.append(f"{m.name} ({mine}) -> {target} ({theirs})")
    assert not wrong, f"imports up the {hall} table:\n" + "\n".join(sorted(wrong))


def test_core_does_no_io_and_imports_nothing_outside_core() -> None:
    io_modules = {"os", "subprocess", "socket", "shutil", "tempfile", "pathlib", "io", "fcntl",
                  "sqlite3", "http", "urllib", "requests", "httpx"}
    wrong = []
    for m in MODULES.values():
        if layer(m.name) != "core":
            continue
        wrong += [f"{m.name} imports {t}" for t in m.top | m.inner
                  if layer(t) != "core" and t not in SHARED]
        wrong += [f"{m.name} imports {t}" for t in m.third_party_top if t in io_modules]
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
                wrong.append(f"{m.name}:{node.lineno} calls open()")
    assert not wrong, "\n".join(wrong)


def _cycles() -> list[list[str]]:
    graph = {name: sorted((m.top | m.inner) & MODULES.keys()) for name, m in MODULES.items()}
    # a package's __init__ importing its own submodules is how packages publish names, not a cycle
    graph = {name: [t for t in targets if not t.startswith(name + ".")]
             for name, targets in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    return found


def test_no_import_cycles_counting_imports_inside_functions() -> None:
    cycles = _cycles()
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_guard_hook_reaches_no_heavy_library_at_import_time() -> None:
    # Top-level imports only: a function-level import on the hook path carries a comment and is
    # checked at run time by tests/guard/test_hook.py (python -X importtime of a real hook call).
    seen: set[str] = set()
    todo = [HOOK_ENTRY]
    heavy: dict[str, set[str]] = {}
    while todo:
        name = todo.pop()
        if name in seen or name not in MODULES:
            continue
        seen.add(name)
        m = MODULES[name]
        bad = {t for t in m.third_party_top if t in HOOK_FORBIDDEN}
        if bad:
            heavy[name] = bad
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(2, len(parts))]  # parent packages run too
        todo += sorted(m.top)
    assert not heavy, f"the hook's import path pulls in heavy libraries: {heavy}"
    assert "zen.guard.decide" in seen or any(s.startswith("zen.guard.") for s in seen)


def _is_data_table(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function that only returns (or assigns then returns) one literal container."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    literal = ast.Dict | ast.List | ast.Tuple | ast.Set
    return len(body) <= 2 and all(
        (isinstance(s, ast.Return | ast.Assign | ast.AnnAssign) and isinstance(s.value, literal))
        or (isinstance(s, ast.Return) and isinstance(s.value, ast.Name))
        for s in body)


def test_no_module_over_600_lines() -> None:
    big = {m.name: n for m in MODULES.values()
           if (n := len(m.path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not big, big


@pytest.mark.parametrize("hall", sorted(HALLS))
def test_no_module_of_a_crowded_hall_over_450_lines(hall: str) -> None:
    big = {m.name: n for m in MODULES.values()
           if _unit(hall, m.name) is not None
           and (n := len(m.path.read_text().splitlines())) > MAX_HALL_MODULE_LINES}
    assert not big, f"split these by responsibility (at most {MAX_HALL_MODULE_LINES} lines in {hall}/): {big}"


def test_no_function_over_80_lines_except_data_tables() -> None:
    long = []
    for m in MODULES.values():
        for node in ast.walk(m.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES and not _is_data_table(node):
                    long.append(f"{m.name}.{node.name}: {n} lines")
    assert not long, "\n".join(sorted(long))


def test_imports_inside_functions_say_why() -> None:
    """An import that stays inside a function carries a comment on its line or the line above,
    and few stay (the hook's lean path, an optional extra, a command's own heavy library)."""
    silent = []
    found: set[tuple[str, int]] = set()   # a nested function's import is walked twice: count it once
    for m in MODULES.values():
        lines = m.path.read_text().splitlines()
        for node in ast.walk(m.tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.Import | ast.ImportFrom):
                    found.add((m.name, stmt.lineno))
                    here = lines[stmt.lineno - 1]
                    above = lines[stmt.lineno - 2] if stmt.lineno > 1 else ""
                    if "#" not in here and not above.strip().startswith("#"):
                        silent.append(f"{m.name}:{stmt.lineno}: {here.strip()}")
    assert not silent, "imports inside functions with no comment saying why:\n" + "\n".join(
        sorted(set(silent)))
    assert len(found) <= MAX_INNER_IMPORTS, f"{len(found)} imports inside functions (at most {MAX_INNER_IMPORTS})"


@pytest.mark.parametrize("probe", ["core", "guard"])
def test_the_checker_itself_sees_imports_inside_functions(probe: str, tmp_path: Path) -> None:
    """The parser behind these checks finds an import hidden in a function (so a cycle behind one
    cannot slip through)."""
    src = "def f():\n    from zen.store import home  # why\n    return home\n"
    tree = ast.parse(src)
    m = Module(f"zen.{probe}.x", tmp_path / "x.py", tree)
    found = list(_imports(tree, m, {"zen.store", "zen.store.home"}))
    assert ("zen.store.home", "inner", True) in found


def _docstrings(tree: ast.Module) -> set[int]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def test_every_file_name_of_a_home_and_a_job_is_spelled_only_in_the_layout() -> None:
    """A file name of zen/store/layout.py (task.yaml, pane.log, server.json, ...) appears in no
    other module's code as a literal or a path component (prose in messages may name it)."""
    from zen.store import layout  # the layout under test, read as data

    names = {v for k, v in vars(layout).items() if k.isupper() and isinstance(v, str) and "." in v.strip(".")}
    assert {"task.yaml", "pane.log", "exit_code", "claude-settings.json"} - names <= {"exit_code"}
    spelled = []
    for m in MODULES.values():
        if m.name == "zen.store.layout":
            continue
        docs = _docstrings(m.tree)
        for n in ast.walk(m.tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
                pieces = [n.value] if " " in n.value else n.value.split("/")
                hit = n.value in names or any(p in names for p in pieces)
                if hit:
                    spelled.append(f"{m.name}:{n.lineno}: {n.value!r}")
    assert not spelled, "file names spelled outside zen/store/layout.py:\n" + "\n".join(sorted(spelled))


# -- one error tree (issue 34) ------------------------------------------------------------------
# Exceptions that never reach a user, so they need no kind and no status: each stays beside the
# code that raises and catches it.
INTERNAL_EXCEPTIONS = {
    "Denied": "the analyser's early exit once it has decided (zen.guard.analyse): caught there, the "
              "decision is what leaves",
    "ShellError": "the shell parser's 'cannot analyse this with confidence' (zen.guard.shell.words): "
                  "the guardian turns it into a deny with its rule",
    "Terminated": "the sim agent's SIGTERM, ending its script loop (zen.agents.simagent)",
    "TurnFailed": "a remote turn that cannot run (zen.orchestration.job.remote_turn): caught by the "
                  "turn, reported as remote.finished with its sentence",
    "DemoFailed": "a step of `zen demo` that failed (zen.demo): caught by the demo's main, which says so",
}
ERROR_DOORS = ("zen.server", "zen.cli", "zen.mcp")
KIND = r"[a-z]+(-[a-z]+)*"


def _exception_classes(mods: dict[str, Module]) -> list[tuple[str, int, str]]:
    """(module, line, class name) of every class in zen/ that derives from an exception: a base
    that is a builtin exception, is named like one (...Error, ...Exception), or is such a class."""
    import builtins  # the builtin exception names, read as data

    known = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    classes = [(m.name, n) for m in mods.values() for n in ast.walk(m.tree) if isinstance(n, ast.ClassDef)]

    def base_names(c: ast.ClassDef) -> set[str]:
        return {b.id if isinstance(b, ast.Name) else b.attr for b in c.bases
                if isinstance(b, ast.Name | ast.Attribute)}

    found: set[str] = set()
    while True:
        more = {c.name for _, c in classes if c.name not in found
                and any(b in known or b in found or b.endswith(("Error", "Exception")) for b in base_names(c))}
        if not more:
            return sorted((mod, c.lineno, c.name) for mod, c in classes if c.name in found)
        found |= more


def test_every_exception_of_zen_lives_in_the_error_tree_or_is_internal() -> None:
    found = _exception_classes(MODULES)
    outside = [f"{mod}:{line}: class {name}" for mod, line, name in found
               if mod != "zen.errors" and name not in INTERNAL_EXCEPTIONS]
    assert not outside, ("exception classes outside zen/errors.py (move them into the tree, or list "
                         "them in INTERNAL_EXCEPTIONS with the reason no user meets them):\n" + "\n".join(outside))
    names = {name for _, _, name in found}
    assert set(INTERNAL_EXCEPTIONS) <= names, sorted(set(INTERNAL_EXCEPTIONS) - names)
    assert not [n for mod, _, n in found if mod == "zen.errors" and n in INTERNAL_EXCEPTIONS]


def test_every_error_of_the_tree_has_its_own_kind_and_a_status() -> None:
    import re

    from zen import errors  # the tree under test, read as data

    tree = [c for c in vars(errors).values()
            if isinstance(c, type) and issubclass(c, BaseException) and c.__module__ == errors.__name__]
    assert errors.ZenError in tree and len(tree) >= 30
    wrong = [c.__name__ for c in tree if not issubclass(c, errors.ZenError)
             or not isinstance(vars(c).get("kind"), str) or not re.fullmatch(KIND, c.kind)
             or not isinstance(c.http_status, int) or not 400 <= c.http_status <= 599
             or c.exit_code not in (1, 2, 4)]
    assert not wrong, f"each class needs its own kind (like not-found), an HTTP status and an exit code: {wrong}"
    kinds = [c.kind for c in tree]
    assert len(kinds) == len(set(kinds)), sorted(k for k in kinds if kinds.count(k) > 1)
    # what a user sees stays as it was: the exit codes of DESIGN section 9, the statuses of the API
    assert (errors.ZenError.exit_code, errors.UsageError.exit_code, errors.GuardDenied.exit_code) == (1, 2, 4)
    assert {c.http_status for c in (errors.NotFound, errors.NoHome, errors.ApprovalNotFound, errors.LeaseNotFound)} == {404}
    assert {c.http_status for c in (errors.InvalidTask, errors.UsageError, errors.BadApprovalId)} == {422}
    assert {c.http_status for c in (errors.Conflict, errors.JobBusy, errors.ApprovalError)} == {409}
    assert errors.GuardDenied.http_status == 403 and errors.KillSwitchEngaged.http_status == 423


def _reads_the_message(node: ast.AST, names: set[str], texts: frozenset[str] = frozenset()) -> bool:
    """`str(exc)`, `exc.args` or f"{exc}" (exc one of `names`), or a variable holding one of them
    (`texts`), anywhere under `node`."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in texts:
            return True
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("str", "repr", "format")
                and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id in names):
            return True
        if isinstance(n, ast.Attribute) and n.attr == "args" and isinstance(n.value, ast.Name) and n.value.id in names:
            return True
        if isinstance(n, ast.JoinedStr) and any(isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
                                                and v.value.id in names for v in n.values):
            return True
    return False


def _message_tests(tree: ast.AST) -> list[int]:
    """Lines where an error's message is compared, searched (`in`, startswith, re) or matched:
    the way to pick a status or an exit code by text, not by class."""
    names = {"exc", "e", "err", "error"} | {h.name for h in ast.walk(tree) if isinstance(h, ast.ExceptHandler) and h.name}
    def text_of(value: ast.expr) -> bool:   # str(exc), or str(exc).lower() and the like: the text itself
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            value = value.func.value
        return not isinstance(value, ast.Call) or (isinstance(value.func, ast.Name) and value.func.id == "str")

    texts = frozenset(t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and text_of(n.value)
                      and _reads_the_message(n.value, names) for t in n.targets if isinstance(t, ast.Name))
    def tests_text(n: ast.AST) -> bool:
        if isinstance(n, ast.Compare):   # `text is None` asks whether there is one, not what it says
            return not all(isinstance(op, ast.Is | ast.IsNot) for op in n.ops) and _reads_the_message(n, names, texts)
        if isinstance(n, ast.Match):
            return _reads_the_message(n.subject, names, texts)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr in ("startswith", "endswith", "find", "index", "count", "__contains__"):
                return _reads_the_message(n.func.value, names, texts)
            if n.func.attr in ("match", "search", "fullmatch", "findall"):
                return any(_reads_the_message(a, names, texts) for a in n.args)
        return False

    return [n.lineno for n in ast.walk(tree) if tests_text(n)]


def test_no_door_picks_a_status_or_an_exit_code_by_an_errors_message() -> None:
    wrong = [f"{m.name}:{line}" for m in MODULES.values() if m.name.startswith(ERROR_DOORS)
             for line in _message_tests(m.tree)]
    assert not wrong, "an error's message is inspected (map errors by class, zen/errors.py):\n" + "\n".join(wrong)


@pytest.mark.parametrize(("probe", "caught"), [
    ('if isinstance(exc, E) and str(exc).startswith("no lease"):\n    s = 404', True),
    ('text = "x"\ntry:\n    f()\nexcept E as boom:\n    s = 404 if "no pending" in str(boom) else 409', True),
    ("s = 422 if exc.args[0] == 'bad' else 409", True),
    ('s = 404 if re.search("not found", f"{exc}") else 409', True),
    ('try:\n    f()\nexcept E as exc:\n    raise ZenError(str(exc)) from None', False),
    ('text = str(exc)\ns = 404 if text.startswith("no pending") else 409', True),
    ("s = exc.http_status if isinstance(exc, ZenError) else 500", False),
    ('sentence = str(exc)\nsys.stderr.write(f"zen: {sentence}")', False),
])
def test_the_message_check_itself_sees_text_matching(probe: str, caught: bool) -> None:
    assert bool(_message_tests(ast.parse(probe))) is caught


# The one metrics fold (issue 34): the figures a person is shown — the dashboard's Metrics tab,
# `zen metrics`, `zen status` — come from zen/observe; none of these counts a timeline itself.
METRICS_SHOWN_BY = {"zen.server.figures": "zen.observe.report", "zen.cli.metrics": "zen.observe.report",
                    "zen.orchestration.read.overview": "zen.observe.metrics"}


@pytest.mark.parametrize("shown_by", sorted(METRICS_SHOWN_BY))
def test_the_metrics_a_person_is_shown_come_from_the_one_fold_in_observe(shown_by: str) -> None:
    m = MODULES[shown_by]
    assert METRICS_SHOWN_BY[shown_by] in m.top | m.inner, f"{shown_by} does not read {METRICS_SHOWN_BY[shown_by]}"
    counting = {t for t in m.top | m.inner if t in ("zen.core.events", "zen.store.events", "zen.store.follow")}
    if shown_by != "zen.orchestration.read.overview":      # it also prints the job's timeline
        assert not counting, f"{shown_by} reads timelines itself ({sorted(counting)}): count in zen/observe"
