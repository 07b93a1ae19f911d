#!/usr/bin/env bash
# Install gebench and open the workbench demo on a bundled model.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bash scripts/setup_env.sh lab
exec .venv/bin/gebench demo "$@"
