#!/usr/bin/env python3
"""A hook command that records what it was called with: one JSON line per call in $ZEN_HOOK_LOG
({"argv": [...], "payload": {...}}). Exits 0 with no output (allow / carry on)."""

import json
import os
import sys

raw = sys.stdin.read()
try:
    payload = json.loads(raw) if raw.strip() else {}
except ValueError:
    payload = {"unparsed": raw}
line = json.dumps({"argv": sys.argv[1:], "payload": payload}) + "\n"
fd = os.open(os.environ.get("ZEN_HOOK_LOG", "/dev/null"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
try:
    os.write(fd, line.encode())
finally:
    os.close(fd)
