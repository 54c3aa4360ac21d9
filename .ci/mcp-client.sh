#!/usr/bin/env bash
# The real MCP client the `mcp` tests drive `convo mcp` with: the official Python SDK
# (`mcp` on PyPI, pinned), in a venv under the target folder.
#
#   bash .ci/mcp-client.sh install [VENV]   # make VENV (default target/mcp-venv); a no-op
#                                          # when it holds this pin already
#
# Exit 10: the install is impossible here (see .ci/venv.sh); the tests then skip.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=mcp-client
PINS="mcp==2.3.0"
PROBE="https://pypi.org/simple/mcp/"
action="${1:-install}"
venv="${2:-${CARGO_TARGET_DIR:-target}/mcp-venv}"

pip_steps() { "$1/bin/pip" install --disable-pip-version-check -q $PINS; }

# shellcheck source=.ci/venv.sh
. .ci/venv.sh

case "$action" in
  install) venv_install ;;
  *) echo "usage: $0 install [VENV]" >&2; exit 2 ;;
esac
