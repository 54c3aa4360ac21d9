"""A recording stand-in for the Anthropic, OpenAI and Gemini APIs, on a free loopback port, for
the tests that run the real coding agents (Claude Code, Codex and Gemini CLI, from
.ci/agents.sh) offline.

Why: convo writes session files that these agents are meant to resume. The only way to know
that an agent really took a session in is to see what it sends to its model afterwards, so
the agent is pointed here (ANTHROPIC_BASE_URL, a Codex model provider whose base_url is this
server's /v1, GOOGLE_GEMINI_BASE_URL, or an opencode OpenAI-compatible provider whose baseURL
is this server's /v1), and every request it makes is appended to a log as
one JSON line:

    {"n": 3, "method": "POST", "path": "/v1/messages", "headers": {...}, "body": {...}}

The answers are a fixed assistant text, or, with `--script FILE`, the Nth entry of a JSON
list for the Nth *main* model request (one that offers the agent tools; a side request,
such as a title or summary call, offers none and gets the fixed text):

    [{"tool": {"name": "Bash", "input": {"command": "cat notes.txt"}}},
     {"text": "The file says hello."}]

A `tool` entry becomes a `tool_use` block (Messages API), a `function_call` item (Responses
API), a `tool_calls` entry (Chat Completions, opencode) or a `functionCall` part (Gemini's `generateContent` / `streamGenerateContent`) with
`input` as its arguments, so the agent runs the tool and sends its result in the next
request, which gets the next entry. Past the end: the fixed text.
A string `input` makes a Responses `custom_tool_call` instead: the freeform tools, such as
the JavaScript `exec` tool of Codex's code mode, e.g.
    {"tool": {"name": "exec", "input": "text((await tools.exec_command({cmd: 'ls'})).output)"}}
Tool names and arguments are the agent's own: Claude Code's `Bash` {command, description},
`Read` {file_path}; Codex's `exec_command` {cmd} (function) or `exec` (JavaScript source);
Gemini CLI's `read_file` {file_path}, `run_shell_command` {command}; opencode's `read`
{filePath}, `bash` {command, description}, `edit` {filePath, oldString, newString}.
An entry's optional `usage` sets what a Responses answer reports (default 10 in, 5 out):
    {"text": "done", "usage": {"input_tokens": 1200, "cached_tokens": 1024,
                               "output_tokens": 300, "reasoning_tokens": 200}}
and of a Gemini answer its `usageMetadata` (default 10 prompt, 5 candidates), with an
optional `thought` the model thinks first (a thought part; for Chat Completions, opencode's,
`reasoning_content` before the answer, and `usage` its `prompt_tokens`/`completion_tokens`):
    {"thought": "**Reading** the notes", "tool": {...},
     "usage": {"promptTokenCount": 1200, "cachedContentTokenCount": 1024,
               "candidatesTokenCount": 30, "thoughtsTokenCount": 20}}

    python3 tests/agent_server.py --log LOG [--script FILE] [--text TEXT]

prints `PORT <n>` as its first line on stdout, then serves until its stdin closes (so it
ends with the test that started it, even a killed one) or it is killed. Started with stdin
from /dev/null it stops at once: from a shell, feed it `sleep infinity |`.
"""

import argparse
import gzip
import json
import os
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TEXT = "ok from the recording server"

# Ids are this server's run and a counter: unique across runs, as a real model server's are.
# A counter alone repeats them across the hops of a relay, where a capture must tell apart
# every response it stores.
RUN = os.urandom(6).hex()


class State:
    """What the handlers share: the log, the script and the counters."""

    def __init__(self, log, script, text):
        self.log_path = log
        self.script = script
        self.text = text
        self.lock = threading.Lock()
        self.requests = 0  # every request, numbered in the log
        self.turns = 0  # main model requests: the index into the script

    def record(self, entry):
        """Append one request to the log; its number in the log."""
        with self.lock:
            self.requests += 1
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps({"n": self.requests, **entry}) + "\n")
            return self.requests

    def answer(self, body):
        """The script entry for this request: main requests (with tools) take the next one."""
        if not offers_tools(body):
            return {"text": self.text}
        with self.lock:
            turn, self.turns = self.turns, self.turns + 1
        return self.script[turn] if turn < len(self.script) else {"text": self.text}


def offers_tools(body):
    """A main request offers tools: in `tools`, or (Codex's newer models) in an input item."""
    items = body.get("input") if isinstance(body.get("input"), list) else []
    return bool(body.get("tools")) or any(
        isinstance(i, dict) and i.get("type") == "additional_tools" for i in items)


def sse(events):
    """Server-sent events: (name, data) pairs; each data is sent as JSON."""
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def anthropic(body, answer, n):
    """A Messages API answer: JSON, or its stream of events when `stream` is set."""
    model = body.get("model", "claude-test")
    usage = {"input_tokens": 10, "output_tokens": 5,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    if "tool" in answer:
        tool = answer["tool"]
        block = {"type": "tool_use", "id": f"toolu_{RUN}{n:012d}", "name": tool["name"],
                 "input": tool.get("input", {})}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": answer["text"]}
        delta = {"type": "text_delta", "text": answer["text"]}
        stop = "end_turn"
    message = {"id": f"msg_{RUN}{n:012d}", "type": "message", "role": "assistant", "model": model,
               "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return "application/json", json.dumps(message)
    empty = {**block, "input": {}} if block["type"] == "tool_use" else {**block, "text": ""}
    return "text/event-stream", sse([
        ("message_start", {"type": "message_start", "message": {
            **message, "content": [], "stop_reason": None,
            "usage": {**usage, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": empty}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": usage["output_tokens"]}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def openai(body, answer, n):
    """A Responses API answer: JSON, or its stream of events when `stream` is set."""
    if "tool" in answer:
        tool, args = answer["tool"], answer["tool"].get("input", {})
        if isinstance(args, str):  # a freeform tool, such as code mode's `exec` (JavaScript)
            item = {"type": "custom_tool_call", "id": f"ctc_{RUN}_{n}", "call_id": f"call_{RUN}_{n}",
                    "name": tool["name"], "input": args, "status": "completed"}
        else:
            item = {"type": "function_call", "id": f"fc_{RUN}_{n}", "call_id": f"call_{RUN}_{n}",
                    "name": tool["name"], "arguments": json.dumps(args), "status": "completed"}
    else:
        item = {"type": "message", "id": f"msg_{RUN}_{n}", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": answer["text"], "annotations": []}]}
    counts = {"input_tokens": 10, "cached_tokens": 0, "output_tokens": 5, "reasoning_tokens": 0,
              **answer.get("usage", {})}
    usage = {"input_tokens": counts["input_tokens"],
             "input_tokens_details": {"cached_tokens": counts["cached_tokens"]},
             "output_tokens": counts["output_tokens"],
             "output_tokens_details": {"reasoning_tokens": counts["reasoning_tokens"]},
             "total_tokens": counts["input_tokens"] + counts["output_tokens"]}
    response = {"id": f"resp_{RUN}_{n}", "object": "response", "created_at": int(time.time()),
                "status": "completed", "model": body.get("model", "gpt-test"), "output": [item],
                "usage": usage}
    if not body.get("stream"):
        return "application/json", json.dumps(response)
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    events = [("response.created", {"type": "response.created", "response": started}),
              ("response.output_item.added", {"type": "response.output_item.added",
                                              "output_index": 0,
                                              "item": {**item, "status": "in_progress"}})]
    if item["type"] == "message":
        events.append(("response.output_text.delta", {
            "type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
            "content_index": 0, "delta": answer["text"]}))
    events += [("response.output_item.done", {"type": "response.output_item.done",
                                              "output_index": 0, "item": item}),
               ("response.completed", {"type": "response.completed", "response": response})]
    return "text/event-stream", sse(events)


def chat(body, answer, n):
    """A Chat Completions answer (opencode's OpenAI-compatible provider): JSON, or its stream
    of chunks when `stream` is set."""
    model = body.get("model", "gpt-test")
    if "tool" in answer:
        tool = answer["tool"]
        call = {"id": f"call_{RUN}_{n}", "type": "function",
                "function": {"name": tool["name"], "arguments": json.dumps(tool.get("input", {}))}}
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": answer["text"]}, "stop"
    if "thought" in answer:
        message["reasoning_content"] = answer["thought"]
    counts = {"prompt_tokens": 10, "completion_tokens": 5, **answer.get("usage", {})}
    usage = {**counts, "total_tokens": counts["prompt_tokens"] + counts["completion_tokens"]}
    base = {"id": f"chatcmpl-{n}", "created": int(time.time()), "model": model}
    if not body.get("stream"):
        return "application/json", json.dumps({
            **base, "object": "chat.completion", "usage": usage,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
    delta = {"role": "assistant"}
    if "tool_calls" in message:
        delta["tool_calls"] = [{"index": 0, **message["tool_calls"][0]}]
    else:
        delta["content"] = message["content"]
    chunk = {**base, "object": "chat.completion.chunk"}
    thought = [{"index": 0, "delta": {"role": "assistant", "reasoning_content": answer["thought"]},
                "finish_reason": None}] if "thought" in answer else []
    chunks = [{**chunk, "choices": c} for c in [thought] if c] + [
              {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
              {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
              {**chunk, "choices": [], "usage": usage}]
    return "text/event-stream", "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def gemini(body, answer, n, stream):
    """A Gemini `generateContent` answer: JSON, or one server-sent event when streamed."""
    if "tool" in answer:
        tool = answer["tool"]
        part = {"functionCall": {"name": tool["name"], "args": tool.get("input", {})}}
    else:
        part = {"text": answer["text"]}
    parts = [part]
    if "thought" in answer:
        parts.insert(0, {"text": answer["thought"], "thought": True})
    counts = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15,
              **answer.get("usage", {})}
    response = {"candidates": [{"content": {"role": "model", "parts": parts},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": counts, "modelVersion": "gemini-test", "responseId": f"resp_{RUN}_{n}"}
    if not stream:
        return "application/json", json.dumps(response)
    return "text/event-stream", f"data: {json.dumps(response)}\r\n\r\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set in main

    def log_message(self, *args):  # the JSON log says it all; keep stderr quiet
        pass

    def read_body(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def reply(self, status, kind="application/json", text=""):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def handle_any(self):
        body = self.read_body()
        n = self.state.record({"method": self.command, "path": self.path,
                               "headers": {k.lower(): v for k, v in self.headers.items()},
                               "body": body})
        path = self.path.split("?")[0].rstrip("/")
        if self.command == "POST" and isinstance(body, dict):
            if path.endswith("/v1/messages"):
                return self.reply(200, *anthropic(body, self.state.answer(body), n))
            if path.endswith("/v1/messages/count_tokens"):
                return self.reply(200, text=json.dumps({"input_tokens": 10}))
            if path.endswith("/chat/completions"):
                return self.reply(200, *chat(body, self.state.answer(body), n))
            if path.endswith("/responses"):
                return self.reply(200, *openai(body, self.state.answer(body), n))
            if path.endswith(":generateContent") or path.endswith(":streamGenerateContent"):
                stream = path.endswith(":streamGenerateContent")
                return self.reply(200, *gemini(body, self.state.answer(body), n, stream))
            if path.endswith(":countTokens"):
                return self.reply(200, text=json.dumps({"totalTokens": 10}))
        if self.command == "GET" and path.endswith("/models"):
            model = {"id": "gpt-test", "object": "model", "created": 0, "owned_by": "test"}
            return self.reply(200, text=json.dumps({"object": "list", "data": [model]}))
        if self.command == "HEAD":  # reachability probes (Claude Code: HEAD /api/hello)
            return self.reply(200)
        self.reply(404, text=json.dumps({"error": {"type": "not_found_error",
                                                   "message": f"no {self.command} {path}"}}))

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", required=True, help="append each request here as JSON")
    parser.add_argument("--script", help="JSON list: the answers to the main requests")
    parser.add_argument("--text", default=TEXT, help="the fixed answer")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    script = []
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            script = json.load(f)
    Handler.state = State(args.log, script, args.text)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
