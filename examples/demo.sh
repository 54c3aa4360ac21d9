#!/usr/bin/env bash
# convo's main job end to end, on a fresh machine: no config, no network.
# Builds convo, records the bundled example conversation into a throwaway store,
# then lists, reads, compacts and checks it. Set CONVO_DIR to keep the store somewhere else.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --quiet
convo=target/debug/convo
export CONVO_DIR="${CONVO_DIR:-$(mktemp -d)/store}"

run() { printf '\n$ convo %s\n' "$*"; "$convo" --no-pager "$@"; }

run init
run new --title "fix login for long passwords"
# Record it the way an agent would: a turn at a time, each append one commit.
printf '\n$ head -n 8 examples/login-bug.jsonl | convo append\n'
head -n 8 examples/login-bug.jsonl | "$convo" append
printf '\n$ tail -n +9 examples/login-bug.jsonl | convo append\n'
tail -n +9 examples/login-bug.jsonl | "$convo" append
run append --user "Thanks, ship it."
run list
run show --brief
# Compaction never deletes: it appends an overlay and the projection applies it.
run compact --dry-run --keep-last 1
run compact --keep-last 1
run show --compacted --brief
run diff --compacted --stat
run log --oneline
run fsck
printf '\nThe store is a git repository: git -C %s log --stat\n' "$CONVO_DIR"
