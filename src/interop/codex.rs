//! Codex CLI rollout JSONL: `{timestamp, type, payload}` records. `response_item`s are the
//! conversation; `event_msg`s repeat them for the UI and are skipped (counted); a
//! `compacted` record becomes a compaction with its summary. A `function_call`'s
//! `arguments` string that is not JSON is kept as a string. Codex writes no title: a
//! session is titled by its first user message that is not Codex's own (environment,
//! instructions); the first `session_meta` says where it ran (`cwd`, `git`).

use serde_json::Value;

use super::{
    Builder, EMIT_BATCH, Emit, Format, Imported, InteropError, Lines, Outcome, Place, Report, arguments, json_line,
    skip, text_of, title,
};
use crate::clock::Clock;
use crate::event::Kind;

pub fn parse(text: &str, clock: &Clock) -> Result<Imported, InteropError> {
    let mut drafts = Vec::new();
    let outcome = parse_lines(&mut super::text_lines(text), clock, &mut drafts)?;
    Ok(super::collected(outcome, drafts))
}

/// The events, emitted as they are made.
pub fn parse_lines(lines: Lines, clock: &Clock, emit: &mut dyn Emit) -> Result<Outcome, InteropError> {
    let mut report = Report::default();
    let mut b = Builder::new(clock);
    let mut recognised = false;
    let mut place = Place::default();
    let mut seen_meta = false;
    let mut first_prompt = None;
    for (i, line) in lines.enumerate() {
        let Some(line) = json_line(i + 1, &line?)? else { continue };
        report.records += 1;
        if line.get("payload").is_some() && line.get("type").is_some() {
            recognised = true;
        } else if !recognised && report.records >= 20 {
            return Err(InteropError::NotThisFormat("no `{timestamp, type, payload}` record"));
        }
        let ts = line.get("timestamp").and_then(Value::as_str);
        let payload = line.get("payload").cloned().unwrap_or_default();
        match line.get("type").and_then(Value::as_str).unwrap_or("") {
            "response_item" => {
                if first_prompt.is_none()
                    && payload.get("type").and_then(Value::as_str) == Some("message")
                    && payload.get("role").and_then(Value::as_str) == Some("user")
                {
                    first_prompt = title::from_prompt(&text_of(payload.get("content").unwrap_or(&Value::Null)));
                }
                response_item(&mut b, &mut report, &payload, ts)
            }
            // The first one is the session's; later ones describe subagents or forks.
            "session_meta" if !seen_meta => {
                seen_meta = true;
                place.cwd = Place::field(payload.get("cwd")).or(place.cwd);
                place.branch = Place::field(payload.pointer("/git/branch"));
                place.remote = Place::field(payload.pointer("/git/repository_url"));
                skip(&mut report, "`session_meta` record");
            }
            "turn_context" if place.cwd.is_none() => {
                place.cwd = Place::field(payload.get("cwd"));
                skip(&mut report, "`turn_context` record");
            }
            "compacted" => {
                let mut summary = payload.get("message").and_then(Value::as_str).unwrap_or("").to_owned();
                if summary.trim().is_empty() {
                    // The replacement history is what Codex sent instead: its messages are the summary.
                    summary = payload
                        .get("replacement_history")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
                        .map(|i| text_of(i.get("content").unwrap_or(&Value::Null)))
                        .filter(|t| !t.trim().is_empty())
                        .collect::<Vec<_>>()
                        .join("\n\n");
                }
                if !b.compaction(&mut report, &summary, "codex", ts) {
                    skip(&mut report, "compacted record with nothing to cover");
                }
            }
            "event_msg" => skip(&mut report, "event_msg (repeats a response item)"),
            "" => skip(&mut report, "record without a type"),
            other => skip(&mut report, format!("`{other}` record")),
        }
        if b.drafts.len() >= EMIT_BATCH {
            emit.drafts(0, b.take())?;
        }
    }
    if !recognised {
        return Err(InteropError::NotThisFormat("no `{timestamp, type, payload}` record"));
    }
    emit.drafts(0, b.take())?;
    Ok(Outcome { format: Format::Codex, conversations: vec![(first_prompt, None)], report, place })
}

fn response_item(b: &mut Builder, report: &mut Report, p: &Value, ts: Option<&str>) {
    let id = p.get("id").and_then(Value::as_str);
    let call_id = || p.get("call_id").and_then(Value::as_str).unwrap_or("").to_owned();
    let name = || p.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
    let kind = match p.get("type").and_then(Value::as_str).unwrap_or("") {
        "message" => {
            let content = text_of(p.get("content").unwrap_or(&Value::Null));
            match p.get("role").and_then(Value::as_str) {
                Some("user") => Kind::User { content },
                Some("assistant") => Kind::Assistant { content },
                Some("system") | Some("developer") => Kind::System { content },
                _ => {
                    skip(report, "message with an unknown role");
                    return;
                }
            }
        }
        "agent_message" => Kind::Assistant { content: text_of(p.get("content").unwrap_or(&Value::Null)) },
        "reasoning" => {
            let summary = text_of(p.get("summary").unwrap_or(&Value::Null));
            let content = text_of(p.get("content").unwrap_or(&Value::Null));
            Kind::Reasoning { content: if content.is_empty() { summary } else { content } }
        }
        "function_call" => {
            Kind::ToolCall { call_id: call_id(), name: name(), arguments: arguments(p.get("arguments")) }
        }
        "custom_tool_call" => Kind::ToolCall { call_id: call_id(), name: name(), arguments: arguments(p.get("input")) },
        "tool_search_call" => {
            Kind::ToolCall { call_id: call_id(), name: "tool_search".into(), arguments: arguments(p.get("arguments")) }
        }
        "function_call_output" | "custom_tool_call_output" => {
            let output = p.get("output").cloned().unwrap_or_default();
            let content = match &output {
                Value::Object(o) => {
                    o.get("text").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| output.to_string())
                }
                other => text_of(other),
            };
            Kind::ToolResult { call_id: call_id(), content, is_error: false }
        }
        "tool_search_output" => Kind::ToolResult {
            call_id: call_id(),
            content: p.get("tools").map(Value::to_string).unwrap_or_default(),
            is_error: false,
        },
        other => {
            skip(report, format!("response item `{other}`"));
            return;
        }
    };
    if !b.push(report, kind, id, ts) {
        skip(report, "tool result without its call");
    }
}
