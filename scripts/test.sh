#!/usr/bin/env bash
# Install gebench with its test dependencies into .venv, then run the whole test suite.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bash scripts/setup_env.sh dev,torch  # torch: the PyTorch-export test (pinned CPU build, see pyproject.toml)
if [ -f scripts/install_browser_deps.sh ]; then bash scripts/install_browser_deps.sh; fi
.venv/bin/ruff check gebench tests bench passes assets scripts
bash scripts/lint_js.sh  # eslint (from npm, into .venv/npm) over the front-end files
exec .venv/bin/python -m pytest "$@"
