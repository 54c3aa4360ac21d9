//! Conversations the budget tests (`inside_a_turn`, `llm`, `mcp`, `llama`) build: one agent
//! turn of tool calls, appended with one `convo append`.

use serde_json::{Value, json};

use super::TestEnv;

/// Append `events` (one JSON object each) to conversation `id` with one `convo append`.
pub fn append_events(env: &TestEnv, id: &str, events: &[Value]) {
    let jsonl: String = events.iter().map(|l| format!("{l}\n")).collect();
    env.run_stdin(&["append", id], &jsonl).ok();
}

/// "paths": one prompt, then 30 files read (24 lines each), each followed by a line of text:
/// a budget's digest covers the oldest part and a cheaper step the rest.
pub fn reading_session(env: &TestEnv) -> String {
    let id = env.new_conversation("paths");
    let mut lines = vec![json!({"type": "user", "content": "Find the flake."})];
    for i in 0..30 {
        let out: Vec<String> = (0..24).map(|l| format!("{i}.{l} {}", "x".repeat(30))).collect();
        lines.push(json!({"type": "tool_call", "call_id": format!("c{i}"), "name": "Read",
            "arguments": {"file_path": format!("src/mod_{i}/file_{i}.rs")}}));
        lines.push(json!({"type": "tool_result", "call_id": format!("c{i}"), "content": out.join("\n")}));
        lines.push(json!({"type": "assistant", "content": format!("Nothing in src/mod_{i}/file_{i}.rs.")}));
    }
    lines.push(json!({"type": "assistant", "content": "Found it."}));
    append_events(env, &id, &lines);
    id
}

/// "tail": one prompt, then `calls` commands with big outputs (40 lines): the recent tool
/// outputs the default profile keeps whole hold most of the view.
pub fn heavy_tail_session(env: &TestEnv, calls: usize) -> String {
    let id = env.new_conversation("tail");
    let mut lines = vec![json!({"type": "user", "content": "Find the flake."})];
    for i in 0..calls {
        let out: Vec<String> = (0..40).map(|l| format!("out {i}.{l} {}", "x".repeat(40))).collect();
        lines.push(json!({"type": "tool_call", "call_id": format!("c{i}"), "name": "Bash",
            "arguments": {"command": format!("cargo test flake_{i}")}}));
        lines.push(json!({"type": "tool_result", "call_id": format!("c{i}"), "content": out.join("\n")}));
    }
    lines.push(json!({"type": "assistant", "content": "Found it."}));
    append_events(env, &id, &lines);
    id
}
