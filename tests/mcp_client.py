"""An MCP session with `convo mcp`, driven by the official Python SDK's stdio client (the
`mcp` package from PyPI, pinned in .ci/mcp-client.sh): what an agent host would do.

    python tests/mcp_client.py CONVO_BINARY                 # the session below
    python tests/mcp_client.py CONVO_BINARY append ID N      # N appends of one turn to ID
    python tests/mcp_client.py CONVO_BINARY call TOOL JSON   # one call, its result printed

The server inherits this process's environment (the test seals it: store, clock). Prints
one JSON document per step, `{"step": ..., ...}`, for the Rust test to compare whole; ids
and hashes are reproducible under the test's fixed clock. Exits non-zero on any surprise.
"""

import asyncio
import json
import os
import re
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


def say(step, **fields):
    print(json.dumps({"step": step, **fields}, ensure_ascii=False, sort_keys=True, indent=1))


async def call(session, name, arguments):
    """A tool's result: its structured content, or its error text."""
    result = await session.call_tool(name, arguments)
    if result.is_error:
        return {"error": "".join(c.text for c in result.content if c.type == "text")}
    return result.structured_content


async def main(binary):
    server = StdioServerParameters(command=binary, args=["mcp"], env=dict(os.environ))
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            say("initialize", server=init.server_info.name, tools=init.capabilities.tools is not None)

            tools = (await session.list_tools()).tools
            say(
                "list_tools",
                tools={t.name: sorted(t.input_schema.get("properties", {})) for t in tools},
                read_only=sorted(t.name for t in tools if t.annotations and t.annotations.read_only_hint),
            )

            made = await call(session, "new_conversation", {"title": "MCP notes"})
            say("new_conversation", result=made)
            cid = made["id"]

            big = "\n".join(f"line {i}: the build log says nothing useful" for i in range(200))
            events = [
                {"type": "user", "content": "Why does the build fail?"},
                {"type": "tool_call", "name": "bash", "call_id": "c1", "arguments": {"command": "make"}},
                {"type": "tool_result", "call_id": "c1", "content": big},
                {"type": "assistant", "content": "A missing header: the needle is in config.h."},
                {"type": "user", "content": "Fix it, please."},
                {"type": "assistant", "content": "Done: added the include."},
                {"type": "user", "content": "Thanks. 日本語でも書けますか?"},
                {"type": "assistant", "content": "はい、書けます。"},
            ]
            say("append", result=await call(session, "append", {"id": cid, "events": events}))

            say("list_conversations", result=await call(session, "list_conversations", {}))
            say("search", result=await call(session, "search", {"pattern": "needle|日本語"}))
            say("search_limit", result=await call(session, "search", {"pattern": "line \\d+", "limit": 2}))
            say("show_turn", result=await call(session, "show", {"id": cid, "from_turn": 1, "to_turn": 1}))

            # Paging: windows of 500 characters, followed to the end, add up to the whole.
            whole = await call(session, "show", {"id": cid, "max_chars": 200000})
            text, offset, calls = "", 0, 0
            while offset is not None:
                page = await call(session, "show", {"id": cid, "offset": offset, "max_chars": 500})
                text += page["text"]
                offset = page["next_offset"]
                calls += 1
            assert text == whole["text"], "paged show differs from the whole"
            say("show_paged", calls=calls, total_chars=whole["total_chars"], same=text == whole["text"])

            plan = await call(session, "compact", {"id": cid, "to": "0", "tools": "strip", "dry_run": True})
            say("compact_dry_run", result=plan)
            done = await call(session, "compact", {"id": cid, "to": "0", "summary": "Found a missing header."})
            say("compact", result=done)
            shown = await call(session, "show", {"id": cid, "compacted": True})
            say("show_compacted", result=shown)
            # The summary names the events it stands for by their ids' ends: asked for, they
            # come back whole.
            tails = re.findall(r"…(\w+)", shown["text"])
            say("show_events", tails=len(tails), result=await call(session, "show_events", {"id": cid, "events": tails}))
            say("search_compacted", result=await call(session, "search", {"pattern": "needle|missing header", "compacted": True}))

            say("fork", result=await call(session, "fork", {"id": cid, "last": 1, "title": "Japanese"}))
            say("log", result=await call(session, "log", {"id": cid, "limit": 2}))

            # Refusals: the store is left as it was (the test checks the commit count too).
            bad = [{"type": "user", "content": "fine"}, {"type": "tool_result", "call_id": "nope", "content": "x"}]
            say("append_refused", result=await call(session, "append", {"id": cid, "events": bad}))
            say("show_unknown", result=await call(session, "show", {"id": "no such conversation"}))
            say("compact_refused", result=await call(session, "compact", {"id": cid, "summary": "  "}))

            # Malformed requests: answered with JSON-RPC errors, and the server keeps going.
            dispatcher = session._dispatcher
            for method, params in [("tools/call", {"arguments": {}}), ("convo/nothing", {}), ("tools/call", {"name": "nope", "arguments": {}})]:
                try:
                    await dispatcher.send_raw_request(method, params, {})
                    say("malformed", method=method, error=None)
                except MCPError as e:
                    say("malformed", method=method, code=e.error.code)
            bad_args = await session.call_tool("show", {"id": cid, "bogus": True})
            say("bad_arguments", is_error=bad_args.is_error)
            after = await call(session, "list_conversations", {"limit": 1})
            say("still_serving", total=after["total"], first=after["conversations"][0]["title"])


async def append_many(binary, cid, n):
    """`n` appends of one user message each, while the test writes through the CLI."""
    server = StdioServerParameters(command=binary, args=["mcp"], env=dict(os.environ))
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for i in range(n):
                result = await call(session, "append", {"id": cid, "events": [{"type": "user", "content": f"mcp {i}"}]})
                if "error" in result:
                    raise SystemExit(f"append {i}: {result['error']}")
    say("appended", n=n)


async def call_one(binary, name, arguments):
    """One tool called with `arguments` (JSON), its result printed."""
    server = StdioServerParameters(command=binary, args=["mcp"], env=dict(os.environ))
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            say(name, result=await call(session, name, json.loads(arguments)))


if __name__ == "__main__":
    if sys.argv[2:3] == ["call"]:
        asyncio.run(call_one(sys.argv[1], sys.argv[3], sys.argv[4]))
    elif sys.argv[2:3] == ["append"]:
        asyncio.run(append_many(sys.argv[1], sys.argv[3], int(sys.argv[4])))
    else:
        asyncio.run(main(sys.argv[1]))
