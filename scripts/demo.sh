#!/usr/bin/env bash
# Install gebench and open the workbench demo (the quickstart notebook on a bundled model) in JupyterLab.
# Without a browser on the machine it prints the URL (with its token) to open.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bash scripts/setup_env.sh lab
exec .venv/bin/gebench lab notebooks/01_quickstart.ipynb "$@"
