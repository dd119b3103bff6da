#!/usr/bin/env bash
# Install the pinned Claude Code into <repo>/.cache/claude-code/ (git-ignored) if it is not there,
# then print the binary path. Idempotent: a second run does nothing but print the path.
# The version is pinned because the suite scrapes the TUI and reads hook payloads and transcripts
# whose shapes move between releases (see ../shared/reference/real-claude-code.md).
set -euo pipefail

VERSION="${ZEN_CLAUDE_CODE_VERSION:-2.1.332}"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="$repo/.cache/claude-code"
bin="$prefix/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
stamp="$prefix/.installed-$VERSION"

if [ -x "$bin" ] && [ -f "$stamp" ]; then
    echo "$bin"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: npm is not installed; cannot install @anthropic-ai/claude-code@$VERSION" >&2
    echo "install.sh: install Node.js and npm (e.g. apt-get install nodejs npm), then re-run" >&2
    exit 1
fi

mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"name":"zen-claude-code-cache","private":true}' >"$prefix/package.json"
echo "install.sh: installing @anthropic-ai/claude-code@$VERSION into $prefix" >&2
if ! npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
        --fetch-retries=1 --fetch-timeout=60000 \
        "@anthropic-ai/claude-code@$VERSION" >&2; then
    echo "install.sh: npm install of @anthropic-ai/claude-code@$VERSION failed (see above)" >&2
    exit 1
fi
if [ ! -x "$bin" ]; then
    # Some releases ship the binary under a different name; take what the package declares.
    alt="$prefix/node_modules/.bin/claude"
    if [ -x "$alt" ]; then
        bin="$(readlink -f "$alt")"
    else
        echo "install.sh: installed, but no claude binary found under $prefix" >&2
        exit 1
    fi
fi
if ! "$bin" --version >/dev/null 2>&1; then
    echo "install.sh: $bin --version failed; the install looks broken" >&2
    exit 1
fi
rm -f "$prefix"/.installed-*
touch "$stamp"
echo "$bin"
