#!/usr/bin/env python3
"""What durability costs (issue 42): `store.fsync = "committed"` against `"none"`, and against
git with the same guarantee, in the same run.

How to run (from the repository root)::

    cargo build --release && python3 benches/fsync.py            # target/release/convo
    python3 benches/fsync.py target/debug/convo                  # another binary
    python3 benches/fsync.py --rounds 7 --ops 16 --events 4000

Python 3.11, stdlib only; everything in a fresh directory under /tmp with HOME pointing into
it and no user or system git config.  Three sides, alternating by round, each a `sh` loop of
--ops operations (so Python's own process start stays out), the median of --rounds rounds:

1. Append latency: one `convo append --user TEXT` (a ~1 KB turn) into a conversation of 100
   turns, with store.fsync = "committed" (the default), then "none" (set in the user file).
2. Anchor: git with the same guarantee, `git -c core.fsync=committed -c
   core.fsyncMethod=batch`, appending the same text to a file and running `add` then
   `commit` (two processes, timed together) in a repository of the same history.
3. A bulk import: `convo import` of a --events-event session (convo's own JSONL export) into
   a fresh store, committed against none.

Ratios printed: committed / none for both (goals: at most 1.5 for an append, 1.2 for an
import), and committed convo / durable git for an append, for information.  Timings are wall
clock; the machine's load moves both sides of a round alike.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("convo", nargs="?", default="target/release/convo")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ops", type=int, default=8)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    convo = os.path.abspath(args.convo)
    root = tempfile.mkdtemp(prefix="convo-fsync-")
    home = os.path.join(root, "home")
    os.makedirs(os.path.join(home, ".config/convo"))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_DATA_HOME": os.path.join(home, ".local/share"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x",
        "CONVO": convo,
    }
    user_file = os.path.join(home, ".config/convo/config.toml")

    def fsync(mode):
        with open(user_file, "w") as f:
            f.write(f'[store]\nfsync = "{mode}"\n')

    def run(cmd, **kw):
        return subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, **kw)

    text = "lorem ipsum dolor sit amet " * 38
    store = os.path.join(root, "store")
    env["CONVO_DIR"] = store
    fsync("none")
    run([convo, "init", store])
    run([convo, "new", "--title", "bench"])
    history = "".join(json.dumps({"type": t, "content": text}) + "\n" for _ in range(100) for t in ("user", "assistant"))
    run([convo, "append"], input=history)
    repo = os.path.join(root, "git")
    run(["git", "init", "-q", repo])
    with open(os.path.join(repo, "turns.jsonl"), "w") as f:
        f.write(history)
    run(["git", "-C", repo, "add", "-A"])
    run(["git", "-C", repo, "commit", "-qm", "history"])

    append_loop = f'i=0; while [ $i -lt {args.ops} ]; do "$CONVO" append --user "{text}" >/dev/null 2>&1 || exit 1; i=$((i+1)); done'
    git_loop = (
        f'cd {repo}; i=0; while [ $i -lt {args.ops} ]; do echo "{text}" >> turns.jsonl; '
        'git -c core.fsync=committed -c core.fsyncMethod=batch add turns.jsonl && '
        'git -c core.fsync=committed -c core.fsyncMethod=batch commit -qm turn || exit 1; i=$((i+1)); done'
    )

    def timed(script):
        start = time.perf_counter()
        run(["sh", "-c", script])
        return (time.perf_counter() - start) / args.ops * 1000

    # The import: one session exported, imported into fresh stores.
    source = os.path.join(root, "session.jsonl")
    bulk = "".join(json.dumps({"type": ("user", "assistant")[i % 2], "content": f"{i} {text}"}) + "\n" for i in range(args.events))
    run([convo, "new", "--title", "to import"])
    run([convo, "append"], input=bulk)
    with open(source, "w") as f:
        f.write(run([convo, "show", "--format", "jsonl"]).stdout)

    def import_once(n):
        target = os.path.join(root, f"import-{n}")
        run([convo, "init", target])
        start = time.perf_counter()
        subprocess.run([convo, "--store", target, "import", source], env=env, check=True, capture_output=True)
        took = (time.perf_counter() - start) * 1000
        shutil.rmtree(target)
        return took

    sides = {"committed": [], "none": [], "git durable": [], "import committed": [], "import none": []}
    n = 0
    for _ in range(args.rounds):
        for mode in ("committed", "none"):
            fsync(mode)
            sides[mode].append(timed(append_loop))
        sides["git durable"].append(timed(git_loop))
        for mode in ("committed", "none"):
            fsync(mode)
            n += 1
            sides[f"import {mode}"].append(import_once(n))
    med = {k: statistics.median(v) for k, v in sides.items()}
    print(f"binary: {convo}")
    for k, v in med.items():
        unit = "ms per append" if not k.startswith("import") else f"ms per import of {args.events} events"
        print(f"  {k:18} {v:8.2f} {unit}   (rounds: {', '.join(f'{x:.1f}' for x in sides[k])})")
    append_ratio = med["committed"] / med["none"]
    import_ratio = med["import committed"] / med["import none"]
    print(f"append: committed / none      = {append_ratio:.2f}  (goal <= 1.5: {'PASS' if append_ratio <= 1.5 else 'FAIL'})")
    print(f"append: committed / git durable = {med['committed'] / med['git durable']:.2f}")
    print(f"import: committed / none      = {import_ratio:.2f}  (goal <= 1.2: {'PASS' if import_ratio <= 1.2 else 'FAIL'})")
    if not args.keep:
        shutil.rmtree(root)
    return 0 if append_ratio <= 1.5 and import_ratio <= 1.2 else 1


if __name__ == "__main__":
    sys.exit(main())
