#!/usr/bin/env bash
# The real MCP client the `mcp` tests drive `convo mcp` with: the official Python SDK
# (`mcp` on PyPI, pinned), in a venv under the target folder.
#
#   bash .ci/mcp-client.sh install [VENV]   # make VENV (default target/mcp-venv); a no-op
#                                          # when it holds this pin already
#
# Exit 10 means the install is impossible here (no python3 venv, or PyPI unreachable and
# nothing cached): the tests then skip with that reason. Any other failure is a failure.
# pip reads PIP_FIND_LINKS / PIP_INDEX_URL from the environment, for a mirror or a cache.
set -euo pipefail
cd "$(dirname "$0")/.."

PINS="mcp==2.3.0"
action="${1:-install}"
venv="${2:-${CARGO_TARGET_DIR:-target}/mcp-venv}"

impossible() { echo "mcp-client: cannot install: $1" >&2; exit 10; }

install() {
  if [ -f "$venv/pins" ] && [ "$(cat "$venv/pins")" = "$PINS" ] && [ -x "$venv/bin/python" ]; then
    return 0
  fi
  command -v python3 >/dev/null 2>&1 || impossible "no python3"
  echo "mcp-client: installing $PINS into $venv" >&2
  rm -rf "$venv.partial"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv.partial" >/dev/null 2>&1 || { rm -rf "$venv.partial"; impossible "python3 -m venv failed (Debian: apt-get install python3-venv)"; }
  local log="$venv.partial/install.log"
  # shellcheck disable=SC2086 # PINS is a list of requirements
  if ! "$venv.partial/bin/pip" install --disable-pip-version-check -q $PINS >"$log" 2>&1; then
    cat "$log" >&2
    if ! python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/mcp/", timeout=15)' 2>/dev/null \
       && [ -z "${PIP_FIND_LINKS:-}" ] && [ -z "${PIP_INDEX_URL:-}" ]; then
      rm -rf "$venv.partial"
      impossible "PyPI is unreachable and nothing is cached"
    fi
    rm -rf "$venv.partial"
    echo "mcp-client: pip install failed (above)" >&2
    exit 1
  fi
  echo "$PINS" > "$venv.partial/pins"
  rm -rf "$venv"
  mv "$venv.partial" "$venv"
}

case "$action" in
  install) install ;;
  *) echo "usage: $0 install [VENV]" >&2; exit 2 ;;
esac
