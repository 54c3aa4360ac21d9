//! A Codex rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`), as
//! `codex resume` reads it: a `session_meta` record naming the session, the working
//! directory and the provider (Codex refuses a rollout of another provider than its
//! config's), then `response_item`s, which are the history it sends, with the `event_msg`s
//! its picker and transcript show. A compaction is Codex's own `compacted` record, with the
//! history Codex replaces the range with where the source recorded one.

use std::io::Write;

use serde_json::{Value, json};

use super::{AsText, Part, Session, is_message, written_call_id};
use crate::event::Kind;

/// The Codex version written in `session_meta`.
const CLI_VERSION: &str = "0.169.0";

fn record(out: &mut dyn Write, ts: &str, kind: &str, payload: Value) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &json!({"timestamp": ts, "type": kind, "payload": payload}))?;
    out.write_all(b"\n")
}

fn message(role: &str, part: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": part, "text": text}]})
}

pub fn write(session: &Session<'_>, parts: &[Part<'_>], out: &mut dyn Write) -> std::io::Result<()> {
    let meta = json!({
        "id": session.id,
        "timestamp": session.created,
        "cwd": session.cwd,
        "originator": "convo",
        "cli_version": CLI_VERSION,
        "source": "cli",
        "model_provider": session.provider,
    });
    record(out, session.created, "session_meta", meta)?;
    let mut text = AsText::default();
    let mut ids: std::collections::HashMap<&str, String> = Default::default();
    for part in parts {
        let event = match part {
            Part::Compacted { summary, agent_history, ts } => {
                let mut payload = json!({"message": summary});
                if let Some(history) = agent_history {
                    payload["replacement_history"] = (*history).clone();
                }
                record(out, ts, "compacted", payload)?;
                continue;
            }
            Part::Event(event) if is_message(event) => event,
            Part::Event(_) => continue,
        };
        let ts = event.ts.as_str();
        let item = |out: &mut dyn Write, payload: Value| record(out, ts, "response_item", payload);
        let codex_type = event.extra.get("codex_type").and_then(Value::as_str);
        match &event.kind {
            Kind::System { content } => {
                let role = event.extra.get("codex_role").and_then(Value::as_str).unwrap_or("developer");
                item(out, message(role, "input_text", content))?;
            }
            Kind::User { content } => {
                item(out, message("user", "input_text", content))?;
                let shown = json!({"type": "user_message", "message": content, "images": []});
                record(out, ts, "event_msg", shown)?;
            }
            Kind::Assistant { content } => {
                item(out, message("assistant", "output_text", content))?;
                record(out, ts, "event_msg", json!({"type": "agent_message", "message": content}))?;
            }
            Kind::Reasoning { content } => {
                if let (true, Some(encrypted)) = (session.native, event.extra.get("encrypted_content")) {
                    let summary = if content.is_empty() {
                        json!([])
                    } else {
                        json!([{"type": "summary_text", "text": content}])
                    };
                    let payload = json!({"type": "reasoning", "summary": summary, "content": null, "encrypted_content": encrypted});
                    item(out, payload)?;
                }
            }
            Kind::ToolCall { call_id, name, arguments } if session.native => {
                let id = ids.entry(call_id).or_insert_with(|| written_call_id(event, call_id)).clone();
                let as_string = match arguments {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let payload = match codex_type {
                    Some("custom_tool_call") => {
                        json!({"type": "custom_tool_call", "status": "completed", "call_id": id, "name": name, "input": as_string})
                    }
                    _ => json!({"type": "function_call", "name": name, "arguments": as_string, "call_id": id}),
                };
                item(out, payload)?;
            }
            Kind::ToolCall { call_id, name, arguments } => {
                item(out, message("assistant", "output_text", &text.call(call_id, name, arguments)))?;
            }
            Kind::ToolResult { call_id, content, .. } if session.native => {
                let id = ids.get(call_id.as_str()).cloned().unwrap_or_else(|| call_id.clone());
                let kind = match codex_type {
                    Some("custom_tool_call_output") => "custom_tool_call_output",
                    _ => "function_call_output",
                };
                item(out, json!({"type": kind, "call_id": id, "output": content}))?;
            }
            Kind::ToolResult { call_id, content, is_error } => {
                item(out, message("user", "input_text", &text.result(call_id, content, *is_error)))?;
            }
            Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => {}
        }
    }
    Ok(())
}
