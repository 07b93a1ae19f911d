#!/usr/bin/env bash
# Install what the workbench's browser test needs from Debian's packages when it is missing:
# chromium (driven by Playwright through executable_path; never `playwright install`) and graphviz.
# Needs root (or sudo). Does nothing when both are present.
set -euo pipefail
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
echo "gebench: installing ${missing[*]} with apt-get" >&2
if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
