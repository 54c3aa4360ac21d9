#!/usr/bin/env python3
"""Import of a large session: speed and peak memory, against `jq -c .` over the same file
(`sqlite3 DB .dump` for opencode's database).

    cargo build --release && python3 benches/import.py [--mb 1000] [--agent gemini-cli|opencode]

Generates a realistic coding conversation with ../shared/tools/gen-conversation.py, writes it
as a Claude Code session (user/assistant lines with text, thinking, tool_use and tool_result
blocks) or, with `--agent gemini-cli`, as a Gemini CLI 0.61 chat session (each model message
written again as its tool call and then its result come in, the user message of the tool
response after it, a `$set` after each message, as Gemini CLI writes them) or, with
`--agent opencode`, as one session of an opencode 1.18 SQLite database (its `session`,
`message` and `part` tables and indexes as opencode 1.18.33 makes them, WAL mode; an
assistant message per model call with its step-start, reasoning, text and tool parts and
step-finish, tokens on the message), then times `convo import` into a fresh store and reads its peak resident memory
(/usr/bin/time -v). The anchor is `jq -c .` reading and re-serialising the same file in the
same run (for opencode, `sqlite3 DB .dump`: every row read and written out as SQL text). Bounded memory means the peak stays far below the file's size. Automatic gc is
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


# opencode 1.18.33's tables for sessions, as `sqlite3 opencode.db .schema` prints them.
OPENCODE_SCHEMA = """
CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text,
  `icon_url` text, `icon_url_override` text, `icon_color` text, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `time_initialized` integer, `sandboxes` text NOT NULL, `commands` text);
CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text,
  `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text NOT NULL, `version` text NOT NULL,
  `share_url` text, `summary_additions` integer, `summary_deletions` integer, `summary_files` integer,
  `summary_diffs` text, `metadata` text, `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL,
  `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL,
  `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL, `revert` text,
  `permission` text, `agent` text, `model` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_compacting` integer, `time_archived` integer,
  CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_workspace_idx` ON `session` (`workspace_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
"""


def opencode_db(events, path):
    """convo-style events -> one session of an opencode 1.18 database, as opencode writes it."""
    import sqlite3
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.executescript(OPENCODE_SCHEMA)
    t0, n = 1795856484038, 0
    sid, cwd = "ses_dde9cba66ffevUpdqj8R9robhX", "/home/dev/app"
    con.execute("INSERT INTO project VALUES ('p1', ?, 'git', NULL, NULL, NULL, NULL, ?, ?, NULL, '[]', NULL)", (cwd, t0, t0))
    con.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
                "VALUES (?, 'p1', 'cosmic-planet', ?, 'Fix the login flow', '1.18.33', ?, ?)", (sid, cwd, t0, t0))

    def next_id(prefix):
        nonlocal n
        n += 1
        return f"{prefix}_{t0 + n:012x}{n:014d}", t0 + n

    tokens = {"total": 12420, "input": 4000, "output": 180, "reasoning": 120, "cache": {"write": 0, "read": 8000}}
    user_id, message, parts = None, None, []

    def flush():
        nonlocal message, parts
        if message is None:
            return
        mid, mt, data = message
        parts.append((next_id("prt")[0], json.dumps({"reason": "stop", "type": "step-finish", "tokens": tokens, "cost": 0})))
        data["time"]["completed"] = t0 + n
        con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, mt, t0 + n, json.dumps(data)))
        con.executemany("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                        [(pid, mid, sid, mt, t0 + n, pdata) for pid, pdata in parts])
        message, parts = None, []

    def open_message():
        nonlocal message
        if message is None:
            mid, mt = next_id("msg")
            message = (mid, mt, {"parentID": user_id, "role": "assistant", "mode": "build", "agent": "build",
                                 "path": {"cwd": cwd, "root": cwd}, "cost": 0, "tokens": tokens,
                                 "modelID": "claude-sonnet-4-5", "providerID": "anthropic",
                                 "time": {"created": mt}, "finish": "tool-calls"})
            parts.append((next_id("prt")[0], json.dumps({"snapshot": "2e2f11d19742c0f5967b02727c1678fee1a3a866",
                                                         "type": "step-start"})))

    calls = {}
    for e in events:
        t = e["type"]
        if t == "user":
            flush()
            user_id, mt = next_id("msg")
            data = {"role": "user", "time": {"created": mt}, "agent": "build",
                    "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}}
            con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (user_id, sid, mt, mt, json.dumps(data)))
            con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (next_id("prt")[0], user_id, sid, mt, mt,
                        json.dumps({"type": "text", "text": e["content"]})))
        elif t in ("reasoning", "assistant"):
            open_message()
            parts.append((next_id("prt")[0], json.dumps({"type": "reasoning" if t == "reasoning" else "text",
                                                         "text": e["content"], "time": {"start": t0 + n, "end": t0 + n}})))
        elif t == "tool_call":
            open_message()
            calls[e["call_id"]] = (len(parts), e)
            parts.append((next_id("prt")[0], None))
        elif t == "tool_result" and e["call_id"] in calls:
            at, call = calls.pop(e["call_id"])
            error = e.get("is_error", False)
            state = {"status": "error" if error else "completed", "input": call["arguments"],
                     "title": call["name"], "time": {"start": t0 + n, "end": t0 + n}}
            if error:
                state["error"] = e["content"]
            else:
                state.update({"output": e["content"], "metadata": {"output": e["content"], "exit": 0, "truncated": False}})
            parts[at] = (parts[at][0], json.dumps({"type": "tool", "tool": call["name"], "callID": call["call_id"],
                                                  "state": state}))
            flush()
    flush()
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1000)
    ap.add_argument("--agent", choices=["claude-code", "gemini-cli", "opencode"], default="claude-code")
    ap.add_argument("binary", nargs="?", default=str(ROOT / "target/release/convo"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="convo-import-"))
    try:
        gen = ROOT.parent / "shared/tools/gen-conversation.py"
        session = tmp / ("opencode.db" if args.agent == "opencode" else "session.jsonl")
        print(f"generating ~{args.mb} MB ...", file=sys.stderr)
        proc = subprocess.Popen([sys.executable, str(gen), "--mb", str(args.mb), "--seed", "5"], stdout=subprocess.PIPE, text=True)
        events = (json.loads(l) for l in proc.stdout)
        if args.agent == "opencode":
            opencode_db(events, session)
        else:
            with open(session, "w") as out:
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
        anchor = ["sqlite3", str(session), ".dump"] if args.agent == "opencode" else ["jq", "-c", ".", str(session)]
        start = time.perf_counter()
        subprocess.run(anchor, stdout=subprocess.DEVNULL, check=True)
        anchor_s = time.perf_counter() - start
        kind = {"gemini-cli": "Gemini CLI chat JSONL", "opencode": "opencode SQLite database"}.get(
            args.agent, "Claude Code JSONL")
        name = "sqlite3 .dump" if args.agent == "opencode" else "jq -c ."
        print(f"session: {size:.0f} MB of {kind}")
        print(f"convo import: {convo_s:.1f} s, {size / convo_s:.1f} MB/s, peak memory {rss_kb / 1024:.0f} MiB "
              f"({rss_kb / 1024 / size * 100:.1f}% of the file)")
        print(f"{name + ':':14}{anchor_s:.1f} s, {size / anchor_s:.1f} MB/s")
        print(f"convo / {name} throughput: {anchor_s / convo_s:.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
