"""The one error funnel of the command line (DESIGN section 9), for the full CLI (zen/cli/main.py)
and its fast entry (zen/cli/fast.py) alike.

0 ok · 1 expected error with one sentence · 2 usage · 3 bug (traceback in a log file, path
printed) · 4 guardian deny · 130 interrupted. A zen error's exit code is its class's `exit_code`
(zen/errors.py), never read from its message.

Lean: the fast entry imports this module, so it holds no CLI framework.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from pathlib import Path

from zen import __version__
from zen.errors import ZenError, disk_error
from zen.store.home import find_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def run(body: Callable[[], object], home_option: Callable[[], str | None]) -> int:
    """Run one command's `body` and return its exit status: its own int, else 0; a zen error
    prints its sentence and exits with its class's code; anything else goes to `unexpected`.
    `home_option` gives the --home the command was given (read only when something went wrong)."""
    try:
        rv = body()
    except ZenError as exc:
        sys.stderr.write(f"zen: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("zen: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        return unexpected(exc, home_option())
    return rv if isinstance(rv, int) else 0


def unexpected(exc: Exception, home_option: str | None) -> int:
    """An exception no command expected: a disk that is full or failing gets its sentence and 1,
    anything else is a bug (3, its traceback in a crash log)."""
    sentence = disk_error(exc, home_option or os.environ.get("ZEN_HOME") or "the zen home")
    if sentence is None:
        return _crashed(home_option)
    sys.stderr.write(f"zen: {sentence}\n")
    return 1


def _crashed(home_option: str | None) -> int:
    text = f"zen {__version__}\nargv: {sys.argv!r}\n\n{traceback.format_exc()}"
    path = _crash_log(text, home_option)
    if path is None:
        sys.stderr.write(text + "zen: unexpected error (no crash log could be written: the details are above)\n")
    else:
        sys.stderr.write(f"zen: unexpected error; the details are in {path}\n")
    return 3


def _home_logs(home_option: str | None) -> Path | None:
    try:
        return find_home(home_option).logs
    except (ZenError, OSError):  # no home, or the cwd is gone
        return None


def _crash_log(text: str, home_option: str | None) -> Path | None:
    """Write the traceback to the home's logs/ (else the user's state dir, else /tmp); None when
    no place could take it (a full or failing disk): the caller prints it instead."""
    logs = _home_logs(home_option)
    places = [logs] if logs is not None else []
    places += [Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "zen",
               Path(os.environ.get("TMPDIR") or "/tmp")]
    name = f"crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    for directory in places:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / name
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                data = text.encode()
                while data:
                    data = data[os.write(fd, data):]
            finally:
                os.close(fd)
            return path
        except OSError:
            with contextlib.suppress(OSError):
                (directory / name).unlink()  # no half-written log left behind
    return None
