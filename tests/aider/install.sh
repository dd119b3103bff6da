#!/usr/bin/env bash
# Install the pinned aider into its own virtualenv under <repo>/.cache/aider/ (git-ignored), so
# its many dependencies never touch zen's .venv; print the path of its `aider` script. Idempotent.
set -euo pipefail

VERSION="${ZEN_AIDER_VERSION:-0.86.2}"
PYTHON="${PYTHON:-python3}"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="$repo/.cache/aider"
venv="$prefix/venv"
bin="$venv/bin/aider"
stamp="$prefix/.installed-$VERSION"

if [ -x "$bin" ] && [ -f "$stamp" ]; then
    echo "$bin"
    exit 0
fi
if ! "$PYTHON" -m venv --help >/dev/null 2>&1; then
    echo "install.sh: $PYTHON has no venv module; cannot install aider-chat==$VERSION" >&2
    exit 1
fi
mkdir -p "$prefix"
rm -rf "$venv"
echo "install.sh: installing aider-chat==$VERSION into $venv" >&2
"$PYTHON" -m venv "$venv"
# (pip's notes about local index folders this machine does not have are dropped)
status=0
"$venv/bin/python" -m pip install -q --disable-pip-version-check "aider-chat==$VERSION" >"$prefix/pip.log" 2>&1 \
    || status=$?
grep -v "^WARNING: Location 'file:" "$prefix/pip.log" >&2 || true
if [ "$status" -ne 0 ]; then
    echo "install.sh: pip install of aider-chat==$VERSION failed (see above)" >&2
    exit 1
fi
if ! "$bin" --version 2>/dev/null | grep -q "$VERSION"; then
    echo "install.sh: $bin --version does not say $VERSION; the install looks broken" >&2
    exit 1
fi
rm -f "$prefix"/.installed-*
touch "$stamp"
echo "$bin"
