//! Provider message lists: an OpenAI Chat Completions body (or bare `messages` array, or a
//! SWE-agent trajectory's `history`), and an Anthropic Messages body (or bare array).

use serde_json::Value;

use super::{Builder, Format, Imported, InteropError, Report, arguments, skip, text_of};
use crate::clock::Clock;
use crate::event::Kind;

fn document(text: &str) -> Result<Value, InteropError> {
    serde_json::from_str(text).map_err(InteropError::NotJson)
}

pub fn openai(text: &str, clock: &Clock) -> Result<Imported, InteropError> {
    let doc = document(text)?;
    let messages = doc
        .get("messages")
        .or_else(|| doc.get("history"))
        .unwrap_or(&doc)
        .as_array()
        .ok_or(InteropError::NotThisFormat("no `messages` (or `history`) array"))?;
    if !messages.iter().all(|m| m.get("role").is_some()) || messages.is_empty() {
        return Err(InteropError::NotThisFormat("not every message has a `role`"));
    }
    if messages.iter().any(|m| {
        m.get("content").and_then(Value::as_array).is_some_and(|c| {
            c.iter().any(|b| matches!(b.get("type").and_then(Value::as_str), Some("tool_use" | "tool_result")))
        })
    }) {
        return Err(InteropError::NotThisFormat("Anthropic content blocks (tool_use/tool_result)"));
    }
    let mut report = Report { records: messages.len(), ..Default::default() };
    let mut b = Builder::new(clock);
    for m in messages {
        let content = text_of(m.get("content").unwrap_or(&Value::Null));
        match m.get("role").and_then(Value::as_str).unwrap_or("") {
            "system" | "developer" => {
                b.push(&mut report, Kind::System { content }, None, None);
            }
            "user" => {
                b.push(&mut report, Kind::User { content }, None, None);
            }
            "assistant" => {
                if !content.trim().is_empty() {
                    b.push(&mut report, Kind::Assistant { content }, None, None);
                }
                for call in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    let kind = Kind::ToolCall {
                        call_id: call.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                        name: call.pointer("/function/name").and_then(Value::as_str).unwrap_or("unknown").to_owned(),
                        arguments: arguments(call.pointer("/function/arguments")),
                    };
                    b.push(&mut report, kind, None, None);
                }
            }
            "tool" => {
                // SWE-agent lists the ids in `tool_call_ids`.
                let id = m
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .or_else(|| m.pointer("/tool_call_ids/0").and_then(Value::as_str))
                    .unwrap_or("")
                    .to_owned();
                if !b.push(&mut report, Kind::ToolResult { call_id: id, content, is_error: false }, None, None) {
                    skip(&mut report, "tool message without its call");
                }
            }
            other => skip(&mut report, format!("message with role `{other}`")),
        }
    }
    Ok(Imported::one(Format::Openai, b.drafts, report))
}

pub fn anthropic(text: &str, clock: &Clock) -> Result<Imported, InteropError> {
    let doc = document(text)?;
    let messages =
        doc.get("messages").unwrap_or(&doc).as_array().ok_or(InteropError::NotThisFormat("no `messages` array"))?;
    if messages.is_empty()
        || !messages.iter().all(|m| matches!(m.get("role").and_then(Value::as_str), Some("user" | "assistant")))
    {
        return Err(InteropError::NotThisFormat("roles other than user and assistant"));
    }
    let mut report = Report { records: messages.len(), ..Default::default() };
    let mut b = Builder::new(clock);
    if let Some(system) = doc.get("system") {
        b.push(&mut report, Kind::System { content: text_of(system) }, None, None);
    }
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let blocks = match m.get("content") {
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(other) => vec![serde_json::json!({"type": "text", "text": text_of(other)})],
            None => Vec::new(),
        };
        for block in blocks {
            let kind = match (role, block.get("type").and_then(Value::as_str)) {
                ("user", Some("text")) => Kind::User { content: text_of(block.get("text").unwrap_or(&Value::Null)) },
                ("assistant", Some("text")) => {
                    Kind::Assistant { content: text_of(block.get("text").unwrap_or(&Value::Null)) }
                }
                ("assistant", Some("thinking")) => {
                    Kind::Reasoning { content: text_of(block.get("thinking").unwrap_or(&Value::Null)) }
                }
                ("assistant", Some("tool_use")) => Kind::ToolCall {
                    call_id: block.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                    name: block.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned(),
                    arguments: arguments(block.get("input")),
                },
                ("user", Some("tool_result")) => Kind::ToolResult {
                    call_id: block.get("tool_use_id").and_then(Value::as_str).unwrap_or("").to_owned(),
                    content: text_of(block.get("content").unwrap_or(&Value::Null)),
                    is_error: block.get("is_error") == Some(&Value::Bool(true)),
                },
                (_, t) => {
                    skip(&mut report, format!("{role} `{}` block", t.unwrap_or("?")));
                    continue;
                }
            };
            if !b.push(&mut report, kind, None, None) {
                skip(&mut report, "tool result without its call");
            }
        }
    }
    Ok(Imported::one(Format::Anthropic, b.drafts, report))
}
