"""The launcher of a wall that forwards endpoints (zen/adapters/sandbox.py): run by the tmux pane as

    python -I -S walllaunch.py SPEC bwrap ARGS...

It starts, outside the wall, one socat per forward (a unix socket in the job's run dir -> host:port),
writes the wall's /etc/hosts, runs bubblewrap, and when bubblewrap ends (or the pane is told to end:
HUP, TERM, INT are passed on) stops the forwarders and exits as bubblewrap did. Standard library only:
it starts with every agent.
"""

import json
import os
import signal
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    command = argv[1:]
    run_dir = spec["run_dir"]
    os.makedirs(run_dir, mode=0o700, exist_ok=True)
    hosts = os.path.join(run_dir, "hosts")
    with open(hosts + ".tmp", "w") as f:
        f.write(spec["hosts"])
    os.replace(hosts + ".tmp", hosts)
    helpers = []
    for host, port, sock in spec["forwards"]:
        try:
            os.unlink(sock)
        except FileNotFoundError:
            pass
        helpers.append(subprocess.Popen(
            [spec["socat"], f"UNIX-LISTEN:{sock},fork,mode=600", f"TCP:{host}:{port}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for _host, _port, sock in spec["forwards"]:   # bubblewrap binds each socket: it must exist first
        for _ in range(250):
            if os.path.exists(sock):
                break
            time.sleep(0.02)
    child = subprocess.Popen(command)

    def pass_on(signum: int, _frame: object) -> None:
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, pass_on)
    try:
        code = child.wait()
    finally:
        for h in helpers:
            h.kill()
            h.wait()
    if code < 0:   # end as bubblewrap ended, so whoever waits on the pane reads the same status
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
