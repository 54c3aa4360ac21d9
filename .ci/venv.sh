# Sourced by the scripts that install a test dependency from PyPI into a venv under the
# target folder (.ci/llama-server.sh, .ci/mcp-client.sh). Before sourcing, set:
#   NAME  the script's name in messages       PINS   the pinned requirements (the venv's key)
#   venv  the venv's folder                   PROBE  a PyPI URL that answers when PyPI does
# and define `pip_steps DIR`, which runs DIR/bin/pip for PINS. `venv_install` then makes the
# venv, or does nothing when it holds PINS already.
#
# Exit 10 means the install is impossible here (no python3 venv, or PyPI unreachable and
# nothing cached): the tests then skip with that reason. Any other failure is a failure.
# pip reads PIP_FIND_LINKS / PIP_INDEX_URL from the environment, for a mirror or a cache.

impossible() { echo "$NAME: cannot install: $1" >&2; exit 10; }

venv_install() {
  if [ -f "$venv/pins" ] && [ "$(cat "$venv/pins")" = "$PINS" ] && [ -x "$venv/bin/python" ]; then
    return 0
  fi
  command -v python3 >/dev/null 2>&1 || impossible "no python3"
  echo "$NAME: installing $PINS into $venv" >&2
  rm -rf "$venv.partial"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv.partial" >/dev/null 2>&1 || { rm -rf "$venv.partial"; impossible "python3 -m venv failed (Debian: apt-get install python3-venv)"; }
  local log="$venv.partial/install.log"
  if ! pip_steps "$venv.partial" >"$log" 2>&1; then
    cat "$log" >&2
    if ! python3 -c "import urllib.request; urllib.request.urlopen('$PROBE', timeout=15)" 2>/dev/null \
       && [ -z "${PIP_FIND_LINKS:-}" ] && [ -z "${PIP_INDEX_URL:-}" ]; then
      rm -rf "$venv.partial"
      impossible "PyPI is unreachable and nothing is cached"
    fi
    rm -rf "$venv.partial"
    echo "$NAME: pip install failed (above)" >&2
    exit 1
  fi
  echo "$PINS" > "$venv.partial/pins"
  rm -rf "$venv"
  mv "$venv.partial" "$venv"
  # A venv's scripts name its folder: moved, only `bin/python` (a symlink) is used.
}
