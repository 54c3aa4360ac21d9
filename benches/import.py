#!/usr/bin/env python3
"""Import of a large session: speed and peak memory, against `jq -c .` over the same file.

    cargo build --release && python3 benches/import.py [--mb 1000]

Generates a realistic coding conversation with ../shared/tools/gen-conversation.py, writes it
as a Claude Code session (user/assistant lines with text, thinking, tool_use and tool_result
blocks), then times `convo import` into a fresh store and reads its peak resident memory
(/usr/bin/time -v). The anchor is `jq -c .` reading and re-serialising the same file in the
same run. Bounded memory means the peak stays far below the file's size. Automatic gc is
off for the measurement: `git gc --auto` after the import is git's memory, not convo's.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def claude_lines(events):
    """convo-style events -> Claude Code JSONL lines (one block per line, as Claude Code does)."""
    n = 0
    parent = None
    for e in events:
        n += 1
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        t = e["type"]
        if t == "user":
            line = {"type": "user", "message": {"role": "user", "content": e["content"]}}
        elif t == "tool_result":
            line = {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": e["call_id"], "content": e["content"],
                 "is_error": e.get("is_error", False)}]}}
        elif t == "assistant":
            line = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": e["content"]}]}}
        elif t == "reasoning":
            line = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": e["content"]}]}}
        elif t == "tool_call":
            line = {"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": e["call_id"], "name": e["name"], "input": e["arguments"]}]}}
        else:
            continue
        line.update({"uuid": uuid, "parentUuid": parent, "isSidechain": False, "timestamp": "2026-01-01T00:00:00Z"})
        parent = uuid
        yield json.dumps(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1000)
    ap.add_argument("binary", nargs="?", default=str(ROOT / "target/release/convo"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="convo-import-"))
    try:
        gen = ROOT.parent / "shared/tools/gen-conversation.py"
        session = tmp / "session.jsonl"
        print(f"generating ~{args.mb} MB ...", file=sys.stderr)
        proc = subprocess.Popen([sys.executable, str(gen), "--mb", str(args.mb), "--seed", "5"], stdout=subprocess.PIPE, text=True)
        with open(session, "w") as out:
            events = (json.loads(l) for l in proc.stdout)
            for line in claude_lines(events):
                out.write(line + "\n")
        proc.wait()
        size = session.stat().st_size / 1e6
        env = dict(os.environ, CONVO_DIR=str(tmp / "store"), HOME=str(tmp), GIT_CONFIG_GLOBAL="/dev/null")
        subprocess.run([args.binary, "init", "-q"], env=env, check=True)
        # git gc --auto (run after the commit once ~6,700 loose objects exist) repacks with
        # git's own memory, which /usr/bin/time would count as ours: measure convo alone.
        subprocess.run(["git", "-C", str(tmp / "store"), "config", "gc.auto", "0"], check=True)
        start = time.perf_counter()
        run = subprocess.run(["/usr/bin/time", "-v", args.binary, "import", "-q", str(session)], env=env,
                             capture_output=True, text=True)
        convo_s = time.perf_counter() - start
        if run.returncode != 0:
            sys.exit(run.stderr)
        rss_kb = next(int(l.split(":")[1]) for l in run.stderr.splitlines() if "Maximum resident set size" in l)
        start = time.perf_counter()
        subprocess.run(["jq", "-c", ".", str(session)], stdout=subprocess.DEVNULL, check=True)
        jq_s = time.perf_counter() - start
        print(f"session: {size:.0f} MB of Claude Code JSONL")
        print(f"convo import: {convo_s:.1f} s, {size / convo_s:.1f} MB/s, peak memory {rss_kb / 1024:.0f} MiB "
              f"({rss_kb / 1024 / size * 100:.1f}% of the file)")
        print(f"jq -c .:      {jq_s:.1f} s, {size / jq_s:.1f} MB/s")
        print(f"convo / jq throughput: {jq_s / convo_s:.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
