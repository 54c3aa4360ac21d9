#!/usr/bin/env bash
# convo's main job end to end, on a fresh machine: no config, no network.
# Builds convo, records the bundled example conversation into a throwaway store,
# then lists, reads, compacts and checks it. Set CONVO_DIR to keep the store somewhere else.
set -euo pipefail
cd "$(dirname "$0")/.."

# The binary is where cargo says it put it: CARGO_TARGET_DIR or a build.target-dir in a
# cargo config moves it away from target/. The first build is long: say so, and let cargo
# show its progress (on stderr; only its JSON goes through the pipe).
if [ ! -x target/debug/convo ]; then
    echo "demo: building convo first: about 6 minutes on 2 cores the first time, then it starts at once" >&2
fi
convo=$(cargo build --bin convo --message-format=json-render-diagnostics |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -x "$convo" ] || { echo "demo: cargo did not report where it built convo" >&2; exit 1; }
export CONVO_DIR="${CONVO_DIR:-$(mktemp -d)/store}"

# Print a command as it would be typed: an argument with spaces or quotes is quoted.
quote() {
    local arg out=()
    for arg in "$@"; do
        if [[ $arg =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then
            out+=("$arg")
        else
            out+=("'${arg//\'/\'\\\'\'}'")
        fi
    done
    printf '%s' "${out[*]}"
}
run() { printf '\n$ convo %s\n' "$(quote "$@")"; "$convo" --no-pager "$@"; }

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
