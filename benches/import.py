#!/usr/bin/env python3
"""Import of a large session: speed and peak memory, against `jq -c .` over the same file.

    cargo build --release && python3 benches/import.py [--mb 1000] [--agent gemini-cli]

Generates a realistic coding conversation with ../shared/tools/gen-conversation.py, writes it
as a Claude Code session (user/assistant lines with text, thinking, tool_use and tool_result
blocks) or, with `--agent gemini-cli`, as a Gemini CLI 0.61 chat session (each model message
written again as its tool call and then its result come in, the user message of the tool
response after it, a `$set` after each message, as Gemini CLI writes them), then times `convo import` into a fresh store and reads its peak resident memory
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


def gemini_lines(events):
    """convo-style events -> Gemini CLI chat session lines, as 0.61 writes them."""
    ts = "2026-01-01T00:00:00.000Z"
    n = 0

    def uuid():
        nonlocal n
        n += 1
        return f"00000000-0000-4000-8000-{n:012d}"

    touched = json.dumps({"$set": {"lastUpdated": ts}})
    yield json.dumps({"sessionId": "00000000-0000-4000-8000-000000000000", "projectHash": "0" * 64,
                      "startTime": ts, "lastUpdated": ts, "kind": "main"})
    context = {"id": "d04923d38bb0f6017037e74183378ef4", "timestamp": ts, "type": "user",
               "content": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}]}
    yield json.dumps({"$set": {"messages": [context], "lastUpdated": ts}})
    tokens = {"input": 12000, "output": 300, "cached": 8000, "thoughts": 120, "tool": 0, "total": 12420}
    thoughts, message = [], None
    for e in events:
        t = e["type"]
        if t == "user":
            yield json.dumps({"id": uuid(), "timestamp": ts, "type": "user", "content": [{"text": e["content"]}]})
            yield touched
        elif t == "reasoning":
            thoughts.append({"subject": "Thinking", "description": e["content"], "timestamp": ts})
        elif t in ("assistant", "tool_call"):
            message = {"id": uuid(), "timestamp": ts, "type": "gemini",
                       "content": e["content"] if t == "assistant" else "", "thoughts": thoughts,
                       "tokens": tokens, "model": "gemini-2.5-pro"}
            thoughts = []
            yield json.dumps(message)
            yield touched
            if t == "tool_call":
                message["toolCalls"] = [{"id": e["call_id"], "name": e["name"], "args": e["arguments"],
                                         "status": "executing", "timestamp": ts}]
                yield json.dumps(message)
        elif t == "tool_result" and message and message.get("toolCalls"):
            call = message["toolCalls"][0]
            key = "error" if e.get("is_error") else "output"
            response = {"functionResponse": {"id": call["id"], "name": call["name"], "response": {key: e["content"]}}}
            call.update({"result": [response], "status": "error" if e.get("is_error") else "success"})
            yield json.dumps(message)
            yield json.dumps({"id": uuid(), "timestamp": ts, "type": "user", "content": [response]})
            yield touched


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1000)
    ap.add_argument("--agent", choices=["claude-code", "gemini-cli"], default="claude-code")
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
            for line in (gemini_lines if args.agent == "gemini-cli" else claude_lines)(events):
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
        kind = "Gemini CLI chat JSONL" if args.agent == "gemini-cli" else "Claude Code JSONL"
        print(f"session: {size:.0f} MB of {kind}")
        print(f"convo import: {convo_s:.1f} s, {size / convo_s:.1f} MB/s, peak memory {rss_kb / 1024:.0f} MiB "
              f"({rss_kb / 1024 / size * 100:.1f}% of the file)")
        print(f"jq -c .:      {jq_s:.1f} s, {size / jq_s:.1f} MB/s")
        print(f"convo / jq throughput: {jq_s / convo_s:.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
