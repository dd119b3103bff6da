#!/usr/bin/env bash
# Install the pinned Gemini CLI into <repo>/.cache/gemini-cli/ (git-ignored) if it is not there,
# then print the path of its launcher. Idempotent. Pinned because the suite reads the TUI, hook
# payloads and telemetry whose shapes move between releases.
set -euo pipefail

VERSION="${ZEN_GEMINI_VERSION:-0.61.0}"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="$repo/.cache/gemini-cli"
bin="$prefix/node_modules/.bin/gemini"
stamp="$prefix/.installed-$VERSION"

if [ -x "$bin" ] && [ -f "$stamp" ]; then
    echo "$bin"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: npm is not installed; cannot install @google/gemini-cli@$VERSION" >&2
    echo "install.sh: install Node.js and npm (e.g. apt-get install nodejs npm), then re-run" >&2
    exit 1
fi
mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"name":"zen-gemini-cache","private":true}' >"$prefix/package.json"
echo "install.sh: installing @google/gemini-cli@$VERSION into $prefix" >&2
if ! npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
        --fetch-retries=1 --fetch-timeout=120000 \
        "@google/gemini-cli@$VERSION" >&2; then
    echo "install.sh: npm install of @google/gemini-cli@$VERSION failed (see above)" >&2
    exit 1
fi
if [ ! -x "$bin" ]; then
    echo "install.sh: installed, but no gemini launcher at $bin" >&2
    exit 1
fi
if ! "$bin" --version 2>/dev/null | grep -q "$VERSION"; then
    echo "install.sh: $bin --version does not say $VERSION; the install looks broken" >&2
    exit 1
fi
rm -f "$prefix"/.installed-*
touch "$stamp"
echo "$bin"
