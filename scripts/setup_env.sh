#!/usr/bin/env bash
# Create .venv and install gebench with the given extras (default: lab).
# Usage: scripts/setup_env.sh [EXTRAS]   e.g. scripts/setup_env.sh dev
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
extras="${1:-lab}"
cd "$here"
if ! command -v dot >/dev/null 2>&1; then
    echo "gebench setup: installing graphviz (dot) with apt-get" >&2
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq graphviz >/dev/null
    else sudo apt-get update -qq && sudo apt-get install -y -qq graphviz >/dev/null; fi
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[${extras}]"
# The checkout also goes on sys.path through a plain .pth entry, so that `import gebench` finds it even from a
# folder holding a clone called gebench: the editable install's own finder runs only after that folder has been
# taken for a namespace package called gebench.
site_packages=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n' "$PWD" > "$site_packages/gebench_checkout.pth"
# pip compiles the modules of the packages it installs, but not those of an editable install: compile gebench's
# once now, so that a process started where PYTHONDONTWRITEBYTECODE is set (these machines) does not compile them
# from source at every start. A module changed later is recompiled as usual (Python checks the source's stamp).
.venv/bin/python -m compileall -q gebench
