#!/usr/bin/env bash
# Install the pinned Codex CLI into <repo>/.cache/codex/ (git-ignored) if it is not there, then
# print the native binary's path. Idempotent: a second run does nothing but print the path.
# Pinned because the suite scrapes the TUI and reads hook payloads and rollouts whose shapes move
# between releases (see ../shared/reference/real-codex.md). The npm package pulls a ~424 MB
# platform package; the native binary runs offline.
set -euo pipefail

VERSION="${ZEN_CODEX_VERSION:-0.171.0}"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="$repo/.cache/codex"
stamp="$prefix/.installed-$VERSION"

find_bin() {
    local b
    b="$(ls "$prefix"/node_modules/@openai/codex-linux-*/vendor/*/bin/codex 2>/dev/null | head -n1 || true)"
    if [ -z "$b" ] && [ -x "$prefix/node_modules/.bin/codex" ]; then
        b="$prefix/node_modules/.bin/codex"
    fi
    echo "$b"
}

bin="$(find_bin)"
if [ -n "$bin" ] && [ -x "$bin" ] && [ -f "$stamp" ]; then
    echo "$bin"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: npm is not installed; cannot install @openai/codex@$VERSION" >&2
    echo "install.sh: install Node.js and npm (e.g. apt-get install nodejs npm), then re-run" >&2
    exit 1
fi

mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"name":"zen-codex-cache","private":true}' >"$prefix/package.json"
echo "install.sh: installing @openai/codex@$VERSION into $prefix" >&2
if ! npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
        --fetch-retries=1 --fetch-timeout=120000 \
        "@openai/codex@$VERSION" >&2; then
    echo "install.sh: npm install of @openai/codex@$VERSION failed (see above)" >&2
    exit 1
fi
bin="$(find_bin)"
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "install.sh: installed, but no codex binary found under $prefix" >&2
    exit 1
fi
if ! "$bin" --version 2>/dev/null | grep -q "$VERSION"; then
    echo "install.sh: $bin --version does not say $VERSION; the install looks broken" >&2
    exit 1
fi
rm -f "$prefix"/.installed-*
touch "$stamp"
echo "$bin"
