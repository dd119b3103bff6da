"""What zen ships for a new home, as package data: the default policy (guardian.yaml,
autonomy.yaml) and the seed incidents that `zen init` copies in.

They are read with importlib.resources, so an installed wheel carries them and no checkout is
needed. Their human-readable source is the repository's top-level policy/ and incidents/:
zen/data/policy and zen/data/incidents are links to those folders, so the two cannot drift, and
building a wheel copies the files themselves into it.
"""

from __future__ import annotations

import re
import zlib

from zen.errors import DefaultsMissing
from zen.store import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

POLICY_FILES = (layout.GUARDIAN_POLICY, layout.AUTONOMY_POLICY)
_SCHEMA = rb"^zen:\s*(\d+)\s*$"        # the policy's schema version, its `zen:` field


def _folder(name: str) -> Traversable:
    # here: importlib.resources costs 15-40 ms (tempfile, typing, zipfile) and only zen init,
    # zen doctor and --version read the defaults, while every command imports zen.store.home
    from importlib import resources

    return resources.files("zen") / "data" / name


def policy() -> dict[str, bytes]:
    """{file name: content} of the default policy; DefaultsMissing when a file is not there."""
    out: dict[str, bytes] = {}
    for name in POLICY_FILES:
        try:
            out[name] = (_folder(layout.POLICY) / name).read_bytes()
        except OSError:
            raise DefaultsMissing(f"zen's package has no default policy/{name} (a broken install: "
                                  "reinstall zen, e.g. pipx reinstall zen-supervisor)") from None
    return out


def incidents() -> dict[str, bytes]:
    """{file name: content} of the seed incidents; DefaultsMissing when there are none."""
    try:
        found = {f.name: f.read_bytes() for f in _folder(layout.INCIDENTS).iterdir()
                 if f.name.endswith(".yaml") and f.is_file()}
    except OSError:
        found = {}
    if not found:
        raise DefaultsMissing("zen's package has no seed incidents (a broken install: reinstall zen, "
                              "e.g. pipx reinstall zen-supervisor)")
    return dict(sorted(found.items()))


def home_files() -> dict[str, bytes]:
    """Every default as {path inside a home: content}, policy first."""
    out = {f"{layout.POLICY}/{name}": data for name, data in policy().items()}
    out.update({f"{layout.INCIDENTS}/{name}": data for name, data in incidents().items()})
    return out


def policy_version() -> str:
    """The shipped policy's schema (its `zen:` field) and a checksum of its files, e.g.
    'schema 1, crc32 3f2a9c01': the checksum tells two releases' default policies apart."""
    files = policy()
    crc = 0
    schemas = []
    for name, data in files.items():
        crc = zlib.crc32(name.encode() + b"\0" + data + b"\0", crc)
        m = re.search(_SCHEMA, data, re.MULTILINE)
        schemas.append(m.group(1).decode() if m else "?")
    schema = schemas[0] if len(set(schemas)) == 1 else "/".join(schemas)
    return f"schema {schema}, crc32 {crc:08x}"
