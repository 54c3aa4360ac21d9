#!/usr/bin/env python3
"""Appends beside a looping `git gc`: how many fail (issue 16's figure; the goal is 0).

    cargo build --release && python3 benches/beside_gc.py [--appends 1000] [binary]

A fresh store under /tmp (HOME pointed inside it, no user or system git config) gets one
conversation; a shell loop runs plain `git gc -q` in the store without pause (as a user,
`git maintenance` or a scheduled job would) while this script runs `convo append` once
per turn, each a whole process. Every failed append is printed with its error; the last
line is the count. The anchor is the same loop with appends made by the git CLI
(`git hash-object` + `git update-index` + `git commit`), run for the same number of
commits in the same run: git's own writes beside its own gc.
"""
import argparse, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def gc_loop(store: Path, stop: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        ["sh", "-c", 'while [ ! -e "$1" ]; do git gc -q >/dev/null 2>&1; done', "sh", str(stop)],
        cwd=store, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", nargs="?", default=str(ROOT / "target" / "release" / "convo"))
    parser.add_argument("--appends", type=int, default=1000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="convo-beside-gc-"))
    env = dict(os.environ, HOME=str(tmp / "home"), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL="/dev/null", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@x")
    try:
        store = tmp / "store"
        env_c = dict(env, CONVO_DIR=str(store))
        subprocess.run([args.binary, "init"], env=env_c, check=True, capture_output=True)
        subprocess.run([args.binary, "new", "-t", "beside gc"], env=env_c, check=True, capture_output=True)
        stop = tmp / "stop"
        loop = gc_loop(store, stop, env)
        failed, started = [], time.perf_counter()
        for n in range(args.appends):
            out = subprocess.run([args.binary, "append", "--user", f"turn {n}"], env=env_c,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                failed.append(f"turn {n}: exit {out.returncode}: {out.stderr.strip()}")
        convo_s = time.perf_counter() - started
        stop.write_text("")
        loop.wait()
        shown = subprocess.run([args.binary, "show", "--format", "jsonl"], env=env_c,
                               capture_output=True, text=True).stdout.count("\n")
        fsck = subprocess.run([args.binary, "fsck"], env=env_c, capture_output=True, text=True)

        # The anchor: git's own commits beside its own gc.
        plain = tmp / "plain"
        subprocess.run(["git", "init", "-q", str(plain)], env=env, check=True)
        stop2 = tmp / "stop2"
        loop = gc_loop(plain, stop2, env)
        git_failed, started = 0, time.perf_counter()
        for n in range(args.appends):
            (plain / "f.jsonl").open("a").write(f'{{"type":"user","content":"turn {n}"}}\n')
            a = subprocess.run(["git", "add", "f.jsonl"], cwd=plain, env=env, capture_output=True)
            c = subprocess.run(["git", "commit", "-q", "-m", f"turn {n}"], cwd=plain, env=env, capture_output=True)
            git_failed += a.returncode != 0 or c.returncode != 0
        git_s = time.perf_counter() - started
        stop2.write_text("")
        loop.wait()

        for line in failed:
            print(line)
        print(f"git CLI beside git gc: {git_failed} of {args.appends} commits failed ({git_s:.1f} s)")
        print(f"events stored: {shown} of {args.appends}; fsck exit {fsck.returncode}")
        print(f"convo beside git gc: {len(failed)} of {args.appends} appends failed ({convo_s:.1f} s)")
        return 0 if not failed and shown == args.appends and fsck.returncode == 0 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
