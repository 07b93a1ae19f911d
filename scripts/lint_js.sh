#!/usr/bin/env bash
# Lint the front-end files shipped in the package (gebench/viz/static/*.js, gebench/sweep/*.js) with eslint.
# eslint comes from npm into .venv/npm (ignored by git, outside the package); eslint.config.mjs holds the rules.
# Usage: scripts/lint_js.sh [eslint args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
prefix=".venv/npm"
eslint="$prefix/node_modules/.bin/eslint"
if ! command -v npm >/dev/null 2>&1; then
    echo "gebench lint: installing node and npm with apt-get" >&2
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
    else sudo apt-get update -qq && sudo apt-get install -y -qq nodejs npm >/dev/null; fi
fi
if [ ! -x "$eslint" ]; then
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --silent "eslint@^9"
fi
exec "$eslint" --max-warnings 0 "$@" gebench
