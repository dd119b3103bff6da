"""zen.store.home and zen.store.layout: making a home (in-process: what init creates, what it never
touches), finding one (and the one sentence for a non-home), and the layout's invariants (every
part under the root, no two parts sharing a name, ids that cannot escape jobs/)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zen.errors import NoHome
from zen.store import layout, readers
from zen.store.config import CACHE_FILE
from zen.store.home import GITIGNORE, find_home, init_home
from zen.store.layout import SUBDIRS, Home, JobPaths, valid_job_id
from zen.store.readers import HomeError, discover_home

# -- init_home ----------------------------------------------------------------------------------------

def test_init_reports_every_folder_and_file_it_made(tmp_path: Path) -> None:
    home, created = init_home(tmp_path / "zh")
    assert created[: len(SUBDIRS)] == [f"{sub}/" for sub in SUBDIRS]
    assert created[len(SUBDIRS)] == "zen.yaml"
    copied = created[len(SUBDIRS) + 1:]
    assert "policy/guardian.yaml" in copied and "policy/autonomy.yaml" in copied
    assert all((home.root / c).exists() for c in created)
    assert all(c.startswith(("policy/", "incidents/")) for c in copied)


def test_a_second_init_creates_nothing_and_changes_nothing(tmp_path: Path) -> None:
    home, _ = init_home(tmp_path / "zh")
    before = {p: p.read_bytes() for p in home.root.rglob("*") if p.is_file() and p.parent != home.logs}
    again, created = init_home(tmp_path / "zh")
    assert created == [] and again == home
    assert {p: p.read_bytes() for p in before} == before


def test_init_restores_a_deleted_part_and_only_that(tmp_path: Path) -> None:
    home, _ = init_home(tmp_path / "zh")
    home.spool_quarantine.rmdir()
    home.guardian_policy.unlink()
    _, created = init_home(home.root)
    assert created == ["spool/quarantine/", "policy/guardian.yaml"]


def test_init_refuses_a_path_that_is_a_file_in_one_sentence(tmp_path: Path) -> None:
    f = tmp_path / "zh"
    f.write_text("not a folder")
    with pytest.raises(NoHome) as exc:
        init_home(f)
    assert str(exc.value) == f"{f} exists and is not a directory"
    assert f.read_text() == "not a folder"


def test_init_keeps_a_users_zen_yaml_and_gitignore(tmp_path: Path) -> None:
    root = tmp_path / "zh"
    root.mkdir()
    (root / "zen.yaml").write_text("zen: 1\n# mine\n")
    (root / ".gitignore").write_text("secrets/\n")
    _, created = init_home(root)
    assert "zen.yaml" not in created
    assert (root / "zen.yaml").read_text() == "zen: 1\n# mine\n"
    assert (root / ".gitignore").read_text() == "secrets/\n"


def test_init_succeeds_over_a_broken_zen_yaml_and_leaves_it_for_the_readers_to_report(tmp_path: Path) -> None:
    root = tmp_path / "zh"
    root.mkdir()
    (root / "zen.yaml").write_text("zen: [unclosed\n")
    home, _ = init_home(root)
    assert home.config_path.read_text() == "zen: [unclosed\n"
    assert not (home.logs / CACHE_FILE).exists()     # no parse was kept for a file that has none


def test_init_leaves_its_parse_for_the_read_commands(tmp_path: Path) -> None:
    home, _ = init_home(tmp_path / "zh")
    assert (home.logs / CACHE_FILE).is_file()


def test_the_gitignore_keeps_runtime_state_out_but_policy_in(tmp_path: Path) -> None:
    home, _ = init_home(tmp_path / "zh")
    ignored = (home.root / ".gitignore").read_text()
    assert ignored == GITIGNORE
    lines = {line for line in ignored.splitlines() if line and not line.startswith("#")}
    assert lines == {"jobs/", "spool/", "worktrees/", "control/", "logs/", "approvals/"}


def test_init_expands_a_tilde_against_home(tmp_path: Path) -> None:
    home, _ = init_home(Path("~/my-zen"))
    assert home.root == Path(os.environ["HOME"]) / "my-zen"
    assert home.config_path.is_file()


def test_a_relative_root_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    home, _ = init_home(Path("rel"))
    assert home.root == tmp_path / "rel"


# -- finding a home ---------------------------------------------------------------------------------

def test_find_home_walks_up_from_the_cwd(tmp_path: Path) -> None:
    home, _ = init_home(tmp_path / "zh")
    deep = home.root / "worktrees" / "j" / "a" / "b"
    deep.mkdir(parents=True)
    assert find_home(cwd=deep) == home


def test_find_home_without_one_says_what_to_do_in_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(NoHome) as exc:
        find_home(cwd=tmp_path)
    msg = str(exc.value)
    assert msg == "no zen home here or above (run zen init DIR, then set ZEN_HOME or cd into it)"


def test_an_explicit_non_home_names_the_flag_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(HomeError) as exc:
        find_home(tmp_path / "nope", cwd=tmp_path)
    assert str(exc.value) == (f"--home points at {tmp_path / 'nope'}, which is not a zen home "
                              f"(run zen init {tmp_path / 'nope'})")


def test_zen_home_naming_a_non_home_is_refused_even_inside_a_home(tmp_path: Path) -> None:
    home, _ = init_home(tmp_path / "zh")
    with pytest.raises(HomeError, match=r"^\$ZEN_HOME points at .* which is not a zen home"):
        discover_home(str(home.root), env={"ZEN_HOME": str(tmp_path / "other")})


def test_an_empty_zen_home_is_ignored(tmp_path: Path) -> None:
    home, _ = init_home(tmp_path / "zh")
    assert discover_home(str(home.root), env={"ZEN_HOME": ""}) == str(home.root)


def test_explicit_paths_expand_a_tilde(tmp_path: Path) -> None:
    home, _ = init_home(Path("~/zh"))
    assert discover_home("/", "~/zh", env={}) == str(home.root)


def test_a_folder_named_zen_yaml_does_not_make_a_home(tmp_path: Path) -> None:
    (tmp_path / "fake" / "zen.yaml").mkdir(parents=True)
    assert not readers.is_home(str(tmp_path / "fake"))
    assert discover_home(str(tmp_path / "fake"), env={}) is None


def test_the_nearest_home_wins_when_homes_nest(tmp_path: Path) -> None:
    outer, _ = init_home(tmp_path / "outer")
    inner, _ = init_home(outer.root / "projects" / "inner")
    assert find_home(cwd=inner.root / "jobs") == inner
    assert find_home(cwd=outer.root / "projects") == outer


# -- the layout ---------------------------------------------------------------------------------------

def _paths_of(obj: object, cls: type) -> dict[str, Path]:
    out = {}
    for name in dir(cls):
        attr = getattr(cls, name)
        if isinstance(attr, property):
            value = getattr(obj, name)
            if isinstance(value, Path):
                out[name] = value
    return out


def test_every_part_of_a_home_is_under_its_root_and_no_two_share_a_path(tmp_path: Path) -> None:
    home = Home(tmp_path / "zh")
    paths = _paths_of(home, Home)
    assert len(paths) > 40
    assert all(p.is_relative_to(home.root) for p in paths.values())
    dupes = {p for p in paths.values() if list(paths.values()).count(p) > 1}
    assert dupes == set(), f"two parts of the home share a file: {dupes}"


def test_every_file_of_a_job_is_in_its_folder_and_no_two_share_a_name(tmp_path: Path) -> None:
    job = JobPaths(tmp_path / "jobs" / "j1")
    paths = _paths_of(job, JobPaths)
    assert len(paths) > 20
    assert all(p.parent == job.dir for p in paths.values())
    names = [p.name for p in paths.values()]
    assert len(names) == len(set(names))


def test_the_lock_files_are_hidden_so_listings_skip_them(tmp_path: Path) -> None:
    job = JobPaths(tmp_path / "j")
    for lock in (job.lock, job.harvest_lock, job.autoharvest_lock, job.control_lock, job.usage_lock,
                 job.metrics_lock, job.recovery_lock):
        assert lock.name.startswith("."), lock


def test_a_home_is_immutable_and_compares_by_root(tmp_path: Path) -> None:
    home = Home(tmp_path)
    with pytest.raises(AttributeError, match="immutable"):
        home.root = Path("/elsewhere")  # type: ignore[misc]
    assert Home(str(tmp_path)) == home and hash(Home(str(tmp_path))) == hash(home)
    assert Home(tmp_path / "x") != home and home != str(tmp_path)
    assert repr(home) == f"Home(root={tmp_path!r})"


def test_each_home_gets_its_own_private_tmux_server(tmp_path: Path) -> None:
    a, b = Home(tmp_path / "a"), Home(tmp_path / "b")
    assert a.tmux_socket != b.tmux_socket
    assert a.tmux_socket == Home(tmp_path / "a").tmux_socket
    assert a.tmux_socket.startswith("zen-") and len(a.tmux_socket) == len("zen-") + 10
    assert a.tmux_socket != "default"


def test_approvals_in_names_only_the_three_states(tmp_path: Path) -> None:
    home = Home(tmp_path)
    assert [home.approvals_in(s).name for s in layout.APPROVAL_STATES] == ["pending", "granted", "denied"]


@pytest.mark.parametrize("job_id, ok", [
    ("20261129T101500Z-fix-1234", True),
    ("ünïcode-ok", True),
    ("", False),
    (None, False),
    ("a/b", False),          # would name a folder inside another job
    ("../control", False),   # would escape jobs/
    (".lock", False),        # would name a hidden file
    (".", False),
    ("..", False),
])
def test_valid_job_id(job_id: str | None, ok: bool) -> None:
    assert valid_job_id(job_id) is ok


def test_the_lean_reader_refuses_ids_that_escape_jobs(tmp_path: Path) -> None:
    assert readers.job_dir(str(tmp_path), "../../etc") is None
    assert readers.job_dir(str(tmp_path), "j1") == str(tmp_path / "jobs" / "j1")
    assert readers.read_state(str(tmp_path), "../x") is None
