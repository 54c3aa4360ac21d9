//! Claude Code session JSONL.
//!
//! One API message can be spread over several lines (sharing `message.id`), each carrying
//! some of its content blocks: every block becomes an event, in order. `tool_result` blocks
//! inside `user` lines are results, not new turns; `thinking` blocks are reasoning. A
//! `/compact` (a `compact_boundary` system line, then a user line with `isCompactSummary`)
//! becomes a convo compaction with that summary. `summary` records title the conversation.
//!
//! Sidechain lines (`isSidechain`, a subagent's work) become their own conversation, one per
//! subagent run, linked to the parent: kept in the parent they would interleave a second
//! dialogue into the parent's tool call, which no provider accepts and no reader can follow.

use std::collections::HashMap;

use serde_json::Value;

use super::{Builder, Conversation, Format, Imported, Report, arguments, jsonl_values, skip, text_of};
use crate::clock::Clock;
use crate::event::Kind;

pub fn parse(text: &str, clock: &Clock) -> Result<Imported, String> {
    let lines = jsonl_values(text)?;
    let looks_right = lines.iter().take(20).any(|l| {
        l.get("type").and_then(Value::as_str).is_some_and(|t| t == "user" || t == "assistant" || t == "summary")
            && (l.get("uuid").is_some() || l.get("leafUuid").is_some())
    });
    if !looks_right {
        return Err("no line with a Claude Code `type` and `uuid`".into());
    }
    // Sidechain runs are grouped by their first line: follow parents while they are sidechain.
    let parent: HashMap<String, (Option<String>, bool)> = lines
        .iter()
        .filter_map(|l| {
            let uuid = l.get("uuid")?.as_str()?.to_owned();
            let up = l.get("parentUuid").and_then(Value::as_str).map(str::to_owned);
            Some((uuid, (up, l.get("isSidechain") == Some(&Value::Bool(true)))))
        })
        .collect();
    let root = |uuid: &str| -> String {
        let mut uuid = uuid.to_owned();
        for _ in 0..100_000 {
            match parent.get(&uuid) {
                Some((Some(p), _)) if parent.get(p).is_some_and(|(_, side)| *side) => uuid = p.clone(),
                _ => break,
            }
        }
        uuid
    };

    let mut report = Report { records: lines.len(), ..Default::default() };
    let mut main = Builder::new(clock);
    let mut subagents: Vec<(String, Builder)> = Vec::new();
    let mut title = None;
    let mut boundary = false;
    for line in &lines {
        let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
        let uuid = line.get("uuid").and_then(Value::as_str);
        let ts = line.get("timestamp").and_then(Value::as_str);
        let sidechain = line.get("isSidechain") == Some(&Value::Bool(true));
        let builder = if sidechain {
            let key = root(uuid.unwrap_or(""));
            let index = match subagents.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    subagents.push((key, Builder::new(clock)));
                    subagents.len() - 1
                }
            };
            &mut subagents[index].1
        } else {
            &mut main
        };
        match kind {
            "summary" => {
                if title.is_none() {
                    title = line.get("summary").and_then(Value::as_str).map(str::to_owned);
                }
                skip(&mut report, "summary record (used as the title)");
            }
            "system" if line.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
                boundary = true;
                skip(&mut report, "compact boundary (becomes the compaction)");
            }
            "user" => {
                let message = line.get("message").cloned().unwrap_or_default();
                let content = message.get("content").cloned().unwrap_or_default();
                if line.get("isCompactSummary") == Some(&Value::Bool(true)) || (boundary && !sidechain) {
                    boundary = false;
                    if !builder.compaction(&mut report, &text_of(&content), "claude-code", ts) {
                        skip(&mut report, "compact summary with nothing before it");
                    }
                    continue;
                }
                user_line(builder, &mut report, &content, uuid, ts);
            }
            "assistant" => {
                let content = line.pointer("/message/content").cloned().unwrap_or_default();
                assistant_line(builder, &mut report, &content, uuid, ts);
            }
            "" => skip(&mut report, "line without a type"),
            other => skip(&mut report, format!("`{other}` record")),
        }
    }
    let mut conversations = vec![Conversation { title, drafts: main.drafts, parent: None }];
    for (i, (_, builder)) in subagents.into_iter().enumerate() {
        if builder.drafts.is_empty() {
            continue;
        }
        conversations.push(Conversation {
            title: Some(format!("subagent {}", i + 1)),
            drafts: builder.drafts,
            parent: Some(0),
        });
    }
    Ok(Imported { format: Format::ClaudeCode, conversations, report })
}

/// The id of the `n`th event made from one line.
fn part_id(uuid: Option<&str>, n: usize) -> Option<String> {
    uuid.map(|u| if n == 0 { u.to_owned() } else { format!("{u}.{n}") })
}

fn user_line(b: &mut Builder, report: &mut Report, content: &Value, uuid: Option<&str>, ts: Option<&str>) {
    let blocks = match content {
        Value::Array(blocks) => blocks.clone(),
        other => vec![serde_json::json!({"type": "text", "text": text_of(other)})],
    };
    let mut n = 0;
    let mut texts = Vec::new();
    for block in &blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(block.get("text").and_then(Value::as_str).unwrap_or("").to_owned()),
            Some("tool_result") => {
                let call_id = block.get("tool_use_id").and_then(Value::as_str).unwrap_or("").to_owned();
                let kind = Kind::ToolResult {
                    call_id,
                    content: text_of(block.get("content").unwrap_or(&Value::Null)),
                    is_error: block.get("is_error") == Some(&Value::Bool(true)),
                };
                if b.push(report, kind, part_id(uuid, n).as_deref(), ts) {
                    n += 1;
                } else {
                    skip(report, "tool result without its call");
                }
            }
            Some(other) => skip(report, format!("user `{other}` block")),
            None => skip(report, "user block without a type"),
        }
    }
    let text = texts.join("\n");
    if !text.trim().is_empty() {
        b.push(report, Kind::User { content: text }, part_id(uuid, n).as_deref(), ts);
    } else if n == 0 {
        skip(report, "empty user line");
    }
}

fn assistant_line(b: &mut Builder, report: &mut Report, content: &Value, uuid: Option<&str>, ts: Option<&str>) {
    let blocks = match content {
        Value::Array(blocks) => blocks.clone(),
        other => vec![serde_json::json!({"type": "text", "text": text_of(other)})],
    };
    for (n, block) in blocks.iter().enumerate() {
        let id = part_id(uuid, n);
        let kind = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                Kind::Assistant { content: block.get("text").and_then(Value::as_str).unwrap_or("").to_owned() }
            }
            Some("thinking") => {
                Kind::Reasoning { content: block.get("thinking").and_then(Value::as_str).unwrap_or("").to_owned() }
            }
            Some("tool_use") => Kind::ToolCall {
                call_id: block.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                name: block.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned(),
                arguments: arguments(block.get("input")),
            },
            Some(other) => {
                skip(report, format!("assistant `{other}` block"));
                continue;
            }
            None => {
                skip(report, "assistant block without a type");
                continue;
            }
        };
        b.push(report, kind, id.as_deref(), ts);
    }
}
