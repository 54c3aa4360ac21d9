#!/usr/bin/env bash
# The real coding agents the agent tests resume sessions with: Claude Code, Codex, Gemini
# CLI and opencode from the npm registry, at pinned versions, under the target folder.
# Claude Code, Codex and opencode ship a native binary (a per-platform optional dependency);
# Gemini CLI is a node script (node 20 or later), run by the node on PATH.
#
#   bash .ci/agents.sh install [DIR]       # npm install into DIR (default target/agents); a
#                                          # no-op when it holds these pins already
#   bash .ci/agents.sh path claude|codex|gemini|opencode [DIR]
#                                          # print the absolute path of the runnable binary
#
# The tests run them offline, in a sealed HOME, against tests/agent_server.py on loopback.
# Exit 10 means the install is impossible here (no node/npm, or the npm registry unreachable
# and nothing installed): the tests then skip with that reason. Any other failure is a
# failure. npm reads npm_config_registry / npm_config_cache from the environment, for a
# mirror or a cache.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=agents
PINS="@anthropic-ai/claude-code@2.1.328 @openai/codex@0.169.0 @google/gemini-cli@0.61.0 opencode-ai@1.18.33"
action="${1:-install}"
case "$action" in
  path) agent="${2:-}"; dir="${3:-${CARGO_TARGET_DIR:-target}/agents}" ;;
  *) dir="${2:-${CARGO_TARGET_DIR:-target}/agents}" ;;
esac

impossible() { echo "$NAME: cannot install: $1" >&2; exit 10; }

# The binary that runs: node_modules/.bin/claude is the native binary itself (the package's
# postinstall links the platform package's binary over bin/claude.exe); node_modules/.bin/codex
# is a node wrapper that execs the platform package's native binary, so take that binary
# directly (no node at run time, nothing between the test and the agent's process);
# node_modules/.bin/gemini is Gemini CLI's bundle itself (`#!/usr/bin/env node`);
# node_modules/.bin/opencode is the native binary its postinstall linked over bin/opencode.exe
# (the build for this CPU: baseline without AVX2, musl on musl systems), else the platform
# package's own.
binary() {
  local nm="$dir/node_modules" arch found=""
  case "$(uname -m)" in
    x86_64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) arch="$(uname -m)" ;;
  esac
  case "$1" in
    claude)
      found="$(readlink -f "$nm/.bin/claude" 2>/dev/null || true)"
      # Without the postinstall, bin/claude.exe is a stub: the platform package has the binary.
      if [ -z "$found" ] || [ "$(head -c 4 "$found" 2>/dev/null | tail -c 3)" != ELF ]; then
        found="$nm/@anthropic-ai/claude-code-linux-$arch/claude"
        [ -x "$found" ] || found="$nm/@anthropic-ai/claude-code-linux-$arch-musl/claude"
      fi ;;
    codex)
      found="$(find "$nm/@openai/codex-linux-$arch/vendor" -path '*/bin/codex' -type f \
        2>/dev/null | head -n1)" ;;
    gemini)
      found="$(readlink -f "$nm/.bin/gemini" 2>/dev/null || true)" ;;
    opencode)
      found="$(readlink -f "$nm/.bin/opencode" 2>/dev/null || true)"
      if [ -z "$found" ] || [ "$(head -c 4 "$found" 2>/dev/null | tail -c 3)" != ELF ]; then
        found="$nm/opencode-linux-$arch/bin/opencode"
      fi ;;
    *) echo "usage: $0 path claude|codex|gemini|opencode [DIR]" >&2; exit 2 ;;
  esac
  [ -n "$found" ] && [ -x "$found" ] || return 1
  (cd "$(dirname "$found")" && echo "$PWD/$(basename "$found")")
}

installed() {
  [ -f "$dir/pins" ] && [ "$(cat "$dir/pins")" = "$PINS" ] \
    && binary claude >/dev/null && binary codex >/dev/null && binary gemini >/dev/null \
    && binary opencode >/dev/null
}

install() {
  installed && return 0
  command -v node >/dev/null 2>&1 || impossible "no node (Debian: apt-get install nodejs npm)"
  command -v npm >/dev/null 2>&1 || impossible "no npm (Debian: apt-get install npm)"
  # Gemini CLI's engines field; it runs on this node.
  [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] 2>/dev/null \
    || impossible "node $(node --version) is older than the 20 Gemini CLI runs on"
  echo "$NAME: installing $PINS into $dir" >&2
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  local log="$dir.partial/install.log"
  # claude-code's postinstall (install.cjs) swaps its native binary in; its engines field
  # asks for node 22, which only matters for that small script.
  # Shorter retry waits than npm's (10-60 s), so that a machine without the registry learns
  # it in seconds rather than minutes.
  # shellcheck disable=SC2086
  if ! npm install --prefix "$dir.partial" --no-audit --no-fund --no-update-notifier \
       --no-save --engine-strict=false --fetch-retry-mintimeout=2000 \
       --fetch-retry-maxtimeout=10000 $PINS >"$log" 2>&1; then
    cat "$log" >&2
    if ! timeout 30 npm ping --fetch-retries=0 --fetch-timeout=15000 >/dev/null 2>&1; then
      rm -rf "$dir.partial"
      impossible "the npm registry is unreachable and nothing is installed"
    fi
    rm -rf "$dir.partial"
    echo "$NAME: npm install failed (above)" >&2
    exit 1
  fi
  echo "$PINS" > "$dir.partial/pins"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
  for a in claude codex gemini opencode; do
    binary "$a" >/dev/null || { echo "$NAME: no runnable $a binary in $dir" >&2; exit 1; }
  done
}

case "$action" in
  install) install ;;
  path) installed || { echo "$NAME: not installed in $dir (bash $0 install)" >&2; exit 1; }
        binary "$agent" ;;
  *) echo "usage: $0 install [DIR] | path claude|codex|gemini|opencode [DIR]" >&2; exit 2 ;;
esac
